#!/usr/bin/env python3
# TopK and CumSum kernels, Anvil against ONNX Runtime in the same process, 1 thread: one ONNX
# node per shape (k / axis as initializers, so both engines see constants), the same input,
# outputs compared first (TopK values and indices exactly, CumSum to 1e-4 relative), then per
# engine --runs repeats of calls until --min-ms passed; the figure is the median per-call time
# (Python call overhead included for both engines: it dominates the smallest shapes).
# Prints a table, the load average, and as the last line
#   {"bench": "topk_cumsum", "rows": [{"op", "case", "anvil_ms", "ort_ms", "ratio"}, ...]}
#
#   source scripts/env.sh && python3 bench/ops/topk_cumsum_bench.py [--runs 7] [--only topk|cumsum]
"""TopK and CumSum: Anvil vs ONNX Runtime, 1 thread."""
import argparse
import json
import os
import sys

os.environ.setdefault("ANVIL_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import per_call_ms  # noqa: E402

# (shape, k, axis, largest)
TOPK = [((1, 1000), 5, -1, 1), ((8, 50000), 10, -1, 1), ((1, 4096), 100, -1, 1), ((64, 32000), 10, -1, 1),
        ((16, 1000, 8), 5, 1, 1), ((32, 256), 256, -1, 0), ((8, 4096), 1, -1, 1)]
# (shape, axis, exclusive, reverse)
CUMSUM = [((8, 4096), -1, 0, 0), ((8, 4096), -1, 1, 1), ((1, 100000), -1, 0, 0), ((4096, 64), 0, 0, 0),
          ((16, 512, 64), 1, 0, 0), ((64, 1000), 0, 1, 0)]


def topk_model(shape, k, axis, largest):
    import onnx
    h = onnx.helper
    node = h.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest, sorted=1)
    out_shape = list(shape)
    out_shape[axis] = k
    g = h.make_graph([node], "topk", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(shape))],
                     [h.make_tensor_value_info("v", onnx.TensorProto.FLOAT, out_shape),
                      h.make_tensor_value_info("i", onnx.TensorProto.INT64, out_shape)],
                     initializer=[onnx.numpy_helper.from_array(np.array([k], np.int64), "k")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def cumsum_model(shape, axis, exclusive, reverse):
    import onnx
    h = onnx.helper
    node = h.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)
    g = h.make_graph([node], "cumsum", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(shape))],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, list(shape))],
                     initializer=[onnx.numpy_helper.from_array(np.array(axis, np.int64), "axis")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def engines(model, x):
    import anvil
    import onnxruntime as ort
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feed = {"x": x}
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    main = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"]

    def anvil_outs():
        got = main(x)
        got = got if isinstance(got, (list, tuple)) else [got]
        return [g.numpy() if hasattr(g, "numpy") else np.asarray(g) for g in got]

    return (lambda: main(x)), (lambda: sess.run(None, feed)), anvil_outs, (lambda: sess.run(None, feed))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=30.0)
    ap.add_argument("--only", choices=["topk", "cumsum"])
    args = ap.parse_args()
    rng = np.random.default_rng(20261202)
    la = os.getloadavg()
    print(f"{os.cpu_count()} cpus, load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; 1 thread per engine")
    cases = []
    if args.only != "cumsum":
        for shape, k, axis, largest in TOPK:
            cases.append(("topk", f"{list(shape)} k={k} axis={axis}{'' if largest else ' smallest'}",
                          topk_model(shape, k, axis, largest), shape))
    if args.only != "topk":
        for shape, axis, exclusive, reverse in CUMSUM:
            flags = (" exclusive" if exclusive else "") + (" reverse" if reverse else "")
            cases.append(("cumsum", f"{list(shape)} axis={axis}{flags}", cumsum_model(shape, axis, exclusive, reverse),
                          shape))
    rows = []
    for op, case, model, shape in cases:
        # Integers in a small range: TopK sees ties (index order matters), CumSum sums exactly.
        x = rng.integers(-50, 50, size=shape).astype(np.float32) if op == "topk" else \
            rng.uniform(-1, 1, size=shape).astype(np.float32)
        run_a, run_o, outs_a, outs_o = engines(model, x)
        a, o = outs_a(), outs_o()
        if op == "topk":
            ok = np.array_equal(a[0], o[0]) and np.array_equal(a[1], o[1])
        else:
            ok = np.allclose(a[0], o[0], rtol=1e-4, atol=1e-4 * np.sqrt(x.size))
        ta = per_call_ms(run_a, args.runs, args.min_ms)
        to = per_call_ms(run_o, args.runs, args.min_ms)
        rows.append({"op": op, "case": case, "anvil_ms": round(ta, 4), "ort_ms": round(to, 4),
                     "ratio": round(ta / to, 2), "same_result": bool(ok)})
        print(f"{op:<7} {case:<36} anvil {ta:9.4f} ms  ort {to:9.4f} ms  ratio {ta / to:6.2f}"
              f"{'' if ok else '  RESULTS DIFFER'}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps({"bench": "topk_cumsum", "threads": 1, "rows": rows}))


if __name__ == "__main__":
    main()
