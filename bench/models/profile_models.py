#!/usr/bin/env python3
# Where the time goes (issue 11): per model, Anvil's VM profiler (the per-kernel table of
# `anvil run --profile`) beside ONNX Runtime's profiler (enable_profiling: one trace event per node
# run), at --batch (default 1) on the same thread count, summed over --runs runs after warm-up and divided
# by the run count. Prints each engine's top kernels / nodes and the share of time per operator
# family ("conv", "matmul", "pool", ...), the comparison the two engines have in common: Anvil's
# kernels are fused groups named after their ops, ORT's are single nodes of an op type.
#
#   source scripts/env.sh && python3 bench/models/profile_models.py [--models mobilenetv2,...] [--top 10]
"""Per-kernel profiles: Anvil's VM profiler against ONNX Runtime's node profiler."""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "models"))
sys.path.insert(0, str(ROOT.parent / "tests" / "models"))

import bench_models  # noqa: E402  (model files and inputs, as the latency benchmark uses them)

# Operator family of an ORT op type or an Anvil kernel name (first matching word wins).
FAMILIES = [
    ("conv", ("conv",)),
    ("matmul", ("matmul", "gemm", "dense", "batch_matmul")),
    ("pool", ("pool",)),
    ("norm", ("norm", "softmax")),
    ("reduce", ("reduce", "sum", "mean", "max", "min", "argmax")),
    ("layout", ("transpose", "reshape", "concat", "split", "slice", "gather", "pad", "resize", "expand", "copy",
                "squeeze", "flatten", "tile", "layout")),
]

WORKER = r"""
import glob, json, os, sys
import numpy as np
engine, model, inputs_path, threads, warmup, runs = sys.argv[1:7]
threads, warmup, runs = int(threads), int(warmup), int(runs)
data = np.load(inputs_path)
feed = {k: data[k] for k in data.files}
totals = {}
if engine == "ort":
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    for _ in range(warmup):
        sess.run(None, feed)
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(os.path.dirname(inputs_path), "ort_profile")
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    for _ in range(warmup + runs):
        sess.run(None, feed)
    trace = json.load(open(sess.end_profiling()))
    # Node events: name "<node>_kernel_time", args.op_name; the first warm-up runs are skipped.
    events = [e for e in trace if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")]
    per_run = len(events) // (warmup + runs)
    for e in events[per_run * warmup:]:
        shapes = "; ".join(",".join(str(d) for d in list(t.values())[0]) for t in e["args"].get("input_type_shape", [])
                           if t and list(t.values())[0])
        key = (e["args"].get("op_name", "?"), e["name"][: -len("_kernel_time")], "[" + shapes + "]")
        totals.setdefault(key, 0.0)
        totals[key] += e["dur"]
else:
    import anvil
    from anvil import runtime
    vm = runtime.VirtualMachine(runtime.load_module(model), anvil.cpu())
    args = [feed[n] for n in json.loads(sys.argv[7])]
    for _ in range(warmup):
        vm["main"](*args)
    for _ in range(runs):
        for row in vm.profile("main", *args).rows:
            key = (row["name"], row["call_site"], row.get("argument_shapes", ""))
            totals.setdefault(key, 0.0)
            totals[key] += row["total_us"]
print(json.dumps([[k[0], k[1], k[2], v / runs] for k, v in totals.items()]))
"""


def family(name):
    low = name.lower()
    for fam, words in FAMILIES:
        if any(w in low for w in words):
            return fam
    return "elementwise"


def profile(engine, model, inputs_path, threads, warmup, runs, input_names):
    env = dict(os.environ, ANVIL_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", WORKER, engine, model, inputs_path, str(threads), str(warmup),
                          str(runs), json.dumps(input_names)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{engine} on {model}: {out.stderr.strip()[-2000:]}")
    return [tuple(r) for r in json.loads(out.stdout.strip().splitlines()[-1])]


def summarize(rows):
    """(total us per run, top (kernel with its argument shapes) by time, {family: us})."""
    by_kernel = collections.Counter()
    fams = collections.Counter()
    for name, _, shapes, us in rows:
        by_kernel[f"{name} {shapes}"] += us
        fams[family(name)] += us
    return sum(by_kernel.values()), by_kernel.most_common(), fams


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", default=",".join(bench_models.MODELS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--batch", type=int, default=1)
    args = ap.parse_args()
    import numpy as np
    import anvil
    from anvil import frontend

    print(f"load average {os.getloadavg()[0]:.2f}; {args.threads} thread(s); batch {args.batch}; "
          f"mean over {args.runs} runs")
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            path, input_names, feed = bench_models.model_file(name, tmp, args.batch)
            inputs_path = os.path.join(tmp, f"{name}_inputs.npz")
            np.savez(inputs_path, **feed)
            lib = os.path.join(tmp, f"{name}.so")
            anvil.compile(frontend.from_onnx(path, shape={k: v.shape for k, v in feed.items()}),
                          target="llvm").export_library(lib)
            results = {}
            for engine, model in (("anvil", lib), ("ort", path)):
                results[engine] = summarize(profile(engine, model, inputs_path, args.threads, args.warmup, args.runs,
                                                    input_names))
            print(f"\n== {name}")
            for engine in ("anvil", "ort"):
                total, top, _ = results[engine]
                print(f"{engine}: {total / 1e3:.2f} ms in kernels per run; top {args.top}:")
                for kernel, us in top[: args.top]:
                    print(f"  {us / 1e3:8.3f} ms {100 * us / total:5.1f} %  {kernel[:150]}")
            fams = sorted(set(results["anvil"][2]) | set(results["ort"][2]),
                          key=lambda f: -results["anvil"][2].get(f, 0))
            print(f"{'family':<12} {'anvil ms':>9} {'ort ms':>9} {'ratio':>6}")
            row = {"model": name, "threads": args.threads, "batch": args.batch, "families": {}}
            for f in fams:
                a, o = results["anvil"][2].get(f, 0) / 1e3, results["ort"][2].get(f, 0) / 1e3
                print(f"{f:<12} {a:9.3f} {o:9.3f} {a / o if o else float('inf'):6.2f}")
                row["families"][f] = {"anvil_ms": round(a, 3), "ort_ms": round(o, 3)}
            row["anvil_top"] = [[k, round(us / 1e3, 3)] for k, us in results["anvil"][1][: args.top]]
            row["ort_top"] = [[k, round(us / 1e3, 3)] for k, us in results["ort"][1][: args.top]]
            summary.append(row)
    print(json.dumps({"bench": "model_profiles", "rows": summary}))


if __name__ == "__main__":
    main()
