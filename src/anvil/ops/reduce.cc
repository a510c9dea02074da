// CPU implementations of the reduce operators (graph/ops/reduce.cc), scheduled by
// ops/cpu/schedule_reduce.h.
//   sum/max/min: one te reduction (float16/bfloat16 accumulate in float32, then a cast stage);
//   mean: sum, then a stage dividing by the number of reduced elements (integers truncate);
//   prod: TE has no product reduction. A constant number of reduced elements up to
//     kUnrolledProd is one product expression (exact); otherwise the product is taken in float64
//     as sign * exp(sum(log|x|)) with zeros counted (relative error ~1e-15 per term: exact
//     after rounding for integer products below 2^50, float32 rounding for floats);
//   argmax/argmin: the extreme value, then the smallest (largest with select_last_index) index
//     holding it;
//   cumsum: a constant axis of 16 or more is a blocked scan, O(n sqrt(n)) (cumsum_blocked);
//     a shorter or symbolic one is out[i] = sum over k of (k <= i ? x[k] : 0), quadratic;
//   topk: k up to 32, k selection passes over the axis, O(k n) (topk_select); a larger or symbolic
//     k, a rank per element, then a gather of ranks 0..k-1 (quadratic, see compute_topk).
#include <algorithm>
#include <cmath>
#include <optional>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/schedule_reduce.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::DataType;
using ir::PrimExpr;
using ir::Var;

constexpr int64_t kUnrolledProd = 64;
// Shorter constant cumsum axes keep the one-stage quadratic form.
constexpr int64_t kBlockedCumsumMin = 16;
// TopK by selection (2k stages) up to this k; ranking beyond.
constexpr int64_t kSelectTopkMax = 32;

struct ReducePlan {
  std::vector<int> axes;  // reduced input axes, sorted
  bool keepdims = true;
  std::vector<PrimExpr> out_shape;
};

ReducePlan plan_of(const graph::CallNode& call, const te::Tensor& x) {
  ReducePlan p;
  std::vector<int64_t> axes = graph::get_ints(call.attrs(), "axes", {});
  if (axes.empty())
    for (int i = 0; i < x.ndim(); ++i) p.axes.push_back(i);
  else
    p.axes = graph::ops::normalize_axes(axes, x.ndim());
  std::sort(p.axes.begin(), p.axes.end());
  p.keepdims = graph::get_int(call.attrs(), "keepdims", 1) != 0;
  p.out_shape = call.type().shape();
  return p;
}

bool reduced(const ReducePlan& p, int d) { return std::find(p.axes.begin(), p.axes.end(), d) != p.axes.end(); }

// The input index for output index `idx`: kept axes from idx, reduced ones from `ks`
// (one per reduced axis, in axis order).
std::vector<PrimExpr> input_index(const ReducePlan& p, int ndim, const std::vector<Var>& idx,
                                  const std::vector<PrimExpr>& ks) {
  std::vector<PrimExpr> in;
  size_t o = 0, r = 0;
  for (int d = 0; d < ndim; ++d) {
    if (reduced(p, d)) {
      in.push_back(ks[r++]);
      if (p.keepdims) ++o;
    } else {
      in.push_back(idx[o++]);
    }
  }
  return in;
}

std::vector<te::IterVar> reduce_axes(const ReducePlan& p, const te::Tensor& x) {
  std::vector<te::IterVar> ks;
  for (int d : p.axes) ks.push_back(te::reduce_axis(0, x.shape()[d], "k" + std::to_string(d)));
  return ks;
}

std::vector<PrimExpr> vars_of(const std::vector<te::IterVar>& ks) {
  return std::vector<PrimExpr>(ks.begin(), ks.end());
}

using Reducer = PrimExpr (*)(const PrimExpr&, const std::vector<te::IterVar>&);

// One reduction of f(x[...]) in dtype acc over the plan's axes. An intermediate stage of a
// 0-d result has shape (1,) (lowering allocates no 0-d buffers); read it through at().
te::Tensor reduce_stage(const ReducePlan& p, const te::Tensor& x, Reducer r, DataType acc,
                        const std::function<PrimExpr(const PrimExpr&)>& f, const std::string& name,
                        bool intermediate = true) {
  std::vector<te::IterVar> ks = reduce_axes(p, x);
  bool padded = intermediate && p.out_shape.empty();
  return te::compute(
      padded ? std::vector<PrimExpr>{ir::int_imm(1)} : p.out_shape,
      [&](const std::vector<Var>& v) {
        std::vector<Var> idx = padded ? std::vector<Var>{} : v;
        return r(f(convert(acc, x(input_index(p, x.ndim(), idx, vars_of(ks))))), ks);
      },
      name);
}

