# The engines bench_models.py times, each in its own fresh process (so a peak RSS is that engine's
# alone and no two runtimes share an address space): Anvil, ONNX Runtime, OpenVINO (pip
# `openvino`, when installed) and Apache TVM untuned (pip `apache-tvm`, Relax ONNX frontend,
# default pipeline; a reference column only).
#
# Per engine: ORT intra_op_num_threads = threads, sequential execution; Anvil ANVIL_NUM_THREADS;
# OpenVINO INFERENCE_NUM_THREADS = threads with INFERENCE_PRECISION_HINT=f32 (its CPU default is
# bf16 where the CPU has it: faster but off by up to tens of percent) and the LATENCY hint, the
# model reshaped to the fed shapes (static, as Anvil compiles it); TVM TVM_NUM_THREADS, a library
# compiled once per shape by `tvm_compile` for the host CPU (the llvm target with mcpu = LLVM's
# host CPU name; a bare "llvm" would be generic x86-64 without vector extensions).
"""Worker processes for the model benchmark: one engine, one model, one thread count."""
import importlib.util
import json
import os
import subprocess
import sys

# One engine, one process: load, warm up, time; prints one JSON line. With a budget > 0 the timed
# loop stops once that many seconds have passed (after at least one run): TVM's untuned code is
# tens of times slower than the others. With an output path the first run's outputs are saved.
WORKER = r"""
import json, os, sys, time
import numpy as np
engine, model, inputs_path, threads, warmup, runs = sys.argv[1:7]
input_names, budget_s, out_path = json.loads(sys.argv[7]), float(sys.argv[8]), sys.argv[9]
threads, warmup, runs = int(threads), int(warmup), int(runs)
data = np.load(inputs_path)
feed = {k: data[k] for k in data.files}
info = {}
t_load = time.perf_counter()
if engine == "ort":
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    run = lambda: sess.run(None, feed)
elif engine == "openvino":
    import openvino as ov
    core = ov.Core()
    m = core.read_model(model)
    m.reshape({n: list(feed[n].shape) for n in input_names})
    compiled = core.compile_model(m, "CPU", {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32",
                                             "PERFORMANCE_HINT": "LATENCY"})
    # What it really runs with (the hint is a request): reported beside the time.
    precision = compiled.get_property("INFERENCE_PRECISION_HINT")
    info = {"precision": precision.get_type_name() if hasattr(precision, "get_type_name") else str(precision),
            "threads": int(compiled.get_property("INFERENCE_NUM_THREADS")), "version": ov.__version__}
    req = compiled.create_infer_request()
    ov_feed = {n: feed[n] for n in input_names}
    run = lambda: [req.infer(ov_feed, share_inputs=True)[o] for o in compiled.outputs]
elif engine == "tvm":
    import tvm
    from tvm import relax
    vm = relax.VirtualMachine(tvm.runtime.load_module(model), tvm.cpu())
    targs = [tvm.runtime.tensor(np.ascontiguousarray(feed[n])) for n in input_names]
    main = vm["main"]
    run = lambda: main(*targs)
else:
    import anvil
    from anvil import runtime
    lib = runtime.load_module(model)
    vm = runtime.VirtualMachine(lib, anvil.cpu())
    args = [feed[n] for n in input_names]
    main = vm["main"]
    run = lambda: main(*args)
load_s = time.perf_counter() - t_load  # with the Python package import; ORT: + session creation, Anvil: + load + VM


def arrays(result):
    items = list(result.values()) if isinstance(result, dict) else result
    if not isinstance(items, (list, tuple)) and type(items).__name__ not in ("Array", "tuple"):
        items = [items]
    return [np.asarray(r.numpy() if hasattr(r, "numpy") else r) for r in items]


first = None
for i in range(warmup):
    r = run()
    if i == 0:
        first = arrays(r)
times = []
t_start = time.perf_counter()
for _ in range(runs):
    t0 = time.perf_counter()
    r = run()
    times.append((time.perf_counter() - t0) * 1e3)
    if first is None:
        first = arrays(r)
    if budget_s > 0 and time.perf_counter() - t_start > budget_s:
        break
times.sort()
if out_path and first is not None:
    np.savez(out_path, *first)
# VmHWM is this process's own peak (ru_maxrss would include the parent's size at fork).
hwm_kb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"median_ms": times[len(times) // 2], "min_ms": times[0], "runs": len(times),
                  "peak_rss_mb": hwm_kb / 1024, "load_s": load_s, **info}))
"""

