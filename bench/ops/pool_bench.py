#!/usr/bin/env python3
# Pooling layers of common CNNs, Anvil against ONNX Runtime in the same process, 1 thread: one
# ONNX model per layer (MaxPool or AveragePool), outputs compared first (rtol 1e-5 of the output's
# scale), then --runs rounds, the engines alternating round by round (side_by_side.per_call_ms),
# median per-call time. Prints a table, the load average, and as the last line
#   {"bench": "pool", "rows": [{"case", "batch", "anvil_ms", "ort_ms", "ratio"}, ...]}
#
#   source scripts/env.sh && python3 bench/ops/pool_bench.py [--runs 7] [--batch 1 8]
"""Pooling layers: Anvil vs ONNX Runtime, 1 thread."""
import argparse
import json
import os
import sys

os.environ.setdefault("ANVIL_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import float_model, ort_session, per_call_ms  # noqa: E402

# (name, op, channels, size, kernel, stride, pad, extra attributes)
LAYERS = [
    ("resnet max 3x3/2", "MaxPool", 64, 112, 3, 2, 1, {}),
    ("vgg max 2x2/2", "MaxPool", 64, 224, 2, 2, 0, {}),
    ("inception avg 3x3/1", "AveragePool", 192, 28, 3, 1, 1, {"count_include_pad": 0}),
    ("avg 2x2/2", "AveragePool", 128, 56, 2, 2, 0, {}),
    ("max 3x3/2 ceil", "MaxPool", 96, 55, 3, 2, 0, {"ceil_mode": 1}),
]


def layer_model(op, c, size, k, stride, pad, extra, batch):
    import onnx
    node = onnx.helper.make_node(op, ["x"], ["y"], kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
                                 **extra)
    return float_model([node], [batch, c, size, size], None, name="pool")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=30.0)
    ap.add_argument("--batch", type=int, nargs="+", default=[1])
    ap.add_argument("--target", default="llvm")
    args = ap.parse_args()
    import anvil

    rng = np.random.default_rng(20261203)
    la = os.getloadavg()
    print(f"{os.cpu_count()} cpus, load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; 1 thread per engine")
    rows = []
    for name, op, c, size, k, stride, pad, extra in LAYERS:
        for batch in args.batch:
            case = f"{name} {c}x{size}x{size}"
            model = layer_model(op, c, size, k, stride, pad, extra, batch)
            x = rng.uniform(-1, 1, size=(batch, c, size, size)).astype(np.float32)
            sess = ort_session(model)
            fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model), args.target),
                                              anvil.cpu())["main"]
            want = sess.run(None, {"x": x})[0]
            got = fn(x).numpy()
            ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))
            ta_runs, to_runs = [], []
            for _ in range(args.runs):
                ta_runs.append(per_call_ms(lambda: fn(x), 1, args.min_ms))
                to_runs.append(per_call_ms(lambda: sess.run(None, {"x": x}), 1, args.min_ms))
            ta, to = float(np.median(ta_runs)), float(np.median(to_runs))
            rows.append({"case": case, "batch": batch, "anvil_ms": round(ta, 4), "ort_ms": round(to, 4),
                         "ratio": round(ta / to, 2), "same_result": bool(ok)})
            print(f"{case:<34} b{batch:<2} anvil {ta:8.4f} ms  ort {to:8.4f} ms  ratio {ta / to:5.2f}"
                  f"{'' if ok else '  RESULTS DIFFER'}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps({"bench": "pool", "target": args.target, "rows": rows}))


if __name__ == "__main__":
    main()