// An intermediate stage read at output index idx.
PrimExpr at(const te::Tensor& t, const std::vector<Var>& idx) {
  if (idx.empty() && t.ndim() == 1) return t(ir::int_imm(0));
  return t(std::vector<PrimExpr>(idx.begin(), idx.end()));
}

PrimExpr reduced_count(const ReducePlan& p, const te::Tensor& x) {
  PrimExpr n = ir::int_imm(1);
  for (int d : p.axes) n = n * x.shape()[d];
  return n;
}

// out[idx] = convert(out_dtype, f(in[idx])) over the plan's output shape.
te::Tensor map(const ReducePlan& p, const te::Tensor& in, DataType out, const std::function<PrimExpr(const PrimExpr&)>& f,
               const std::string& name) {
  return te::compute(
      p.out_shape, [&](const std::vector<Var>& idx) { return convert(out, f(at(in, idx))); }, name);
}

std::vector<te::Tensor> compute_simple(const graph::CallNode& call, const te::Tensor& x) {
  ReducePlan p = plan_of(call, x);
  DataType out = x.dtype(), acc = compute_dtype(out);
  const std::string& op = call.op();
  auto id = [](const PrimExpr& v) { return v; };
  Reducer r = op == "max" ? te::max : op == "min" ? te::min : te::sum;
  if (op != "mean" && acc == out) return {reduce_stage(p, x, r, acc, id, op, false)};
  te::Tensor red = reduce_stage(p, x, r, acc, id, op + ".red");
  if (op == "mean") {
    PrimExpr n = reduced_count(p, x);
    return {map(p, red, out, [&](const PrimExpr& v) { return v / convert(acc, n); }, op)};
  }
  return {map(p, red, out, id, op)};
}

std::vector<te::Tensor> compute_prod(const graph::CallNode& call, const te::Tensor& x) {
  ReducePlan p = plan_of(call, x);
  DataType out = x.dtype(), acc = compute_dtype(out);
  std::vector<int64_t> extents;
  for (int d : p.axes) extents.push_back(ir::as_const_int(x.shape()[d]).value_or(-1));
  int64_t count = 1;
  for (int64_t e : extents) count = e < 0 || count < 0 ? -1 : count * e;
  if (count >= 0 && count <= kUnrolledProd) {
    return {te::compute(
        p.out_shape,
        [&](const std::vector<Var>& idx) {
          PrimExpr prod = ir::make_const(acc, 1);
          std::vector<PrimExpr> ks(p.axes.size(), ir::int_imm(0));
          for (int64_t i = 0; i < count; ++i) {
            int64_t rest = i;
            for (size_t j = p.axes.size(); j-- > 0;) {
              ks[j] = ir::int_imm(rest % extents[j]);
              rest /= extents[j];
            }
            PrimExpr v = convert(acc, x(input_index(p, x.ndim(), idx, ks)));
            prod = i == 0 ? v : prod * v;
          }
          return convert(out, prod);
        },
        "prod")};
  }
  DataType f64 = DataType::float64();
  auto zero = [&](const PrimExpr& v) { return ir::eq(v, ir::make_zero(v.dtype())); };
  te::Tensor zeros = reduce_stage(p, x, te::sum, acc, [&](const PrimExpr& v) {
    return ir::select(zero(v), ir::int_imm(1), ir::int_imm(0));
  }, "prod.zeros");
  te::Tensor negs = reduce_stage(p, x, te::sum, acc, [&](const PrimExpr& v) {
    return ir::select(v < ir::make_zero(v.dtype()), ir::int_imm(1), ir::int_imm(0));
  }, "prod.negatives");
  te::Tensor logs = reduce_stage(p, x, te::sum, acc, [&](const PrimExpr& v) {
    PrimExpr a = ir::abs(convert(f64, v));
    return ir::select(zero(v), ir::make_zero(f64), ir::log(a));
  }, "prod.logs");
  return {te::compute(
      p.out_shape,
      [&](const std::vector<Var>& idx) {
        PrimExpr mag = ir::exp(at(logs, idx));
        PrimExpr signed_mag = ir::select(ir::eq(ir::floormod(at(negs, idx), 2), 1), -mag, mag);
        if (!out.is_float()) signed_mag = ir::round(signed_mag);
        return convert(out, ir::select(at(zeros, idx) > 0, ir::make_zero(f64), signed_mag));
      },
      "prod")};
}

