"""Anvil runtime demo: build a kernel library with embedded weights, load it, run it, time it.

The kernels are written as tensor expressions, scheduled and compiled by Anvil (LLVM); the flow
is the one compiled models will use: a module tree (weights + host code) is exported into one
shared library, the runtime loads it back, and functions are called on tensors. Every output is
checked against numpy (float64) on random inputs.
"""
import argparse
import statistics
import time

import numpy as np

import anvil
from anvil import runtime, te

def compile_kernels():
    """dense_relu(x[n,k], w[k,m], b[m], y[n,m]) and softmax(x[n,m], y[n,m]) written as tensor
    expressions (TVM's names), scheduled for this CPU and compiled by LLVM into one module. The
    sizes are symbolic: one kernel serves both layers and any batch."""
    n, k, m = te.var("n"), te.var("k"), te.var("m")
    X = te.placeholder((n, k), name="x")
    W = te.placeholder((k, m), name="w")
    B = te.placeholder((m,), name="b")
    r = te.reduce_axis((0, k), name="r")
    D = te.compute((n, m), lambda i, j: te.sum(X[i, r] * W[r, j], axis=r), name="dot")
    Y = te.compute((n, m), lambda i, j: te.max(D[i, j] + B[j], 0.0), name="y")
    s = te.create_schedule(Y.op)
    s[Y].parallel(Y.op.axis[0])
    s[D].compute_at(s[Y], Y.op.axis[0])           # one row of dot products at a time
    # k outside, 32 columns vectorized inside: two independent accumulators per k step (16
    # columns: each FMA waits for the previous one). Wider blocks are faster for the 256-wide
    # layer but waste guarded lanes on the 10-wide one (no masked vector tails yet).
    jo, ji = s[D].split(D.op.axis[1], factor=32)
    s[D].reorder(jo, r, ji)
    s[D].vectorize(ji)
    dense = anvil.lower(s, [X, W, B, Y], name="dense_relu")

    L = te.placeholder((n, m), name="x")
    c = te.reduce_axis((0, m), name="c")
    mx = te.compute((n,), lambda i: te.max(L[i, c], axis=c), name="row_max")
    e = te.compute((n, m), lambda i, j: te.exp(L[i, j] - mx[i]), name="e")
    c2 = te.reduce_axis((0, m), name="c2")
    total = te.compute((n,), lambda i: te.sum(e[i, c2], axis=c2), name="row_sum")
    P = te.compute((n, m), lambda i, j: e[i, j] / total[i], name="p")
    s2 = te.create_schedule(P.op)
    for t in (mx, e, total):
        s2[t].compute_at(s2[P], P.op.axis[0])
    softmax = anvil.lower(s2, [L, P], name="softmax")
    return anvil.build([dense, softmax], target="llvm")


def time_call(fn, args, repeat, number):
    """Median seconds per call over `repeat` runs of `number` calls each."""
    fn(*args)  # warm-up
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", default="/tmp/anvil_demo_model.so")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    print(f"seed {args.seed}")
    scale = np.float32(1.0 / np.sqrt(args.hidden))
    w1 = rng.standard_normal((args.hidden, args.hidden), dtype=np.float32) * scale
    b1 = rng.standard_normal(args.hidden, dtype=np.float32) * np.float32(0.1)
    w2 = rng.standard_normal((args.hidden, args.classes), dtype=np.float32) * scale
    b2 = rng.standard_normal(args.classes, dtype=np.float32) * np.float32(0.1)
    x = rng.standard_normal((args.batch, args.hidden), dtype=np.float32)

    print("[1/4] compiling dense_relu and softmax (tensor expressions -> LLVM) and packing them with "
          "the weights into one library ...")
    started = time.perf_counter()
    kernels = compile_kernels()
    print(f"      compiled in {time.perf_counter() - started:.2f} s")
    tree = runtime.params_module({"w1": anvil.tensor(w1), "b1": anvil.tensor(b1),
                                  "w2": anvil.tensor(w2), "b2": anvil.tensor(b2)})
    tree.import_module(kernels)
    tree.export_library(args.out)

    print(f"[2/4] loading {args.out} with the runtime ...")
    mod = runtime.load_module(args.out)
    params = {name: mod["get_param"](name) for name in mod["list_params"]()}
    print(f"      root module kind '{mod.kind}', imports {[m.kind for m in mod.imports]}, "
          f"params {sorted(params)}")

    print("[3/4] running a two-layer MLP (dense+relu, dense+relu, softmax) ...")
    dev = anvil.cpu(0)
    tx = anvil.tensor(x, dev)
    h = anvil.empty((args.batch, args.hidden), "float32", dev)
    logits = anvil.empty((args.batch, args.classes), "float32", dev)
    probs = anvil.empty((args.batch, args.classes), "float32", dev)
    dense, softmax = mod["dense_relu"], mod["softmax"]

    def forward(inp):
        dense(inp, params["w1"], params["b1"], h)
        dense(h, params["w2"], params["b2"], logits)
        softmax(logits, probs)

    forward(tx)
    out = probs.numpy()

    ref_h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    ref_logits = np.maximum(ref_h @ w2 + b2, 0)
    ref = np.exp(ref_logits - ref_logits.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    err = float(np.abs(out - ref).max())
    np.set_printoptions(precision=4, suppress=True)
    print("      probabilities (first 2 rows):")
    print(out[:2])
    print(f"      max |anvil - numpy float64| = {err:.2e} (tolerance 1e-5)")
    if err > 1e-5:
        raise SystemExit("demo FAILED: results differ from numpy")

    print("[4/4] timing ...")
    number = max(1, int(2000 / (args.hidden * args.hidden * args.batch / 1e5 + 1)))
    t_forward = time_call(forward, (tx,), args.repeat, number)
    t_dense = time_call(dense, (tx, params["w1"], params["b1"], h), args.repeat, number)
    flops = 2.0 * args.batch * args.hidden * args.hidden
    t_numpy = time_call(lambda a: np.maximum(a @ w1 + b1, 0), (x,), args.repeat, number)
    rows = [("forward (3 kernel calls)", t_forward, ""),
            ("dense_relu layer 1", t_dense, f"{flops / t_dense / 1e9:.2f} GFLOP/s"),
            ("numpy layer 1 (reference)", t_numpy, f"{flops / t_numpy / 1e9:.2f} GFLOP/s")]
    print(f"      {'what':<28}{'median latency':>16}  {'throughput':>14}")
    for name, seconds, extra in rows:
        print(f"      {name:<28}{seconds * 1e6:>13.1f} us  {extra:>14}")
    print(f"      ({args.repeat} runs x {number} calls; kernels compiled by Anvil from tensor expressions)")
    print("demo OK")


if __name__ == "__main__":
    main()
