// The "gpu" family's rows for nn.dense and matmul ("dense.gpu", "matmul.gpu"): a tiled GEMM
// for thread-bound device code (vulkan; cuda and opencl share the schedule).
//
//   C[b..., i, j] = sum_k A[b..., i, k] * B(b..., k, j)   (B(k, j) = w[j, k] for nn.dense)
//
// Schedule, per output tile of (thr_m * tm) x (thr_n * tn) elements (64 x 64, 128 x 128 for
// large static shapes, 1..8 x 256 for few rows) (one workgroup, blockIdx.y
// rows, blockIdx.x columns, blockIdx.z the fused batch dims):
//  - every invocation (threadIdx.x over thr_m * thr_n) owns a tm x tn (4 x 4 or 8 x 8) block of C, accumulated in
//    a "local" stage (registers) over all of K; the k loop is split by kt;
//  - per kt step the A tile [rows, kt] and the B tile [kt, cols] are staged in "shared"
//    (workgroup) memory by all invocations together (cache_read stages computed at the outer
//    k loop, their fused axes bound to threadIdx.x: te lowering puts a workgroup barrier after
//    the loads and after the step's products, see te/loop_nest.cc);
//  - the inner k step and the tm x tn block are unrolled (constant extents).
// 1..8 static rows: one output per invocation, A and B read in place (no shared staging).
// Shapes that do not divide the tiles are correct: te clamps the staged regions and guards the
// stores; M (and any dim) may be symbolic (the grid is a launch expression). An elementwise
// epilogue fused after the product (bias, activation, a float16 cast) is inlined into the
// store of the tiled output. float16/bfloat16 accumulate in float32.
// 1-d operands of matmul and nn.dense with a prepacked weight ("packed" layout, the CPU GEMM's
// panels) are read through the same compute.
#include <algorithm>
#include <optional>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/nn_util.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::DataType;
using ir::PrimExpr;
using ir::Var;

constexpr const char* kProduct = "matmul_gpu";

// Tile shape: a workgroup of thr_m x thr_n invocations, each computing tm x tn outputs.
struct GpuMatmulParams {
  int tm = 4, tn = 4;
  int thr_m = 16, thr_n = 16;
  int kt = 16;
  // A and B tiles staged in shared memory. Not for few rows: a B element is read by at most 8
  // invocations there, and on lavapipe the barriers cost more than they save (1 x 1536 x 384:
  // 0.9 ms direct, 2.7 ms staged).
  bool stage_tiles = true;
};

// Few static rows (a batch-1/8 dense layer): one row per invocation row, 256 columns per
// workgroup, operands read in place (no staging, no barriers).
// At least 256 static rows and columns: 8 x 8 per invocation, 128 x 128 tiles (on lavapipe
// 512^3 ran in 68 ms instead of 122 with 4 x 4: fewer workgroups, so fewer barriers).
GpuMatmulParams choose_params(const PrimExpr& m, const PrimExpr& n) {
  GpuMatmulParams p;
  std::optional<int64_t> rows = ir::as_const_int(arith::simplify(m)), cols = ir::as_const_int(arith::simplify(n));
  if (rows && cols && *rows >= 256 && *cols >= 256) p.tm = p.tn = 8;
  if (rows && *rows <= 8) {
    p.tm = p.tn = 1;  // 256 columns per workgroup
    p.stage_tiles = false;
    p.thr_m = 1;
    while (p.thr_m < *rows) p.thr_m *= 2;
    p.thr_n = std::max(64, 256 / p.thr_m);
  }
  return p;
}

// A batch index of operand `t` (rank `rank`, its last two dims the matrix) for output index i,
// the batch dims right-aligned with numpy broadcasting (a size-1 dim reads index 0).
std::vector<PrimExpr> batch_index(const te::Tensor& t, int rank, const std::vector<Var>& i, int obatch,
                                  const std::vector<PrimExpr>& oshape) {
  std::vector<PrimExpr> idx;
  const int tb = rank - 2;
  for (int d = 0; d < tb; ++d) {
    const int od = obatch - tb + d;
    std::optional<int64_t> c = ir::as_const_int(t.shape()[d]);
    const bool bcast = c && *c == 1 && ir::as_const_int(oshape[od]) != std::optional<int64_t>(1);
    idx.push_back(bcast ? PrimExpr(ir::int_imm(0)) : PrimExpr(i[od]));
  }
  return idx;
}