std::vector<te::Tensor> compute_arg(const graph::CallNode& call, const te::Tensor& x) {
  ReducePlan p;
  p.axes = {graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", 0), x.ndim())};
  p.keepdims = graph::get_int(call.attrs(), "keepdims", 1) != 0;
  p.out_shape = call.type().shape();
  bool is_max = call.op() == "argmax", last = graph::get_int(call.attrs(), "select_last_index", 0) != 0;
  DataType acc = compute_dtype(x.dtype()), i64 = DataType::int64();
  auto id = [](const PrimExpr& v) { return v; };
  te::Tensor best = reduce_stage(p, x, is_max ? te::max : te::min, acc, id, call.op() + ".value");
  te::IterVar k = te::reduce_axis(0, x.shape()[p.axes[0]], "k");
  return {te::compute(
      p.out_shape,
      [&](const std::vector<Var>& idx) {
        PrimExpr v = convert(acc, x(input_index(p, x.ndim(), idx, {k})));
        PrimExpr hit = ir::eq(v, at(best, idx));
        PrimExpr kk = ir::cast(i64, k.var());
        if (last) return te::max(ir::select(hit, kk, ir::make_const(i64, -1)), {k});
        return te::min(ir::select(hit, kk, ir::int_imm(INT64_MAX, i64)), {k});
      },
      call.op())};
}

// The quadratic form: out[i] sums x[k] over every k on the taken side of i.
te::Tensor cumsum_quadratic(const te::Tensor& x, int axis, bool exclusive, bool reverse, DataType acc) {
  te::IterVar k = te::reduce_axis(0, x.shape()[axis], "k");
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& idx) {
        std::vector<PrimExpr> in(idx.begin(), idx.end());
        in[axis] = k.var();
        PrimExpr i = idx[axis], kv = k.var();
        PrimExpr take = reverse ? (exclusive ? kv > i : kv >= i) : (exclusive ? kv < i : kv <= i);
        return te::sum(ir::select(take, convert(acc, x(in)), ir::make_zero(acc)), {k});
      },
      "cumsum.red");
}

// A two-level blocked scan over a constant axis of length n (TE has no scan/recurrence, so not
// linear, but O(n * sqrt(n)) instead of O(n^2)): positions p in scan order (p = i forward,
// n-1-i reversed) are cut into nb blocks of B ~ sqrt(n); local[p] = the (exclusive) prefix sum
// of p's block up to p, total[b] = block b's sum, offset[b] = sum of totals before b, and
// out[i] = local[p] + offset[p / B]. Each stage is an ordinary reduction of B or nb terms, so the
// other axes are vectorised by the reduce schedule as before.
te::Tensor cumsum_blocked(const te::Tensor& x, int axis, int64_t n, bool exclusive, bool reverse, DataType acc) {
  int64_t B = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  int64_t nb = (n + B - 1) / B;
  auto scan_pos = [&](const PrimExpr& p) { return reverse ? ir::int_imm(n - 1) - p : p; };
  auto with_axis = [&](const std::vector<Var>& idx, const PrimExpr& a) {
    std::vector<PrimExpr> in(idx.begin(), idx.end());
    in[axis] = a;
    return in;
  };
  // y(idx, p): x at scan position p (zero past the end).
  auto y = [&](const std::vector<Var>& idx, const PrimExpr& p) {
    PrimExpr safe = ir::min(p, ir::int_imm(n - 1));
    return ir::select(p < ir::int_imm(n), convert(acc, x(with_axis(idx, scan_pos(safe)))), ir::make_zero(acc));
  };
  std::vector<PrimExpr> padded = x.shape(), blocks = x.shape();
  padded[axis] = ir::int_imm(nb * B);
  blocks[axis] = ir::int_imm(nb);
  te::IterVar k = te::reduce_axis(0, ir::int_imm(B), "k");
  te::Tensor local = te::compute(
      padded,
      [&](const std::vector<Var>& idx) {
        PrimExpr p = idx[axis], j = ir::floormod(p, ir::int_imm(B));
        PrimExpr take = exclusive ? k.var() < j : k.var() <= j;
        PrimExpr q = ir::floordiv(p, ir::int_imm(B)) * ir::int_imm(B) + k.var();
        return te::sum(ir::select(take, y(idx, q), ir::make_zero(acc)), {k});
      },
      "cumsum.local");
  te::IterVar t = te::reduce_axis(0, ir::int_imm(B), "t");
  te::Tensor total = te::compute(
      blocks,
      [&](const std::vector<Var>& idx) { return te::sum(y(idx, idx[axis] * ir::int_imm(B) + t.var()), {t}); },
      "cumsum.total");
  te::IterVar c = te::reduce_axis(0, ir::int_imm(nb), "c");
  te::Tensor offset = te::compute(
      blocks,
      [&](const std::vector<Var>& idx) {
        return te::sum(ir::select(c.var() < idx[axis], total(with_axis(idx, c.var())), ir::make_zero(acc)), {c});
      },
      "cumsum.offset");
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& idx) {
        PrimExpr p = scan_pos(idx[axis]);
        return local(with_axis(idx, p)) + offset(with_axis(idx, ir::floordiv(p, ir::int_imm(B))));
      },
      "cumsum.red");
}

