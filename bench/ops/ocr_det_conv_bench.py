#!/usr/bin/env python3
# PP-OCRv4 detection's heaviest convolution layers (640x640 input, batch 1), Anvil against ONNX
# Runtime in the same process, 1 thread: one ONNX model per layer, Conv (weights as initializers,
# a bias where the model has one) followed by the epilogue the model has there (Relu or none),
# and the neck's ConvTranspose 24 -> 24 2x2 stride 2 (+ Relu); outputs compared first (rtol 1e-4
# of the output's scale), then --runs rounds, each timing calls of one engine then the other
# until --min-ms passed; the figure is the median per-call time. Prints a table, the load
# average, and as the last line
#   {"bench": "ocr_det_conv", "rows": [{"case", "anvil_ms", "ort_ms", "ratio"}, ...]}
#
#   source scripts/env.sh && python3 bench/ops/ocr_det_conv_bench.py [--runs 7] [--only conv|convt]
"""PP-OCRv4 det's conv layers: Anvil vs ONNX Runtime, 1 thread."""
import argparse
import json
import os
import sys

os.environ.setdefault("ANVIL_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import float_model, per_call_ms  # noqa: E402

# (kind, in_channels, size, out_channels, kernel, stride, bias, relu)
LAYERS = [
    ("conv", 96, 160, 24, 3, 1, False, False),
    ("conv", 96, 160, 24, 3, 1, True, True),
    ("conv", 96, 80, 24, 3, 1, False, False),
    ("conv", 96, 40, 24, 3, 1, False, False),
    ("conv", 96, 20, 24, 3, 1, False, False),
    ("conv", 64, 56, 64, 3, 1, True, True),  # ResNet-18's 56x56 3x3 (another model's shape)
    ("conv", 128, 28, 128, 3, 1, True, True),
    ("convt", 24, 160, 24, 2, 2, True, True),
]


def layer_model(kind, c, size, o, k, stride, bias, relu, rng, batch=1):
    import onnx
    h = onnx.helper
    inits = []
    if kind == "conv":
        w = (rng.uniform(-1, 1, size=(o, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
        pad = k // 2
        out = (size + 2 * pad - k) // stride + 1
        node = h.make_node("Conv", ["x", "w", "b"] if bias else ["x", "w"], ["c" if relu else "y"], kernel_shape=[k, k],
                           strides=[stride, stride], pads=[pad] * 4)
    else:
        w = (rng.uniform(-1, 1, size=(c, o, k, k)) / np.sqrt(c)).astype(np.float32)
        out = size * stride
        node = h.make_node("ConvTranspose", ["x", "w", "b"] if bias else ["x", "w"], ["c" if relu else "y"],
                           kernel_shape=[k, k], strides=[stride, stride])
    inits.append(onnx.numpy_helper.from_array(w, "w"))
    if bias:
        inits.append(onnx.numpy_helper.from_array(rng.uniform(-0.5, 0.5, size=(o,)).astype(np.float32), "b"))
    nodes = [node]
    if relu:
        nodes.append(h.make_node("Relu", ["c"], ["y"]))
    return float_model(nodes, [batch, c, size, size], [batch, o, out, out], inits)


def main():
    import anvil
    import onnxruntime as ort
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=30.0)
    ap.add_argument("--only", choices=["conv", "convt"])
    ap.add_argument("--target", default="llvm")
    ap.add_argument("--case", help="only the cases whose name contains this")
    ap.add_argument("--batch", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(20261202)
    la = os.getloadavg()
    print(f"{os.cpu_count()} cpus, load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; 1 thread per engine; batch {args.batch}")
    rows = []
    for kind, c, size, o, k, stride, bias, relu in LAYERS:
        if args.only and kind != args.only:
            continue
        case = f"{kind} {c}x{size}x{size} -> {o} {k}x{k} s{stride}{' bias' if bias else ''}{' relu' if relu else ''}"
        if args.case and args.case not in case:
            continue
        model = layer_model(kind, c, size, o, k, stride, bias, relu, rng, args.batch)
        x = rng.uniform(-1, 1, size=(args.batch, c, size, size)).astype(np.float32)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        main_fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model), args.target), anvil.cpu())["main"]
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
        print(f"{case:<44} anvil {ta:8.4f} ms  ort {to:8.4f} ms  ratio {ta / to:5.2f}{'' if ok else '  RESULTS DIFFER'}",
              flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps({"bench": "ocr_det_conv", "threads": 1, "batch": args.batch, "rows": rows}))


if __name__ == "__main__":
    main()
