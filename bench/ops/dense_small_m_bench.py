#!/usr/bin/env python3
# Batch-1/8 dense layers (issue 12): an ONNX MatMul x[M, K] @ W[K, N] and a Gemm(transB=1)
# x[M, K] @ W[N, K]^T, W an initializer in both (a constant weight, as in a model), for
# M in {1, 8} and N, K in {384, 1536, 4096}; Anvil against ONNX Runtime (MLAS) in the same
# process, 1 thread each, the engines taking turns per repeat. Outputs are checked first against
# numpy float64 (rtol 1e-4 of the |x|·|W| scale). The figure is the median over --runs repeats of
# the per-call time (each repeat runs calls until --min-ms passed; Python call overhead is in both
# engines' figures, a few microseconds: it dominates the 384 x 384 cells).
# Prints a table, the load average, and as the last line
#   {"bench": "dense_small_m", "rows": [{"op", "m", "n", "k", "anvil_us", "ort_us", "ratio"}, ...]}
# ratio = ORT time / Anvil time (> 1: Anvil faster). The machine may be shared: compare ratios.
#
#   source scripts/env.sh && python3 bench/ops/dense_small_m_bench.py [--runs 7] [--op matmul|gemm] [--m 1]
"""Small-M dense layers with a constant weight: Anvil vs ONNX Runtime, 1 thread."""
import argparse
import json
import os
import sys

os.environ.setdefault("ANVIL_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import per_call_ms  # noqa: E402

SIZES = [384, 1536, 4096]


def model(op, m, n, k, w):
    import onnx
    h = onnx.helper
    node = h.make_node("MatMul", ["x", "w"], ["y"]) if op == "matmul" else \
        h.make_node("Gemm", ["x", "w"], ["y"], transB=1)
    g = h.make_graph([node], op, [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [m, k])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [m, n])],
                     initializer=[onnx.numpy_helper.from_array(w, "w")])
    md = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    md.ir_version = 8
    return md


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=40.0)
    ap.add_argument("--op", choices=["matmul", "gemm"])
    ap.add_argument("--m", type=int, choices=[1, 8])
    args = ap.parse_args()
    import anvil
    import onnxruntime as ort
    rng = np.random.default_rng(20261202)
    la = os.getloadavg()
    print(f"{os.cpu_count()} cpus, load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; 1 thread per engine")
    print(f"{'op':7} {'M':>2} {'N':>5} {'K':>5} {'anvil us':>10} {'ort us':>10} {'ort/anvil':>9}")
    rows = []
    for op in ["matmul", "gemm"]:
        if args.op and op != args.op:
            continue
        for m in [1, 8]:
            if args.m and m != args.m:
                continue
            for n in SIZES:
                for k in SIZES:
                    w = rng.uniform(-1, 1, size=(k, n) if op == "matmul" else (n, k)).astype(np.float32)
                    x = rng.uniform(-1, 1, size=(m, k)).astype(np.float32)
                    md = model(op, m, n, k, w)
                    so = ort.SessionOptions()
                    so.intra_op_num_threads = 1
                    so.inter_op_num_threads = 1
                    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                    sess = ort.InferenceSession(md.SerializeToString(), so, providers=["CPUExecutionProvider"])
                    exe = anvil.compile(anvil.frontend.from_onnx(md), "llvm")
                    fn = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"]
                    wk = w.astype(np.float64) if op == "matmul" else w.astype(np.float64).T
                    ref = x.astype(np.float64) @ wk
                    scale = np.abs(x).astype(np.float64) @ np.abs(wk)
                    got = fn(x).numpy()
                    ok = bool(np.all(np.abs(got - ref) <= 1e-4 * scale + 1e-6))
                    ok_o = bool(np.all(np.abs(sess.run(None, {"x": x})[0] - ref) <= 1e-4 * scale + 1e-6))
                    feed = {"x": x}
                    run_a, run_o = (lambda: fn(x)), (lambda: sess.run(None, feed))
                    run_a(), run_o()
                    ta, to = [], []
                    for _ in range(args.runs):
                        ta.append(per_call_ms(run_a, 1, args.min_ms) * 1e3)
                        to.append(per_call_ms(run_o, 1, args.min_ms) * 1e3)
                    a, o = float(np.median(ta)), float(np.median(to))
                    flag = "" if ok and ok_o else ("  WRONG anvil" if not ok else "  WRONG ort")
                    print(f"{op:7} {m:>2} {n:>5} {k:>5} {a:10.1f} {o:10.1f} {o / a:9.2f}{flag}", flush=True)
                    rows.append({"op": op, "m": m, "n": n, "k": k, "anvil_us": round(a, 2), "ort_us": round(o, 2),
                                 "ratio": round(o / a, 3), "correct": ok})
    ratios = [r["ratio"] for r in rows]
    if ratios:
        print(f"geomean ort/anvil {float(np.exp(np.mean(np.log(ratios)))):.2f}; min {min(ratios):.2f}")
    print(json.dumps({"bench": "dense_small_m", "rows": rows}))


if __name__ == "__main__":
    main()