std::vector<te::Tensor> compute_cumsum(const graph::CallNode& call, const te::Tensor& x) {
  int axis = graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", 0), x.ndim());
  bool exclusive = graph::get_int(call.attrs(), "exclusive", 0) != 0;
  bool reverse = graph::get_int(call.attrs(), "reverse", 0) != 0;
  DataType out = x.dtype(), acc = compute_dtype(out);
  std::optional<int64_t> n = ir::as_const_int(x.shape()[axis]);
  te::Tensor red = n && *n >= kBlockedCumsumMin ? cumsum_blocked(x, axis, *n, exclusive, reverse, acc)
                                               : cumsum_quadratic(x, axis, exclusive, reverse, acc);
  if (acc == out) return {red};
  ReducePlan p;
  p.out_shape = x.shape();
  return {map(p, red, out, [](const PrimExpr& v) { return v; }, "cumsum")};
}

// topk by selection, for a constant k up to kSelectTopkMax: pass j finds the best element
// coming after pass j-1's (value, index) in the output order (worse, or equal at a higher
// index: ONNX's tie rule) — a max/min over the axis, then the lowest index holding it. 2k
// reductions of n terms (O(k n)) instead of the ranking's n^2; the output is sorted.
std::vector<te::Tensor> topk_select(const te::Tensor& x, int axis, int64_t k, bool largest, DataType acc,
                                    const std::vector<PrimExpr>& out_shape) {
  DataType i32 = DataType::int32(), i64 = DataType::int64();
  std::vector<PrimExpr> kept = x.shape();
  kept[axis] = ir::int_imm(1);
  auto along = [&](const std::vector<Var>& idx, const PrimExpr& a) {
    std::vector<PrimExpr> in(idx.begin(), idx.end());
    in[axis] = a;
    return in;
  };
  std::vector<te::Tensor> vals, inds;
  for (int64_t j = 0; j < k; ++j) {
    // q is a candidate for pass j: it comes after pass j-1's pick.
    auto candidate = [&](const std::vector<Var>& idx, const PrimExpr& xq, const PrimExpr& q) -> PrimExpr {
      if (j == 0) return ir::bool_imm(true);
      PrimExpr v = vals.back()(along(idx, ir::int_imm(0))), i = inds.back()(along(idx, ir::int_imm(0)));
      return (largest ? xq < v : xq > v) || (ir::eq(xq, v) && q > i);
    };
    std::string pass = std::to_string(j);
    te::IterVar q = te::reduce_axis(0, x.shape()[axis], "q");
    te::Tensor v = te::compute(
        kept,
        [&](const std::vector<Var>& idx) {
          PrimExpr xq = convert(acc, x(along(idx, q.var())));
          te::ReduceKind kind = largest ? te::ReduceKind::kMax : te::ReduceKind::kMin;
          PrimExpr src = ir::select(candidate(idx, xq, q.var()), xq, te::reduce_identity(kind, acc));
          return largest ? te::max(src, {q}) : te::min(src, {q});
        },
        "topk.value" + pass);
    te::IterVar r = te::reduce_axis(0, x.shape()[axis], "r");
    te::Tensor i = te::compute(
        kept,
        [&](const std::vector<Var>& idx) {
          PrimExpr xr = convert(acc, x(along(idx, r.var())));
          PrimExpr hit = candidate(idx, xr, r.var()) && ir::eq(xr, v(along(idx, ir::int_imm(0))));
          return te::min(ir::select(hit, ir::cast(i32, r.var()), ir::int_imm(INT32_MAX)), {r});
        },
        "topk.index" + pass);
    vals.push_back(v);
    inds.push_back(i);
  }
  auto pick = [&](const std::vector<te::Tensor>& stage, DataType dtype, const std::string& name) {
    return te::compute(
        out_shape,
        [&](const std::vector<Var>& idx) {
          PrimExpr r = ir::cast(dtype, stage.back()(along(idx, ir::int_imm(0))));
          for (int64_t j = k - 1; j-- > 0;)
            r = ir::select(ir::eq(idx[axis], ir::int_imm(j)), ir::cast(dtype, stage[j](along(idx, ir::int_imm(0)))), r);
          return r;
        },
        name);
  };
  return {pick(vals, acc, "topk.values.sel"), pick(inds, i64, "topk.indices")};
}