// The product over the output shape; `b_at(batch index, k, j)` reads B.
te::Tensor product(const te::Tensor& a, const std::vector<PrimExpr>& oshape, bool a_vec, bool b_vec,
                   const std::function<PrimExpr(const std::vector<Var>&, PrimExpr, PrimExpr)>& b_at) {
  const int ra = a.ndim(), ro = static_cast<int>(oshape.size());
  te::IterVar k = te::reduce_axis(0, a.shape()[ra - 1], "k");
  const int obatch = ro - (a_vec ? 0 : 1) - (b_vec ? 0 : 1);
  const DataType acc = compute_dtype(a.dtype());
  te::Tensor c = te::compute(
      oshape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ai = a_vec ? std::vector<PrimExpr>{} : batch_index(a, ra, i, obatch, oshape);
        if (!a_vec) ai.push_back(i[obatch]);
        ai.push_back(k);
        PrimExpr col = b_vec ? PrimExpr() : PrimExpr(i[ro - 1]);
        return te::sum(convert(acc, a(ai)) * convert(acc, b_at(i, k, col)), {k});
      },
      kProduct);
  if (acc == a.dtype()) return c;
  return te::compute(
      oshape, [&](const std::vector<Var>& i) { return convert(a.dtype(), c(std::vector<PrimExpr>(i.begin(), i.end()))); },
      std::string(kProduct) + ".cast");
}

std::vector<te::Tensor> matmul_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& a = in[0];
  const te::Tensor& b = in[1];
  const std::vector<PrimExpr> oshape = out_shape(call);
  const int rb = b.ndim(), ro = static_cast<int>(oshape.size());
  const bool a_vec = a.ndim() == 1, b_vec = rb == 1;
  const int obatch = ro - (a_vec ? 0 : 1) - (b_vec ? 0 : 1);
  return {product(a, oshape, a_vec, b_vec, [&](const std::vector<Var>& i, PrimExpr k, PrimExpr j) {
    std::vector<PrimExpr> bi = b_vec ? std::vector<PrimExpr>{} : batch_index(b, rb, i, obatch, oshape);
    bi.push_back(k);
    if (!b_vec) bi.push_back(j);
    return b(bi);
  })};
}

std::vector<te::Tensor> dense_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  const te::Tensor& w = in[1];
  const bool packed = graph::get_string(call.attrs(), "weight_layout", "NK") == "packed";
  // Packed panels [ceil(N / nr), K, nr]: column j is panels[j / nr, k, j % nr].
  const PrimExpr nr = packed ? w.shape()[2] : PrimExpr();
  return {product(x, out_shape(call), x.ndim() == 1, false, [&](const std::vector<Var>&, PrimExpr k, PrimExpr j) {
    return packed ? w(ir::floordiv(j, nr), k, ir::floormod(j, nr)) : w(j, k);
  })};
}

// Splits axis into (block, thread, inner) with `threads` x `inner` per block.
std::tuple<te::IterVar, te::IterVar, te::IterVar> split3(te::Stage& st, const te::IterVar& axis, int threads,
                                                         int inner) {
  auto [o, i] = st.split(axis, inner);
  auto [b, t] = st.split(o, threads);
  return {b, t, i};
}

// Staged tile: its axes fused and spread over the workgroup's `threads` invocations.
void cooperative_load(te::Schedule& s, const te::Tensor& staged, const te::Stage& at, const te::IterVar& ko, int threads) {
  te::Stage st = s[staged];
  st.compute_at(at, ko);
  te::IterVar f = staged.axis(0);
  for (int d = 1; d < staged.ndim(); ++d) f = st.fuse(f, staged.axis(d));
  auto [fo, fi] = st.split(f, threads);
  st.bind(fi, "threadIdx.x");
}

