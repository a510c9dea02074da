#!/usr/bin/env python3
# MobileNetV2's convolution layer shapes (224x224 input, batch 1), Anvil against ONNX Runtime in
# the same process, 1 thread: one ONNX model per layer, Conv (weights and bias as initializers)
# followed by the epilogue the model has there (Clip(0, 6), or none for the linear projections),
# outputs compared first (rtol 1e-4 of the output's scale), then --runs rounds, each timing calls
# of one engine then the other until --min-ms passed; the figure is the median per-call time.
# Prints a table, the load average, and as the last line
#   {"bench": "mobilenet_conv", "rows": [{"case", "anvil_ms", "ort_ms", "ratio"}, ...]}
#
#   source scripts/env.sh && python3 bench/ops/mobilenet_conv_bench.py [--runs 7] [--only dw|pw|stem]
"""MobileNetV2's conv layers: Anvil vs ONNX Runtime, 1 thread."""
import argparse
import json
import os
import sys

os.environ.setdefault("ANVIL_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import float_model, per_call_ms  # noqa: E402

# (kind, in_channels, size, out_channels, kernel, stride, relu6)
LAYERS = [
    ("stem", 3, 224, 32, 3, 2, True),
    ("dw", 32, 112, 32, 3, 1, True),
    ("dw", 96, 112, 96, 3, 2, True),
    ("dw", 144, 56, 144, 3, 1, True),
    ("dw", 144, 56, 144, 3, 2, True),
    ("dw", 192, 28, 192, 3, 1, True),
    ("dw", 192, 28, 192, 3, 2, True),
    ("dw", 384, 14, 384, 3, 1, True),
    ("dw", 576, 14, 576, 3, 2, True),
    ("dw", 960, 7, 960, 3, 1, True),
    ("pw", 32, 112, 16, 1, 1, False),
    ("pw", 16, 112, 96, 1, 1, True),
    ("pw", 24, 56, 144, 1, 1, True),
    ("pw", 144, 56, 24, 1, 1, False),
    ("pw", 32, 28, 192, 1, 1, True),
    ("pw", 192, 14, 64, 1, 1, False),
    ("pw", 64, 14, 384, 1, 1, True),
    ("pw", 384, 14, 96, 1, 1, False),
    ("pw", 576, 7, 160, 1, 1, False),
    ("pw", 160, 7, 960, 1, 1, True),
    ("pw", 960, 7, 320, 1, 1, False),
    ("pw", 320, 7, 1280, 1, 1, True),
]


def layer_model(kind, c, size, o, k, stride, relu6, rng, batch=1):
    import onnx
    h = onnx.helper
    groups = c if kind == "dw" else 1
    w = (rng.uniform(-1, 1, size=(o, c // groups, k, k)) / np.sqrt(c // groups * k * k)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, size=(o,)).astype(np.float32)
    pad = k // 2
    out = (size + 2 * pad - k) // stride + 1
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c" if relu6 else "y"], group=groups, kernel_shape=[k, k],
                         strides=[stride, stride], pads=[pad] * 4)]
    inits = [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(b, "b")]
    if relu6:
        nodes.append(h.make_node("Clip", ["c", "lo", "hi"], ["y"]))
        inits += [onnx.numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  onnx.numpy_helper.from_array(np.array(6, np.float32), "hi")]
    return float_model(nodes, [batch, c, size, size], [batch, o, out, out], inits)


def main():
    import anvil
    import onnxruntime as ort
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=30.0)
    ap.add_argument("--only", choices=["dw", "pw", "stem"])
    ap.add_argument("--batch", type=int, default=1, help="images per call (MobileNetV2 at batch 8: --batch 8)")
    args = ap.parse_args()
    rng = np.random.default_rng(20261202)
    la = os.getloadavg()
    print(f"{os.cpu_count()} cpus, load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; 1 thread per engine; batch {args.batch}")
    rows = []
    for kind, c, size, o, k, stride, relu6 in LAYERS:
        if args.only and kind != args.only:
            continue
        case = f"{kind} {c}x{size}x{size} -> {o} {k}x{k} s{stride}{' relu6' if relu6 else ''}"
        model = layer_model(kind, c, size, o, k, stride, relu6, rng, args.batch)
        x = rng.uniform(-1, 1, size=(args.batch, c, size, size)).astype(np.float32)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        main_fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model), "llvm"), anvil.cpu())["main"]
        want = sess.run(None, {"x": x})[0]
        got = main_fn(x).numpy()
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max() + 1))
        # The engines alternate run by run, so a busy machine slows both alike.
        ta_runs, to_runs = [], []
        for _ in range(args.runs):
            ta_runs.append(per_call_ms(lambda: main_fn(x), 1, args.min_ms))
            to_runs.append(per_call_ms(lambda: sess.run(None, {"x": x}), 1, args.min_ms))
        ta, to = float(np.median(ta_runs)), float(np.median(to_runs))
        rows.append({"case": case, "anvil_ms": round(ta, 4), "ort_ms": round(to, 4), "ratio": round(ta / to, 2),
                     "same_result": bool(ok)})
        print(f"{case:<40} anvil {ta:8.4f} ms  ort {to:8.4f} ms  ratio {ta / to:5.2f}{'' if ok else '  RESULTS DIFFER'}",
              flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps({"bench": "mobilenet_conv", "threads": 1, "batch": args.batch, "rows": rows}))


if __name__ == "__main__":
    main()
