#!/usr/bin/env python3
# Batch-1 latency of the end-to-end models, Anvil against ONNX Runtime side by side (issue 11):
# ResNet-18, MobileNetV2, the MiniLM-style encoder (tests/models/make_models.py, seeded random
# weights) and PP-OCRv4 detection and recognition (real weights, from rapidocr-onnxruntime).
# Per model: Anvil's compile time (and ORT's session creation, its graph optimisation, beside
# Anvil's library load), then for 1 and 2 threads each engine in its own fresh
# process (so peak RSS is that engine's alone) — warm-up runs, then the median of --runs timed
# runs. ORT: intra_op_num_threads = threads, sequential execution. Anvil: ANVIL_NUM_THREADS.
# Peak RSS also for the C++ runtime-only runner (examples/runtime_only/run_model.cc: the library
# on libanvil_runtime alone, what a deployment pays; the Python worker's `import anvil` loads the
# compiler and LLVM too, about 55 MB resident before any model), when it is on PATH.
# Prints a table, the load average, and as the last line the JSON summary
#   {"bench": "models", "rows": [{"model", "batch", "threads", "anvil_ms", "ort_ms", "ratio"}, ...], ...}
#
#   source scripts/env.sh && python3 bench/models/bench_models.py [--models resnet18,...] [--runs 20]
"""Model latency, compile time and peak RSS: Anvil vs ONNX Runtime."""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "models"))

MODELS = ["resnet18", "mobilenetv2", "minilm", "ocr_det", "ocr_rec"]

# One engine, one process: load, warm up, time; prints one JSON line.
WORKER = r"""
import json, os, sys, time
import numpy as np
engine, model, inputs_path, threads, warmup, runs = sys.argv[1:7]
threads, warmup, runs = int(threads), int(warmup), int(runs)
data = np.load(inputs_path)
feed = {k: data[k] for k in data.files}
t_load = time.perf_counter()
if engine == "ort":
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    run = lambda: sess.run(None, feed)
else:
    import anvil
    from anvil import runtime
    lib = runtime.load_module(model)
    vm = runtime.VirtualMachine(lib, anvil.cpu())
    args = [feed[n] for n in json.loads(sys.argv[7])]
    main = vm["main"]
    run = lambda: main(*args)
load_s = time.perf_counter() - t_load  # both with the Python package import; ORT: + session creation, Anvil: + load + VM
for _ in range(warmup):
    run()
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    run()
    times.append((time.perf_counter() - t0) * 1e3)
times.sort()
# VmHWM is this process's own peak (ru_maxrss would include the parent's size at fork).
hwm_kb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"median_ms": times[len(times) // 2], "min_ms": times[0], "peak_rss_mb": hwm_kb / 1024,
                  "load_s": load_s}))
"""


# The runtime-only runner's peak RSS: a small Python process spawns it and reads its children's
# ru_maxrss (no copy of this big process is made, so the figure is the runner's own).
RUNTIME_ONLY = r"""
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def runtime_only_rss(lib, params_path, threads, outdir):
    """Peak RSS (MB) of anvil_runtime_only_run_model on the library, or None without it."""
    runner = shutil.which("anvil_runtime_only_run_model")
    if runner is None:
        return None
    env = dict(os.environ, ANVIL_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", RUNTIME_ONLY, runner, lib, params_path,
                          os.path.join(outdir, "runtime_only_out.params")], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"runtime-only runner on {lib}: {out.stderr.strip()[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def model_file(name, outdir):
    """(path, input names in order, {name: array} at batch 1)."""
    import numpy as np
    import onnx
    rng = np.random.default_rng(0)
    if name.startswith("ocr_"):
        import real_models
        path = real_models.det_model_path() if name == "ocr_det" else real_models.rec_model_path()
        feed = real_models.det_input(1) if name == "ocr_det" else real_models.rec_input(1)
        return str(path), ["x"], feed
    import make_models
    path = make_models.save(name, outdir)
    feed = make_models.random_inputs(name, 1, rng)
    names = [i.name for i in onnx.load(str(path), load_external_data=False).graph.input]
    return str(path), [n for n in names if n in feed], feed


def worker(engine, model, inputs_path, threads, warmup, runs, input_names):
    env = dict(os.environ, ANVIL_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", WORKER, engine, model, inputs_path, str(threads), str(warmup),
                          str(runs), json.dumps(input_names)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{engine} on {model}: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    import numpy as np
    import anvil
    from anvil import frontend

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus; "
          f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    rows, compile_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            path, input_names, feed = model_file(name, tmp)
            inputs_path = os.path.join(tmp, f"{name}_inputs.npz")
            np.savez(inputs_path, **feed)
            params_path = os.path.join(tmp, f"{name}_inputs.params")
            with open(params_path, "wb") as f:
                f.write(anvil.runtime.save_params({n: anvil.tensor(np.ascontiguousarray(feed[n])) for n in input_names}))
            shapes = {k: v.shape for k, v in feed.items()}
            t0 = time.perf_counter()
            mod = frontend.from_onnx(path, shape=shapes)
            exe = anvil.compile(mod, target="llvm")
            lib = os.path.join(tmp, f"{name}.so")
            exe.export_library(lib)
            compile_s = time.perf_counter() - t0
            compile_rows.append({"model": name, "compile_s": round(compile_s, 2)})
            print(f"{name}: compiled in {compile_s:.1f} s")
            for threads in [int(t) for t in args.threads.split(",")]:
                a = worker("anvil", lib, inputs_path, threads, args.warmup, args.runs, input_names)
                o = worker("ort", path, inputs_path, threads, args.warmup, args.runs, input_names)
                rt = runtime_only_rss(lib, params_path, threads, tmp)
                rows.append({"model": name, "batch": 1, "threads": threads, "anvil_ms": round(a["median_ms"], 3),
                             "ort_ms": round(o["median_ms"], 3), "ratio": round(a["median_ms"] / o["median_ms"], 3),
                             "anvil_rss_mb": round(a["peak_rss_mb"], 1), "ort_rss_mb": round(o["peak_rss_mb"], 1),
                             "anvil_runtime_only_rss_mb": None if rt is None else round(rt, 1)})
                if threads == int(args.threads.split(",")[0]):
                    compile_rows[-1].update({"anvil_load_s": round(a["load_s"], 3), "ort_session_s": round(o["load_s"], 3)})
    print(f"\n{'model':<12} {'batch':>5} {'thr':>3} {'anvil ms':>10} {'ort ms':>10} {'ratio':>7} "
          f"{'anvil MB':>9} {'ort MB':>8} {'rt-only MB':>10}")
    for r in rows:
        print(f"{r['model']:<12} {r['batch']:>5} {r['threads']:>3} {r['anvil_ms']:>10.3f} {r['ort_ms']:>10.3f} "
              f"{r['ratio']:>7.3f} {r['anvil_rss_mb']:>9.1f} {r['ort_rss_mb']:>8.1f} "
              f"{'-' if r['anvil_runtime_only_rss_mb'] is None else format(r['anvil_runtime_only_rss_mb'], '.1f'):>10}")
    for c in compile_rows:
        print(f"compile {c['model']}: Anvil {c['compile_s']} s (import to library; then import + load + VM "
              f"{c.get('anvil_load_s', float('nan'))} s), ONNX Runtime import + session creation {c.get('ort_session_s', float('nan'))} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps({"bench": "models", "rows": rows, "compile": compile_rows}))


if __name__ == "__main__":
    main()
