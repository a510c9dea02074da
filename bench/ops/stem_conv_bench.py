#!/usr/bin/env python3
# The first convolution of the benchmark models (3 input channels), Anvil against ONNX Runtime in
# the same process: one ONNX model per stem, Conv (weights and bias as initializers) followed by
# the epilogue the model has there (MobileNetV2: Clip(0, 6); ResNet-18: Relu; PP-OCRv4 det: none,
# the bias only), outputs compared first (rtol 1e-4 of the output's scale), then --runs rounds,
# the engines alternating round by round (side_by_side.per_call_ms), median per-call time. With
# --threads > 1 each round of each engine runs in its own process (ORT's workers spin after a run
# and took the second core from Anvil's when both ran in one process).
# Prints a table, the load average, and as the last line
#   {"bench": "stem_conv", "threads": T, "rows": [{"case", "batch", "anvil_ms", "ort_ms", "ratio"}, ...]}
#
#   source scripts/env.sh && python3 bench/ops/stem_conv_bench.py [--runs 7] [--batch 1 8] [--threads 1]
#                                                                [--only mobilenetv2,resnet18,ocr_det]
"""The models' 3-channel stem convolutions: Anvil vs ONNX Runtime."""
import argparse
import json
import os
import subprocess
import sys

# (name, in_channels, size, out_channels, kernel, stride, pad, epilogue)
STEMS = [
    ("mobilenetv2", 3, 224, 32, 3, 2, 1, "relu6"),
    ("resnet18", 3, 224, 64, 7, 2, 3, "relu"),
    ("ocr_det", 3, 640, 16, 3, 2, 1, "none"),
]


def stem_model(c, size, o, k, stride, pad, epilogue, batch, rng):
    import numpy as np
    import onnx
    h = onnx.helper
    w = (rng.uniform(-1, 1, size=(o, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, size=(o,)).astype(np.float32)
    out = (size + 2 * pad - k) // stride + 1
    conv_out = "y" if epilogue == "none" else "c"
    nodes = [h.make_node("Conv", ["x", "w", "b"], [conv_out], kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4)]
    inits = [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(b, "b")]
    if epilogue == "relu6":
        nodes.append(h.make_node("Clip", ["c", "lo", "hi"], ["y"]))
        inits += [onnx.numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  onnx.numpy_helper.from_array(np.array(6, np.float32), "hi")]
    elif epilogue == "relu":
        nodes.append(h.make_node("Relu", ["c"], ["y"]))
    g = h.make_graph(nodes, "stem", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [batch, c, size, size])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [batch, o, out, out])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def worker_ms(engine, name, batch, args):
    """One round of one engine in a fresh process: its per-call time in ms."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", engine, "--only", name, "--batch", str(batch),
           "--threads", str(args.threads), "--min-ms", str(args.min_ms), "--target", args.target]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{engine} worker for {name} batch {batch} failed:\n{r.stderr[-2000:]}")
    return float(r.stdout.strip().splitlines()[-1])


def run_worker(args):
    import numpy as np
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from side_by_side import per_call_ms
    name, c, size, o, k, stride, pad, epilogue = [s for s in STEMS if s[0] == args.only][0]
    rng = np.random.default_rng(20261202)
    model = stem_model(c, size, o, k, stride, pad, epilogue, args.batch[0], rng)
    x = rng.uniform(-1, 1, size=(args.batch[0], c, size, size)).astype(np.float32)
    if args.worker == "ort":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        run = lambda: sess.run(None, {"x": x})  # noqa: E731
    else:
        import anvil
        fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model), args.target), anvil.cpu())["main"]
        run = lambda: fn(x)  # noqa: E731
    print(per_call_ms(run, 3, args.min_ms))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=30.0)
    ap.add_argument("--batch", type=int, nargs="+", default=[1])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--target", default="llvm")
    ap.add_argument("--only", default="", help="comma-separated stem names")
    ap.add_argument("--worker", choices=["anvil", "ort"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ["ANVIL_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    if args.worker:
        return run_worker(args)
    import numpy as np
    import onnxruntime as ort
    import anvil
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from side_by_side import per_call_ms

    rng = np.random.default_rng(20261202)
    la = os.getloadavg()
    print(f"{os.cpu_count()} cpus, load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; {args.threads} thread(s) per engine")
    only = [s for s in args.only.split(",") if s]
    rows = []
    for name, c, size, o, k, stride, pad, epilogue in STEMS:
        if only and name not in only:
            continue
        for batch in args.batch:
            case = f"{name} {c}x{size}x{size} -> {o} {k}x{k} s{stride} p{pad} {epilogue}"
            model = stem_model(c, size, o, k, stride, pad, epilogue, batch, rng)
            x = rng.uniform(-1, 1, size=(batch, c, size, size)).astype(np.float32)
            so = ort.SessionOptions()
            so.intra_op_num_threads = args.threads
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            mod = anvil.compile(anvil.frontend.from_onnx(model), args.target)
            main_fn = anvil.runtime.VirtualMachine(mod, anvil.cpu())["main"]
            want = sess.run(None, {"x": x})[0]
            got = main_fn(x).numpy()
            ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max() + 1))
            ta_runs, to_runs = [], []
            if args.threads == 1:
                for _ in range(args.runs):
                    ta_runs.append(per_call_ms(lambda: main_fn(x), 1, args.min_ms))
                    to_runs.append(per_call_ms(lambda: sess.run(None, {"x": x}), 1, args.min_ms))
            else:
                # Several threads: each engine timed in its own process (ORT's workers spin after a
                # run and took the second core from Anvil's when they alternated in one process).
                for _ in range(args.runs):
                    ta_runs.append(worker_ms("anvil", name, batch, args))
                    to_runs.append(worker_ms("ort", name, batch, args))
            ta, to = float(np.median(ta_runs)), float(np.median(to_runs))
            rows.append({"case": case, "batch": batch, "anvil_ms": round(ta, 4), "ort_ms": round(to, 4),
                         "ratio": round(ta / to, 2), "same_result": bool(ok)})
            print(f"{case:<46} b{batch:<2} anvil {ta:8.4f} ms  ort {to:8.4f} ms  ratio {ta / to:5.2f}"
                  f"{'' if ok else '  RESULTS DIFFER'}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps({"bench": "stem_conv", "threads": args.threads, "target": args.target, "rows": rows}))


if __name__ == "__main__":
    main()
