#!/usr/bin/env python3
# Softmax over the last axis (attention scores), Anvil against ONNX Runtime in the same process,
# 1 thread: one ONNX Softmax node per case, static or with symbolic (batch, seq) dims run at a
# given size, outputs compared first (rtol 1e-5), then per engine --runs repeats of calls until
# --min-ms passed; the figure is the median per-call time (Python call overhead included for both).
#
#   source scripts/env.sh && python3 bench/ops/softmax_bench.py [--runs 7]
"""Softmax: Anvil vs ONNX Runtime, 1 thread."""
import argparse
import json
import os
import sys

os.environ.setdefault("ANVIL_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import per_call_ms  # noqa: E402
from topk_cumsum_bench import engines  # noqa: E402

# (name, declared input shape, run shape)
CASES = [("static 128", [1, 12, 128, 128], (1, 12, 128, 128)),
         ("symbolic b,s at 128", ["b", 12, "s", "s"], (1, 12, 128, 128)),
         ("static 100", [1, 12, 100, 100], (1, 12, 100, 100)),
         ("symbolic b,s at 100", ["b", 12, "s", "s"], (1, 12, 100, 100))]


def softmax_model(shape):
    import onnx
    h = onnx.helper
    node = h.make_node("Softmax", ["x"], ["y"], axis=-1)
    g = h.make_graph([node], "softmax", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, shape)],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, shape)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=30.0)
    args = ap.parse_args()
    rng = np.random.default_rng(20261202)
    la = os.getloadavg()
    print(f"{os.cpu_count()} cpus, load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; 1 thread per engine")
    rows = []
    for case, decl, shape in CASES:
        x = rng.standard_normal(shape).astype(np.float32) * 4
        run_a, run_o, outs_a, outs_o = engines(softmax_model(decl), x)
        ok = np.allclose(outs_a()[0], outs_o()[0], rtol=1e-5, atol=1e-7)
        ta = per_call_ms(run_a, args.runs, args.min_ms)
        to = per_call_ms(run_o, args.runs, args.min_ms)
        rows.append({"case": case, "shape": list(shape), "anvil_ms": round(ta, 4), "ort_ms": round(to, 4),
                     "ratio": round(ta / to, 2), "same_result": bool(ok)})
        print(f"{case:<22} {str(list(shape)):<18} anvil {ta:8.4f} ms  ort {to:8.4f} ms  ratio {ta / to:6.2f}"
              f"{'' if ok else '  RESULTS DIFFER'}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps({"bench": "softmax", "threads": 1, "rows": rows}))


if __name__ == "__main__":
    main()