void matmul_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target&) {
  te::Tensor c = find_tensor(outs, kProduct);
  ANVIL_ICHECK(c.defined(), "gpu matmul schedule: no '", kProduct, "' stage among the outputs");
  const te::Tensor& out = outs[0];
  const int nd = out.ndim();
  // The compute reads A and B directly (placeholders or inlined producers).
  std::vector<te::Tensor> operands = c.get()->inputs();
  te::Tensor cl = s.cache_write(c, "local");
  if (!c.same_as(out)) {
    // The copy out of the accumulator (c's stage after cache_write; c's handle still names the
    // reduction, so the elementwise walk below would keep it) and the other producers go inline.
    s[c].compute_inline();
    inline_elementwise_except(s, outs, {});
  }
  te::Stage st = s[out];
  if (nd < 2 || c.ndim() != nd) {
    // A matrix-vector product (1-d operand) or an epilogue of another rank: one output per
    // invocation, the local accumulator computed in place.
    te::IterVar f = out.axis(0);
    for (int d = 1; d < nd; ++d) f = st.fuse(f, out.axis(d));
    auto [bo, t] = st.split(f, 64);
    st.bind(bo, "blockIdx.x");
    st.bind(t, "threadIdx.x");
    s[cl].compute_at(st, t);
    return;
  }
  const GpuMatmulParams p = choose_params(out.shape()[nd - 2], out.shape()[nd - 1]);
  const int threads = p.thr_m * p.thr_n;
  auto [bi, ti, ii] = split3(st, out.axis(nd - 2), p.thr_m, p.tm);
  auto [bj, tj, ji] = split3(st, out.axis(nd - 1), p.thr_n, p.tn);
  std::vector<te::IterVar> order;
  for (int d = 0; d + 2 < nd; ++d) order.push_back(out.axis(d));
  order.insert(order.end(), {bi, bj, ti, tj, ii, ji});
  st.reorder(order);
  if (nd > 2) {
    te::IterVar batch = out.axis(0);
    for (int d = 1; d + 2 < nd; ++d) batch = st.fuse(batch, out.axis(d));
    st.bind(batch, "blockIdx.z");
  }
  st.bind(bi, "blockIdx.y");
  st.bind(bj, "blockIdx.x");
  te::IterVar t = st.fuse(ti, tj);
  st.bind(t, "threadIdx.x");
  st.unroll(ii);
  st.unroll(ji);
  // The accumulators: all of K per invocation, the tm x tn block innermost and unrolled.
  te::Stage lc = s[cl];  // a handle: cache_read below adds stages to the schedule
  lc.compute_at(st, t);
  auto [ko, ki] = lc.split(cl.reduce_axis(0), p.kt);
  std::vector<te::IterVar> lorder;
  for (int d = 0; d + 2 < nd; ++d) lorder.push_back(cl.axis(d));
  lorder.insert(lorder.end(), {ko, ki, cl.axis(nd - 2), cl.axis(nd - 1)});
  lc.reorder(lorder);
  lc.unroll(ki);
  lc.unroll(cl.axis(nd - 2));
  lc.unroll(cl.axis(nd - 1));
  // A and B tiles of each k step in workgroup memory.
  if (!p.stage_tiles) return;
  for (const te::Tensor& operand : operands) {
    if (operand.ndim() < 2) continue;  // a 1-d operand: read in place
    te::Tensor staged = s.cache_read(operand, "shared", {cl});
    cooperative_load(s, staged, lc, ko, threads);
  }
}

}  // namespace

void register_gpu_matmul_strategies() {
  register_implementation("nn.dense", "gpu", {"dense.gpu", dense_compute, matmul_schedule});
  register_implementation("matmul", "gpu", {"matmul.gpu", matmul_compute, matmul_schedule});
}

}  // namespace anvil::ops
