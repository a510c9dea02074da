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
//   cumsum, topk: hand-written kernels (TE has no scan or per-row heap): a linear scan
//     (cpu/cumsum.h) and one pass per row with a k-heap (cpu/topk.h).
#include <algorithm>
#include <cmath>
#include <optional>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/cumsum.h"
#include "anvil/ops/cpu/schedule_reduce.h"
#include "anvil/ops/cpu/topk.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::DataType;
using ir::PrimExpr;
using ir::Var;

constexpr int64_t kUnrolledProd = 64;

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

void add(const std::string& op, std::vector<te::Tensor> (*f)(const graph::CallNode&, const te::Tensor&)) {
  OpImplementation impl;
  impl.name = op + ".cpu";
  impl.compute = [f](const graph::CallNode& call, const std::vector<te::Tensor>& inputs) { return f(call, inputs[0]); };
  impl.schedule = schedule_reduce;
  register_implementation(op, "cpu", std::move(impl));
}

void add_kernel(const std::string& op, KernelFn kernel) {
  OpImplementation impl;
  impl.name = op + ".cpu";
  impl.kernel = std::move(kernel);
  register_implementation(op, "cpu", std::move(impl));
}

}  // namespace

void register_reduce_strategies() {
  for (const char* op : {"sum", "mean", "max", "min"}) add(op, compute_simple);
  add("prod", compute_prod);
  add("argmax", compute_arg);
  add("argmin", compute_arg);
  add_kernel("cumsum", cumsum_kernel);
  add_kernel("topk", topk_kernel);
}

}  // namespace anvil::ops
