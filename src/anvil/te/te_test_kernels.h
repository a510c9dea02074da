// Test-only operator kernels written as tensor expressions, each with its naive double reference
// on row-major float32 data: batch matmul, zero padding (NCHW), conv2d NCHW, depthwise conv and
// 2x2 stride-2 pooling. Shared by the interpreter tests (te/kernels_test.cc) and the compiled
// kernel tests (pipeline/op_kernels_test.cc), which schedule them differently. References take
// raw pointers so either side's tensors can feed them.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "anvil/ir/expr_ops.h"
#include "anvil/te/reduction.h"
#include "anvil/te/tensor.h"

namespace anvil::te::testing {

// C[b, i, j] = sum_k A[b, i, k] * B[b, k, j]; k is the reduction axis (for schedules).
struct BatchMatmul {
  int batch, M, N, K;
  Tensor A, B, C;
  IterVar k;
  BatchMatmul(int b, int m, int n, int kk) : batch(b), M(m), N(n), K(kk) {
    A = placeholder({batch, M, K}, ir::DataType::float32(), "A");
    B = placeholder({batch, K, N}, ir::DataType::float32(), "B");
    k = reduce_axis(0, K, "k");
    C = compute(
        {batch, M, N}, [&](ir::Var bb, ir::Var i, ir::Var j) { return sum(A(bb, i, k) * B(bb, k, j), {k}); }, "C");
  }
  std::vector<double> reference(const float* a, const float* b) const {
    std::vector<double> c(static_cast<size_t>(batch * M * N), 0.0);
    for (int x = 0; x < batch; ++x)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
          for (int p = 0; p < K; ++p) c[(x * M + i) * N + j] += double(a[(x * M + i) * K + p]) * b[(x * K + p) * N + j];
    return c;
  }
};

// data [N, C, H, W] padded with `pad` zeros on each side of H and W. select() evaluates both
// sides, so the read clamps its indices into the input (the clamped value is discarded outside).
inline Tensor pad_nchw(const Tensor& data, int H, int W, int pad) {
  return compute(
      {data.shape()[0], data.shape()[1], H + 2 * pad, W + 2 * pad},
      [&](ir::Var b, ir::Var c, ir::Var y, ir::Var x) {
        ir::PrimExpr inside = y >= pad && y < H + pad && x >= pad && x < W + pad;
        ir::PrimExpr yy = ir::min(ir::max(y - pad, 0), H - 1), xx = ir::min(ir::max(x - pad, 0), W - 1);
        return ir::select(inside, data(b, c, yy, xx), 0.0f);
      },
      "padded");
}

// conv2d NCHW: data [N, C, H, W], weight [K, C, R, S], zero padding `pad`, stride `st`.
struct Conv2dNchw {
  int N, C, H, W, K, R, S, pad, st, OH, OW;
  Tensor data, weight, padded, out;
  Conv2dNchw(int n, int c, int h, int w, int k, int r, int s, int p, int stride)
      : N(n), C(c), H(h), W(w), K(k), R(r), S(s), pad(p), st(stride) {
    OH = (H + 2 * pad - R) / st + 1;
    OW = (W + 2 * pad - S) / st + 1;
    data = placeholder({N, C, H, W}, ir::DataType::float32(), "data");
    weight = placeholder({K, C, R, S}, ir::DataType::float32(), "weight");
    padded = pad_nchw(data, H, W, pad);
    IterVar rc = reduce_axis(0, C, "rc"), ry = reduce_axis(0, R, "ry"), rx = reduce_axis(0, S, "rx");
    out = compute(
        {N, K, OH, OW},
        [&](ir::Var b, ir::Var f, ir::Var y, ir::Var x) {
          return sum(padded(b, rc, y * st + ry, x * st + rx) * weight(f, rc, ry, rx), {rc, ry, rx});
        },
        "conv");
  }
  std::vector<double> reference(const float* d, const float* w) const {
    std::vector<double> o(static_cast<size_t>(N * K * OH * OW), 0.0);
    for (int b = 0; b < N; ++b)
      for (int f = 0; f < K; ++f)
        for (int y = 0; y < OH; ++y)
          for (int x = 0; x < OW; ++x) {
            double acc = 0;
            for (int c = 0; c < C; ++c)
              for (int r = 0; r < R; ++r)
                for (int q = 0; q < S; ++q) {
                  int iy = y * st + r - pad, ix = x * st + q - pad;
                  if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                  acc += double(d[((b * C + c) * H + iy) * W + ix]) * w[((f * C + c) * R + r) * S + q];
                }
            o[((b * K + f) * OH + y) * OW + x] = acc;
          }
    return o;
  }
};

// Depthwise conv NCHW: data [N, C, H, W], weight [C, R, R], zero padding `pad`, stride 1, so the
// output is [N, C, H + 2 pad - R + 1, ...]; ry and rx are the reduction axes (for schedules).
struct DepthwiseConv {
  int N, C, H, W, R, pad, OH, OW;
  Tensor data, weight, padded, out;
  IterVar ry, rx;
  DepthwiseConv(int n, int c, int h, int w, int r, int p) : N(n), C(c), H(h), W(w), R(r), pad(p) {
    OH = H + 2 * pad - R + 1;
    OW = W + 2 * pad - R + 1;
    data = placeholder({N, C, H, W}, ir::DataType::float32(), "data");
    weight = placeholder({C, R, R}, ir::DataType::float32(), "w");
    padded = pad_nchw(data, H, W, pad);
    ry = reduce_axis(0, R, "ry");
    rx = reduce_axis(0, R, "rx");
    out = compute(
        {N, C, OH, OW},
        [&](ir::Var b, ir::Var c, ir::Var y, ir::Var x) {
          return sum(padded(b, c, y + ry, x + rx) * weight(c, ry, rx), {ry, rx});
        },
        "depthwise");
  }
  std::vector<double> reference(const float* d, const float* w) const {
    std::vector<double> o(static_cast<size_t>(N * C * OH * OW), 0.0);
    for (int b = 0; b < N; ++b)
      for (int c = 0; c < C; ++c)
        for (int y = 0; y < OH; ++y)
          for (int x = 0; x < OW; ++x)
            for (int r = 0; r < R; ++r)
              for (int q = 0; q < R; ++q) {
                int iy = y + r - pad, ix = x + q - pad;
                if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                  o[((b * C + c) * OH + y) * OW + x] +=
                      double(d[((b * C + c) * H + iy) * W + ix]) * w[(c * R + r) * R + q];
              }
    return o;
  }
};

// 2x2 windows at stride 2 over data [N, C, H, W]; a last odd row or column is not covered.
// max_pool and sum_pool reduce over two axes each (reduce_axis(0), (1) for schedules);
// avg_pool divides sum_pool by 4.
struct Pool2x2 {
  int N, C, H, W, OH, OW;
  Tensor data, max_pool, sum_pool, avg_pool;
  Pool2x2(int n, int c, int h, int w) : N(n), C(c), H(h), W(w), OH(h / 2), OW(w / 2) {
    data = placeholder({N, C, H, W}, ir::DataType::float32(), "data");
    IterVar ry = reduce_axis(0, 2, "ry"), rx = reduce_axis(0, 2, "rx");
    IterVar sy = reduce_axis(0, 2, "sy"), sx = reduce_axis(0, 2, "sx");
    max_pool = compute(
        {N, C, OH, OW},
        [&](ir::Var b, ir::Var ch, ir::Var y, ir::Var x) {
          return te::max(data(b, ch, y * 2 + ry, x * 2 + rx), {ry, rx});
        },
        "max_pool");
    sum_pool = compute(
        {N, C, OH, OW},
        [&](ir::Var b, ir::Var ch, ir::Var y, ir::Var x) {
          return te::sum(data(b, ch, y * 2 + sy, x * 2 + sx), {sy, sx});
        },
        "sum_pool");
    avg_pool = compute(
        {N, C, OH, OW}, [&](ir::Var b, ir::Var ch, ir::Var y, ir::Var x) { return sum_pool(b, ch, y, x) / 4.0f; },
        "avg_pool");
  }
  std::vector<double> reference(const float* d, bool is_max) const {
    std::vector<double> o(static_cast<size_t>(N * C * OH * OW));
    for (int b = 0; b < N; ++b)
      for (int c = 0; c < C; ++c)
        for (int y = 0; y < OH; ++y)
          for (int x = 0; x < OW; ++x) {
            double m = -INFINITY, t = 0;
            for (int r = 0; r < 2; ++r)
              for (int q = 0; q < 2; ++q) {
                double v = d[((b * C + c) * H + y * 2 + r) * W + x * 2 + q];
                m = std::max(m, v);
                t += v;
              }
            o[((b * C + c) * OH + y) * OW + x] = is_max ? m : t / 4;
          }
    return o;
  }
};

}  // namespace anvil::te::testing
