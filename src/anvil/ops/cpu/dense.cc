// nn.dense and matmul for CPUs.
//
//  - "dense.x86" / "matmul.x86" (float32, static N and K, 2-d operands after flattening the
//    leading dims of dense's data): the packed GEMM of ops/cpu/matmul.h on the operands as
//    they are — dense's [N, K] weight is read transposed by the B packing stage (one pass over
//    the weight per call; a compile-time packing pass can take that over). The rows M may be
//    symbolic (a symbolic batch). Data of rank > 2 is read through a flattened view and the
//    [M, N] result copied to the [..., N] output. Not for a matmul of at most 4 static rows.
//  - nn.dense with weight_layout "packed" (a constant weight packed at compile time by
//    prepack_weights into the GEMM's [N/nr, K, nr] panels): the same GEMM without its B packing
//    stage; at most 8 static rows take the GEMV-like schedule_matmul_x86_few_rows instead (one
//    pass down each panel, parallel over panel groups, no A packing).
//  - "matmul_batched.x86" (everything else: batch dims, symbolic N or K): an mr x vector tile of
//    accumulators per (batch, row block, column block), B rows read contiguously, the
//    reduction outside the tile, (batch, row block) in parallel. float16/bfloat16 operands
//    accumulate in float32, cast back in an elementwise stage after the product.
#include <algorithm>
#include <tuple>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/matmul.h"
#include "anvil/ops/cpu/nn_strategies.h"
#include "anvil/ops/cpu/nn_util.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::PrimExpr;
using ir::Var;

PrimExpr product(const std::vector<PrimExpr>& dims, size_t from, size_t to) {
  PrimExpr p = ir::int_imm(1);
  for (size_t i = from; i < to; ++i) p = p * dims[i];
  return arith::simplify(p);
}

// Row-major unravel of a flat index over dims[0..count).
std::vector<PrimExpr> unravel(PrimExpr flat, const std::vector<PrimExpr>& dims, size_t count) {
  std::vector<PrimExpr> idx(count);
  for (size_t i = count; i-- > 0;) {
    if (i == 0) {
      idx[i] = flat;
    } else {
      idx[i] = ir::floormod(flat, dims[i]);
      flat = ir::floordiv(flat, dims[i]);
    }
  }
  return idx;
}

bool gemm_applies(DataType dt, const PrimExpr& n, const PrimExpr& k) {
  return dt == DataType::float32() && ir::as_const_int(n) && ir::as_const_int(k);
}

// The packed GEMM pays one pass over B per call to pack it; a matmul of a few rows (a matrix-
// vector product at batch 1) reads each row of a [K, N] B once anyway, contiguously, so it takes
// the unpacked tile schedule instead (dense's [N, K] weight would be gathered there: it keeps the
// GEMM). MobileNetV2's 1x1280 by 1280x1000 classifier: 0.19 ms instead of 0.45 (ORT 0.20).
constexpr int64_t kMaxUnpackedRows = 4;

bool few_rows(const PrimExpr& m) {
  std::optional<int64_t> rows = ir::as_const_int(arith::simplify(m));
  return rows && *rows <= kMaxUnpackedRows;
}

MatmulX86Params gemm_params(const PrimExpr& m, int64_t n, int64_t k) {
  // The compute has no target: the host's vector width ("llvm"), rows guessed when symbolic.
  return matmul_x86_params(ir::as_const_int(m).value_or(128), n, k, Target::parse("llvm"));
}

// Rows up to which a product on prepacked panels takes the few-rows (GEMV-like) schedule.
constexpr int64_t kMaxFewRows = 8;

// gemm_params with the prepacked weight's panel width; few static rows read A in place.
MatmulX86Params panel_params(const PrimExpr& m, int64_t n, int64_t k, int nr) {
  MatmulX86Params p = gemm_params(m, n, k);
  if (p.nr != nr) {
    p.nr = nr;
    while (nr % p.vector_lanes != 0) p.vector_lanes /= 2;
    if (p.kc > 0) p.nc = static_cast<int>(std::min<int64_t>((n + nr - 1) / nr, std::max(1, 2048 / nr)) * nr);
  }
  std::optional<int64_t> rows = ir::as_const_int(arith::simplify(m));
  if (rows && *rows <= kMaxFewRows) p.kc = 0, p.nc = 0, p.mr = p.mc = static_cast<int>(*rows);
  // Symbolic rows: one register tile per row block, so that loop_partition splits the row
  // blocks at M / mr and every full tile runs without a row guard (a guard inside the k loop
  // keeps LLVM from holding the accumulators in registers; with 16-row blocks a batch of 8 rows
  // ran entirely guarded, 4x slower).
  if (!rows) p.mc = p.mr;
  return p;
}