// topk by ranking (k symbolic or above kSelectTopkMax): rank[i] = the number of elements before x[i] in the output order (better, or
// equal and at a lower index: ONNX's tie rule), a permutation of the axis; output j gathers the
// element of rank j. Quadratic in the axis length; the output is always sorted.
std::vector<te::Tensor> compute_topk(const graph::CallNode& call, const te::Tensor& x) {
  int axis = graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", -1), x.ndim());
  bool largest = graph::get_int(call.attrs(), "largest", 1) != 0;
  DataType out = x.dtype(), acc = compute_dtype(out), i64 = DataType::int64();
  PrimExpr n = x.shape()[axis];
  const std::vector<PrimExpr>& out_shape = call.type().field(0).shape();
  if (std::optional<int64_t> k = ir::as_const_int(out_shape[axis]); k && *k >= 1 && *k <= kSelectTopkMax) {
    std::vector<te::Tensor> r = topk_select(x, axis, *k, largest, acc, out_shape);
    if (acc != out) {
      ReducePlan p;
      p.out_shape = out_shape;
      r[0] = map(p, r[0], out, [](const PrimExpr& v) { return v; }, "topk.values");
    }
    return r;
  }
  auto along = [&](const std::vector<Var>& idx, const PrimExpr& a) {
    std::vector<PrimExpr> in(idx.begin(), idx.end());
    in[axis] = a;
    return in;
  };
  te::IterVar q = te::reduce_axis(0, n, "q");
  te::Tensor rank = te::compute(
      x.shape(),
      [&](const std::vector<Var>& idx) {
        PrimExpr xi = convert(acc, x(std::vector<PrimExpr>(idx.begin(), idx.end())));
        PrimExpr xq = convert(acc, x(along(idx, q.var())));
        PrimExpr before = (largest ? xq > xi : xq < xi) || (ir::eq(xq, xi) && q.var() < idx[axis]);
        return te::sum(ir::select(before, ir::int_imm(1), ir::int_imm(0)), {q});
      },
      "topk.rank");
  auto gather = [&](DataType dtype, const std::function<PrimExpr(const std::vector<Var>&, const PrimExpr&)>& value,
                    const std::string& name) {
    te::IterVar i = te::reduce_axis(0, n, "i");
    return te::compute(
        out_shape,
        [&](const std::vector<Var>& idx) {
          PrimExpr hit = ir::eq(rank(along(idx, i.var())), idx[axis]);
          return te::sum(ir::select(hit, value(idx, i.var()), ir::make_zero(dtype)), {i});
        },
        name);
  };
  te::Tensor values = gather(acc, [&](const std::vector<Var>& idx, const PrimExpr& i) {
    return convert(acc, x(along(idx, i)));
  }, acc == out ? "topk.values" : "topk.values.f32");
  te::Tensor indices = gather(i64, [&](const std::vector<Var>&, const PrimExpr& i) { return ir::cast(i64, i); },
                              "topk.indices");
  if (acc != out) {
    ReducePlan p;
    p.out_shape = out_shape;
    values = map(p, values, out, [](const PrimExpr& v) { return v; }, "topk.values");
  }
  return {values, indices};
}

void add(const std::string& op, std::vector<te::Tensor> (*f)(const graph::CallNode&, const te::Tensor&)) {
  OpImplementation impl;
  impl.name = op + ".cpu";
  impl.compute = [f](const graph::CallNode& call, const std::vector<te::Tensor>& inputs) { return f(call, inputs[0]); };
  impl.schedule = schedule_reduce;
  register_implementation(op, "cpu", std::move(impl));
}

}  // namespace

void register_reduce_strategies() {
  for (const char* op : {"sum", "mean", "max", "min"}) add(op, compute_simple);
  add("prod", compute_prod);
  add("argmax", compute_arg);
  add("argmin", compute_arg);
  add("cumsum", compute_cumsum);
  add("topk", compute_topk);
}

}  // namespace anvil::ops