# TVM's compile in its own process (TVM brings its own LLVM; Anvil's parent process has libLLVM-16
# loaded): ONNX import with the fed shapes, tvm.compile with the default Relax pipeline, export.
TVM_COMPILE = r"""
import json, sys, time
import onnx, tvm
from tvm.relax.frontend.onnx import from_onnx
from tvm.target import codegen
model, shapes, lib = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
t0 = time.perf_counter()
mod = from_onnx(onnx.load(model), shape_dict=shapes)
t1 = time.perf_counter()
target = tvm.target.Target({"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu()})
tvm.compile(mod, target=target).export_library(lib)
t2 = time.perf_counter()
print(json.dumps({"compile_s": t2 - t0, "import_s": t1 - t0, "version": tvm.__version__,
                  "mcpu": codegen.llvm_get_system_cpu()}))
"""


def available(module):
    """Whether `module` can be imported here (looked up without importing it into this process)."""
    return importlib.util.find_spec(module) is not None


def version(module, dist=None):
    """The installed version of a package (its distribution name `dist`, default `module`), or None."""
    import importlib.metadata
    try:
        return importlib.metadata.version(dist or module)
    except importlib.metadata.PackageNotFoundError:
        return None


def tvm_version():
    return version("tvm", "apache-tvm")


def _env(threads):
    return dict(os.environ, ANVIL_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                TVM_NUM_THREADS=str(threads))


def _last_json(out, what):
    if out.returncode != 0:
        raise RuntimeError(f"{what}: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def worker(engine, model, inputs_path, threads, warmup, runs, input_names, budget_s=0.0, out_path=""):
    """One engine's timing in a fresh process: {median_ms, min_ms, runs, peak_rss_mb, load_s, ...}."""
    out = subprocess.run([sys.executable, "-c", WORKER, engine, model, inputs_path, str(threads), str(warmup),
                          str(runs), json.dumps(input_names), str(budget_s), out_path],
                         env=_env(threads), capture_output=True, text=True)
    return _last_json(out, f"{engine} on {model}")


def error_line(text):
    """The line of a traceback that says what failed (TVM prints warnings after it)."""
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    errors = [l for l in lines if "Error" in l or "error:" in l]
    return (errors or lines or ["(no output)"])[-1]


def fold_for_tvm(model, shapes, out_path):
    """`model` with its inputs pinned to `shapes` and ONNX Runtime's basic (ONNX-op-only) graph
    optimisation applied: shape sub-graphs folded into constants. TVM's Relax frontend refuses a
    Reshape whose target shape is computed (PP-OCRv4 recognition); the folded graph computes the same."""
    import onnx
    import onnxruntime as ort
    m = onnx.load(model)
    for inp in m.graph.input:
        if inp.name in shapes:
            for d, v in zip(inp.type.tensor_type.shape.dim, shapes[inp.name]):
                d.ClearField("dim_param")
                d.dim_value = int(v)
    pinned = out_path + ".pinned.onnx"
    onnx.save(m, pinned)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = out_path
    ort.InferenceSession(pinned, so, providers=["CPUExecutionProvider"])
    return out_path


def tvm_compile(model, shapes, lib):
    """Compile `model` with TVM (untuned, default pipeline) into `lib`: {compile_s, import_s, version, mcpu,
    input}. When TVM's frontend refuses the graph, retries once on fold_for_tvm's copy (input "folded")."""
    def attempt(path):
        return subprocess.run([sys.executable, "-c", TVM_COMPILE, path, json.dumps(shapes), lib],
                              env=_env(1), capture_output=True, text=True)
    out = attempt(model)
    if out.returncode == 0:
        return {**_last_json(out, "tvm compile"), "input": "original"}
    first = error_line(out.stderr)
    out = attempt(fold_for_tvm(model, shapes, lib + ".folded.onnx"))
    if out.returncode != 0:
        raise RuntimeError(f"tvm compile of {model}: {first}; on the folded graph: {error_line(out.stderr)}")
    return {**_last_json(out, "tvm compile"),
            "input": f"graph folded by ORT's basic optimisation; original refused: {first[:160]}"}


def max_error(path, reference_path):
    """Largest |out - ref| over the outputs, relative to the reference's largest |value|; None if unmatched."""
    import numpy as np
    a, b = np.load(path), np.load(reference_path)
    if len(a.files) != len(b.files):
        return None
    worst = 0.0
    for ka, kb in zip(a.files, b.files):
        x, y = a[ka].astype(np.float64), b[kb].astype(np.float64)
        if x.shape != y.shape:
            return None
        scale = max(float(np.abs(y).max()) if y.size else 0.0, 1e-30)
        worst = max(worst, float(np.abs(x - y).max()) / scale if y.size else 0.0)
    return worst
