#!/usr/bin/env python3
# The demo of scripts/demo.sh: a real model with trained weights — PP-OCRv4 text recognition,
# shipped inside the pip package rapidocr-onnxruntime — compiled by Anvil into one library,
# loaded back through the runtime and run on a rendered line of text. Prints what the model
# reads (greedy CTC decoding with the model's own character list), the largest difference from
# ONNX Runtime, and both engines' latency.
#
#   source scripts/env.sh && python3 examples/onnx_demo.py [--out demo.so] [--repeat 20]
"""Compile PP-OCRv4 recognition with Anvil, run it, compare with ONNX Runtime."""
import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "models"))
import real_models  # noqa: E402

import anvil  # noqa: E402
from anvil import frontend, runtime  # noqa: E402


def decode(probs, characters):
    """Greedy CTC: best class per step, repeats merged, blanks (class 0) dropped."""
    best = probs.argmax(-1)
    out, prev = [], 0
    for c in best:
        if c != prev and c != 0:
            out.append(characters[c - 1] if c - 1 < len(characters) else "?")
        prev = c
    return "".join(out)


def timed(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "anvil_ocr_rec.so"))
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--width", type=int, default=320)
    args = ap.parse_args()

    path = real_models.rec_model_path()
    model = onnx.load(str(path))
    meta = {p.key: p.value for p in model.metadata_props}
    characters = meta.get("character", "").splitlines() + [" "]
    x = real_models.rec_input(batch=1, width=args.width)["x"]
    print(f"model: {path.name} ({path.stat().st_size / 1e6:.1f} MB, real weights), input x{list(x.shape)}")

    t0 = time.perf_counter()
    mod = frontend.from_onnx(str(path), shape={"x": x.shape})
    exe = anvil.compile(mod, target="llvm")
    exe.export_library(args.out)
    print(f"anvil: compiled to {args.out} in {time.perf_counter() - t0:.1f} s")

    vm = runtime.VirtualMachine(runtime.load_module(args.out), anvil.cpu())
    main_fn = vm["main"]
    ours = main_fn(x).numpy()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    ref = session.run(None, {"x": x})[0]
    print(f"output {list(ours.shape)}; max |anvil - onnxruntime| = {np.abs(ours - ref).max():.2e}")
    print(f"anvil reads:       '{decode(ours[0], characters)}'")
    print(f"onnxruntime reads: '{decode(ref[0], characters)}'")
    a = timed(lambda: main_fn(x), args.repeat)
    o = timed(lambda: session.run(None, {"x": x}), args.repeat)
    print(f"latency (median of {args.repeat}): anvil {a:.2f} ms, onnxruntime {o:.2f} ms (ratio {a / o:.2f})")
    if not np.allclose(ours, ref, rtol=1e-3, atol=1e-4):
        sys.exit("demo FAILED: Anvil and ONNX Runtime disagree")
    print("demo OK")


if __name__ == "__main__":
    main()