bool few_rows_on_panels(const PrimExpr& m) {
  std::optional<int64_t> rows = ir::as_const_int(arith::simplify(m));
  return rows && *rows <= kMaxFewRows;
}

// A [M, K] view of `a`'s leading dims (a itself when 2-d), then the product made by `make` on
// it, then the copy into `oshape` when it is not [M, N].
std::vector<te::Tensor> gemm_with(const te::Tensor& a, const std::function<te::Tensor(const te::Tensor&, bool)>& make,
                                  const std::vector<PrimExpr>& oshape) {
  const std::vector<PrimExpr> ad = a.shape();
  te::Tensor a2 = a;
  if (ad.size() != 2) {
    PrimExpr m = product(ad, 0, ad.size() - 1);
    a2 = te::compute(
        {m, ad.back()},
        [&](Var i, Var kk) {
          std::vector<PrimExpr> idx = unravel(i, ad, ad.size() - 1);
          idx.push_back(kk);
          return a(idx);
        },
        "data_2d");
  }
  const bool copy = oshape.size() != 2;
  te::Tensor c = make(a2, copy);
  if (!copy) return {c};
  return {te::compute(
      oshape,
      [&](const std::vector<Var>& i) {
        PrimExpr flat = ir::int_imm(0);
        for (size_t d = 0; d + 1 < oshape.size(); ++d) flat = flat * oshape[d] + i[d];
        return c(flat, i.back());
      },
      "dense")};
}

std::vector<te::Tensor> gemm(const te::Tensor& a, const std::function<PrimExpr(PrimExpr, PrimExpr)>& b_at, int64_t n,
                             int64_t k, const std::vector<PrimExpr>& oshape) {
  return gemm_with(
      a,
      [&](const te::Tensor& a2, bool copy) {
        return matmul_x86_compute(a2, b_at, n, k, gemm_params(a2.shape()[0], n, k), copy ? "gemm" : "dense").C;
      },
      oshape);
}

// The product on prepacked panels [ceil(N/nr), K, nr]: "gemv" for few static rows, else
// "gemm_panels" (the packed GEMM without its B packing stage).
std::vector<te::Tensor> gemm_on_panels(const te::Tensor& a, const te::Tensor& panels, int64_t n,
                                       const std::vector<PrimExpr>& oshape) {
  const int64_t k = *ir::as_const_int(panels.shape()[1]);
  const int nr = static_cast<int>(*ir::as_const_int(panels.shape()[2]));
  return gemm_with(
      a,
      [&](const te::Tensor& a2, bool) {
        const PrimExpr m = a2.shape()[0];
        return matmul_x86_compute_on_panels(a2, panels, n, panel_params(m, n, k, nr),
                                            few_rows_on_panels(m) ? "gemv" : "gemm_panels")
            .C;
      },
      oshape);
}

void panels_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  te::Tensor c = find_tensor(outs, "gemv");
  const bool few = c.defined();
  if (!few) c = find_tensor(outs, "gemm_panels");
  const bool tail = !c.same_as(outs[0]);
  if (tail) inline_elementwise_except(s, outs, {"A_packed", "data_2d"});
  MatmulX86 mm;
  mm.C = c;
  mm.packed_A = find_tensor(outs, "A_packed");
  for (const te::Tensor& in : c.get()->inputs())
    if (in.ndim() == 3 && in.name() != "A_packed") mm.packed_B = in;
  te::Tensor a2 = find_tensor(outs, "data_2d");
  if (a2.defined()) s[a2].compute_inline();
  const int64_t n = *ir::as_const_int(c.shape()[1]), k = *ir::as_const_int(mm.packed_B.shape()[1]);
  const int nr = static_cast<int>(*ir::as_const_int(mm.packed_B.shape()[2]));
  mm.params = panel_params(c.shape()[0], n, k, nr);
  if (few) {
    const int64_t panels = *ir::as_const_int(mm.packed_B.shape()[0]);
    schedule_matmul_x86_few_rows(s, mm, few_rows_panel_group(*ir::as_const_int(c.shape()[0]), panels, nr, mm.params.vector_lanes));
  } else {
    schedule_matmul_x86(s, mm);
  }
  if (tail) schedule_injective_output(s, outs[0], target);
}

