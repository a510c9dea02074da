"""Anvil runtime demo: build a kernel library with embedded weights, load it, run it, time it.

Until the compiler lands, the kernels are hand-written C that follows Anvil's kernel ABI
(docs/abi.md). The flow is the one compiled models will use: a module tree (weights + host code)
is exported into one shared library, the runtime loads it back, and functions are called on
tensors. Every output is checked against numpy (float64) on random inputs.
"""
import argparse
import statistics
import time

import numpy as np

import anvil
from anvil import runtime

KERNELS = r"""
#include <math.h>
#include "anvil/runtime/c_abi.h"

const AnvilRuntimeApi* __anvil_runtime_api = 0;

static int bad(const char* msg) { __anvil_runtime_api->error_set(kAnvilErrorValue, msg); return -1; }
static int is_f32_matrix_or_vector(const AnvilValue* v) {
  return v->kind == kAnvilTensor && v->v_tensor->dtype.code == kDLFloat && v->v_tensor->dtype.bits == 32 &&
         v->v_tensor->strides == 0 && v->v_tensor->ndim >= 1 && v->v_tensor->ndim <= 2;
}
static float* f32(const AnvilValue* v) {
  return (float*)((char*)v->v_tensor->data + v->v_tensor->byte_offset);
}

/* dense_relu(x[n,k], w[k,m], b[m], y[n,m]): y = max(x @ w + b, 0) */
int32_t __anvil_fn_dense_relu(const AnvilValue* a, int32_t n_args, AnvilValue* ret) {
  (void)ret;
  if (n_args != 4) return bad("dense_relu expects (x, w, b, y)");
  for (int i = 0; i < 4; ++i)
    if (!is_f32_matrix_or_vector(&a[i])) return bad("dense_relu: expects compact float32 tensors");
  int64_t n = a[0].v_tensor->shape[0], k = a[0].v_tensor->shape[1], m = a[1].v_tensor->shape[1];
  if (a[1].v_tensor->shape[0] != k || a[2].v_tensor->shape[0] != m) return bad("dense_relu: shape mismatch");
  const float *x = f32(&a[0]), *w = f32(&a[1]), *b = f32(&a[2]);
  float* y = f32(&a[3]);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) y[i * m + j] = b[j];
    for (int64_t p = 0; p < k; ++p) {
      float xv = x[i * k + p];
      for (int64_t j = 0; j < m; ++j) y[i * m + j] += xv * w[p * m + j];
    }
    for (int64_t j = 0; j < m; ++j) y[i * m + j] = y[i * m + j] > 0 ? y[i * m + j] : 0;
  }
  return 0;
}

/* softmax(x[n,m], y[n,m]): row-wise softmax */
int32_t __anvil_fn_softmax(const AnvilValue* a, int32_t n_args, AnvilValue* ret) {
  (void)ret;
  if (n_args != 2) return bad("softmax expects (x, y)");
  if (!is_f32_matrix_or_vector(&a[0]) || !is_f32_matrix_or_vector(&a[1]) || a[0].v_tensor->ndim != 2)
    return bad("softmax: expects compact 2-d float32 tensors");
  int64_t n = a[0].v_tensor->shape[0], m = a[0].v_tensor->shape[1];
  const float* x = f32(&a[0]);
  float* y = f32(&a[1]);
  for (int64_t i = 0; i < n; ++i) {
    float mx = x[i * m];
    for (int64_t j = 1; j < m; ++j) mx = x[i * m + j] > mx ? x[i * m + j] : mx;
    float sum = 0;
    for (int64_t j = 0; j < m; ++j) { y[i * m + j] = expf(x[i * m + j] - mx); sum += y[i * m + j]; }
    for (int64_t j = 0; j < m; ++j) y[i * m + j] /= sum;
  }
  return 0;
}
"""


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

    print("[1/4] packing weights + C kernels into one library ...")
    tree = runtime.params_module({"w1": anvil.tensor(w1), "b1": anvil.tensor(b1),
                                  "w2": anvil.tensor(w2), "b2": anvil.tensor(b2)})
    tree.import_module(runtime.c_source_module(KERNELS, ["dense_relu", "softmax"]))
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
    print(f"      ({args.repeat} runs x {number} calls; hand-written C kernels, not yet compiled by Anvil)")
    print("demo OK")


if __name__ == "__main__":
    main()