// outs[0] is the product, or its [..., N] copy, or an elementwise epilogue of either.
void gemm_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  te::Tensor c = find_tensor(outs, "gemm");
  if (!c.defined()) c = find_tensor(outs, "dense");
  const bool copy = !c.same_as(outs[0]);
  if (copy) inline_elementwise_except(s, outs, {"B_packed", "A_packed", "data_2d"});
  MatmulX86 mm;
  mm.C = c;
  mm.packed_B = find_tensor(outs, "B_packed");
  mm.packed_A = find_tensor(outs, "A_packed");
  te::Tensor a2 = find_tensor(outs, "data_2d");
  if (a2.defined()) s[a2].compute_inline();
  const int64_t n = *ir::as_const_int(c.shape()[1]), k = *ir::as_const_int(mm.packed_B.shape()[1]);
  mm.params = gemm_params(c.shape()[0], n, k);
  schedule_matmul_x86(s, mm);
  if (copy) schedule_injective_output(s, outs[0], target);
}

// out[b..., i, j] = sum_k a[b..., i, k] * b[b..., k, j] with numpy broadcasting of the batch
// dims and 1-d promotion (a 1-d a is one row, a 1-d b one column).
std::vector<te::Tensor> batched_compute(const te::Tensor& a, const te::Tensor& b, bool b_is_nk,
                                        const std::vector<PrimExpr>& oshape) {
  const int ra = a.ndim(), rb = b.ndim(), ro = int(oshape.size());
  const PrimExpr K = a.shape()[ra - 1];
  te::IterVar k = te::reduce_axis(0, K, "k");
  // Output index -> (batch idx..., i, j); the promoted dims of 1-d operands take no index.
  const bool a1 = ra == 1, b1 = rb == 1 && !b_is_nk;
  const int obatch = ro - (a1 ? 0 : 1) - (b1 ? 0 : 1);
  auto batch_index = [&](const te::Tensor& t, int rank, const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    const int tb = rank - 2;
    for (int d = 0; d < tb; ++d) {
      const int od = obatch - tb + d;
      std::optional<int64_t> c = ir::as_const_int(t.shape()[d]);
      idx.push_back(c && *c == 1 && !(ir::as_const_int(oshape[od]) == std::optional<int64_t>(1)) ? PrimExpr(ir::int_imm(0))
                                                                                              : PrimExpr(i[od]));
    }
    return idx;
  };
  // float16/bfloat16 accumulate in float32 (as ONNX Runtime's kernels): a cast stage after it.
  const DataType acc = compute_dtype(a.dtype());
  const std::string name = b_is_nk ? "dense" : "matmul";
  te::Tensor product = te::compute(
      oshape,
      [&](const std::vector<Var>& i) {
        PrimExpr row = a1 ? PrimExpr() : PrimExpr(i[obatch]);
        PrimExpr col = b1 ? PrimExpr() : PrimExpr(i[ro - 1]);
        std::vector<PrimExpr> ai = a1 ? std::vector<PrimExpr>{} : batch_index(a, ra, i);
        if (!a1) ai.push_back(row);
        ai.push_back(k);
        std::vector<PrimExpr> bi;
        if (b_is_nk) {
          bi = {col, k};
        } else {
          bi = b1 ? std::vector<PrimExpr>{} : batch_index(b, rb, i);
          bi.push_back(k);
          if (!b1) bi.push_back(col);
        }
        return te::sum(convert(acc, a(ai)) * convert(acc, b(bi)), {k});
      },
      name);
  if (acc == a.dtype()) return {product};
  return {te::compute(
      oshape, [&](const std::vector<Var>& i) { return convert(a.dtype(), product(std::vector<PrimExpr>(i.begin(), i.end()))); },
      name + ".cast")};
}

// mr rows x one vector of columns per tile (accumulators in a local stage), reduction outside.
void batched_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  const te::Tensor& out = outs[0];
  const int nd = out.ndim();
  te::Tensor local = s.cache_write(out, "local");
  te::Stage& st = s[out];
  const int vf = vector_factor(out.shape()[nd - 1], lanes_for(target, out.dtype()));
  std::vector<te::IterVar> lead;
  for (int i = 0; i + 2 < nd; ++i) lead.push_back(out.axis(i));
  te::IterVar attach;
  if (nd >= 2) {
    constexpr int mr = 4;
    auto [io, ii] = st.split(out.axis(nd - 2), mr);
    te::IterVar jo = out.axis(nd - 1), ji;
    if (vf > 0) std::tie(jo, ji) = st.split(out.axis(nd - 1), vf);
    std::vector<te::IterVar> order = lead;
    order.insert(order.end(), {io, jo, ii});
    if (vf > 0) order.push_back(ji);
    st.reorder(order);
    if (vf > 0) st.vectorize(ji);
    lead.push_back(io);
    attach = jo;
  } else {
    attach = out.axis(0);
    if (vf > 0) {
      auto [jo, ji] = st.split(out.axis(0), vf);
      st.vectorize(ji);
      attach = jo;
    }
  }
  if (!lead.empty()) fuse_all_parallel(st, lead);
  s[local].compute_at(st, attach);
  std::vector<te::IterVar> order;
  for (int i = 0; i + 2 < nd; ++i) order.push_back(local.axis(i));
  order.push_back(local.reduce_axis(0));
  if (nd >= 2) order.push_back(local.axis(nd - 2));
  order.push_back(local.axis(nd - 1));
  s[local].reorder(order);
  if (nd >= 2) s[local].unroll(local.axis(nd - 2));
  if (vf > 0) s[local].vectorize(local.axis(nd - 1));
}

std::vector<te::Tensor> dense_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  const te::Tensor& w = in[1];
  if (graph::get_string(call.attrs(), "weight_layout", "NK") == "packed") {
    if (x.dtype() != DataType::float32() || x.ndim() < 2)
      value_error("nn.dense with a packed weight: the CPU kernel takes float32 data of rank >= 2, got ", x.ndim(),
                  "-d ", x.dtype().to_string());
    return gemm_on_panels(x, w, graph::get_int(call.attrs(), "units"), out_shape(call));
  }
  if (gemm_applies(x.dtype(), w.shape()[0], w.shape()[1]) && x.ndim() >= 2) {
    return gemm(x, [&](PrimExpr k, PrimExpr j) { return w(j, k); }, *ir::as_const_int(w.shape()[0]),
                *ir::as_const_int(w.shape()[1]), out_shape(call));
  }
  return batched_compute(x, w, true, out_shape(call));
}

std::vector<te::Tensor> matmul_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& a = in[0];
  const te::Tensor& b = in[1];
  if (a.ndim() == 2 && b.ndim() == 2 && gemm_applies(a.dtype(), b.shape()[1], b.shape()[0]) && !few_rows(a.shape()[0])) {
    return gemm(a, [&](PrimExpr k, PrimExpr j) { return b(k, j); }, *ir::as_const_int(b.shape()[1]),
                *ir::as_const_int(b.shape()[0]), out_shape(call));
  }
  return batched_compute(a, b, false, out_shape(call));
}

void dense_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  if (find_tensor(outs, "gemv").defined() || find_tensor(outs, "gemm_panels").defined())
    return panels_schedule(s, outs, target);
  if (find_tensor(outs, "B_packed").defined()) return gemm_schedule(s, outs, target);
  te::Tensor r = outs[0];
  if (r.reduce_axis().empty()) {  // an elementwise epilogue fused after the product
    inline_elementwise_except(s, outs, {});
    r = find_tensor(outs, "matmul");
    if (!r.defined()) r = find_tensor(outs, "dense");
  }
  if (r.ndim() < 2) return;  // a vector-vector or matrix-vector product: the plain loop nest
  batched_schedule(s, {r}, target);
  if (!r.same_as(outs[0])) schedule_injective_output(s, outs[0], target);
}

// [N, K] ("NK") or [K, N] ("KN") -> [ceil(N/b), K, b], columns past N repeating column N-1.
std::vector<te::Tensor> pack_weight_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& w = in[0];
  const int b = static_cast<int>(graph::get_int(call.attrs(), "block"));
  const bool nk = graph::get_string(call.attrs(), "layout", "NK") == "NK";
  const int64_t n = *ir::as_const_int(w.shape()[nk ? 0 : 1]);
  return {te::compute(
      out_shape(call),
      [&](Var p, Var kk, Var l) {
        PrimExpr j = ir::min(p * b + l, static_cast<int>(n - 1));
        return nk ? w(j, kk) : w(kk, j);
      },
      "dense_pack_weight")};
}

}  // namespace

int dense_panel_width(int64_t n, int64_t k, DataType dtype, const Target& target) {
  if (dtype != DataType::float32() || n <= 0 || k <= 0) return 0;
  return matmul_x86_params(128, n, k, target).nr;
}

void register_dense_strategies() {
  register_implementation("nn.dense", "cpu", {"dense.x86", dense_compute, dense_schedule});
  register_implementation("nn.dense_pack_weight", "cpu",
                          {"dense_pack_weight.x86", pack_weight_compute, schedule_injective});
  register_implementation("matmul", "cpu", {"matmul.x86", matmul_compute, dense_schedule});
}

}  // namespace anvil::ops
