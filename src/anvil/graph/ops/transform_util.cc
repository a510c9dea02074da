// The index arithmetic of graph/ops/transform.h: ONNX slice normalisation (constant and
// symbolic ends), strided_slice's spec, and products of dims compared by their factors.
#include <algorithm>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/graph/ops/transform.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/structural_equal.h"

namespace anvil::graph::ops {

using ir::as_const_int;

namespace {

void factor_into(const PrimExpr& e, DimFactors& f) {
  if (std::optional<int64_t> v = as_const_int(e)) f.constant *= *v;
  else if (const auto* m = e.as<ir::MulNode>()) factor_into(m->a(), f), factor_into(m->b(), f);
  else f.others.push_back(e);
}

// Removes from a.others and b.others the factors they share; true when both end up empty.
bool cancel(DimFactors& a, DimFactors& b) {
  for (auto it = b.others.begin(); it != b.others.end();) {
    auto m = std::find_if(a.others.begin(), a.others.end(), [&](const PrimExpr& x) { return ir::structural_equal(x, *it); });
    if (m == a.others.end()) {
      ++it;
      continue;
    }
    a.others.erase(m);
    it = b.others.erase(it);
  }
  return a.others.empty() && b.others.empty();
}

}  // namespace

DimFactors factor_dims(const std::vector<PrimExpr>& dims) {
  DimFactors f;
  for (const PrimExpr& d : dims) factor_into(arith::simplify(d), f);
  return f;
}

std::optional<PrimExpr> exact_quotient(const std::vector<PrimExpr>& num, const std::vector<PrimExpr>& den) {
  DimFactors a = factor_dims(num), b = factor_dims(den);
  cancel(a, b);
  if (!b.others.empty() || b.constant == 0 || a.constant % b.constant != 0) return std::nullopt;
  PrimExpr out = ir::int_imm(a.constant / b.constant);
  for (const PrimExpr& x : a.others) out = out * x;
  return arith::simplify(out);
}

bool products_differ(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  DimFactors fa = factor_dims(a), fb = factor_dims(b);
  return cancel(fa, fb) && fa.constant != fb.constant;
}

SliceRange normalize_slice(const PrimExpr& dim, int64_t begin, int64_t end, int64_t stride) {
  if (stride == 0) value_error("slice stride is 0");
  if (std::optional<int64_t> d = as_const_int(dim)) {
    int64_t n = *d;
    int64_t b = begin < 0 ? begin + n : begin, e = end < 0 ? end + n : end;
    int64_t len;
    if (stride > 0) {
      b = std::clamp<int64_t>(b, 0, n), e = std::clamp<int64_t>(e, 0, n);
      len = e > b ? (e - b + stride - 1) / stride : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, n - 1), e = std::clamp<int64_t>(e, -1, n - 1);
      len = b > e ? (b - e - stride - 1) / -stride : 0;
    }
    return {ir::int_imm(len > 0 ? b : 0), ir::int_imm(len)};
  }
  // Symbolic: relative to the end when negative, the end itself when unbounded.
  auto at = [&](int64_t v, bool is_end) -> PrimExpr {
    if (v >= kSliceUnbounded) return stride > 0 ? dim : dim - 1;
    if (v <= -kSliceUnbounded) return ir::int_imm(stride < 0 && is_end ? -1 : 0);
    if (v < 0) return dim + static_cast<int>(v);
    return ir::int_imm(v);
  };
  PrimExpr b = at(begin, false), e = at(end, true);
  int s = static_cast<int>(stride);
  PrimExpr len = stride > 0 ? floordiv(e - b + (s - 1), s) : floordiv(b - e + (-s - 1), -s);
  return {arith::simplify(b), arith::simplify(max(len, 0))};
}

SliceRange normalize_slice(const PrimExpr& dim, int64_t begin, const PrimExpr& end, int64_t stride) {
  if (std::optional<int64_t> c = as_const_int(end)) return normalize_slice(dim, begin, *c, stride);
  if (stride <= 0) value_error("a symbolic slice end needs a positive stride, got ", stride);
  PrimExpr b;
  std::optional<int64_t> d = as_const_int(dim);
  if (begin >= kSliceUnbounded) b = dim;
  else if (begin < 0) b = d ? ir::int_imm(std::max<int64_t>(0, *d + begin)) : dim + static_cast<int>(begin);
  else b = d ? ir::int_imm(std::min(begin, *d)) : ir::int_imm(begin);
  int s = static_cast<int>(stride);
  return {arith::simplify(b), arith::simplify(floordiv(end - b + (s - 1), s))};
}

SliceSpec strided_slice_spec(const CallNode& call, const std::vector<PrimExpr>& shape) {
  std::vector<int64_t> begin = get_ints(call.attrs(), "begin"), end = get_ints(call.attrs(), "end");
  std::vector<int64_t> strides = get_ints(call.attrs(), "strides", std::vector<int64_t>(begin.size(), 1));
  std::vector<int64_t> axes = get_ints(call.attrs(), "axes", {});
  if (axes.empty())
    for (size_t i = 0; i < begin.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (end.size() != begin.size() || strides.size() != begin.size() || axes.size() != begin.size())
    value_error("begin, end, strides and axes have ", begin.size(), ", ", end.size(), ", ", strides.size(), " and ",
                axes.size(), " entries, expected the same number");
  std::vector<PrimExpr> ends;
  for (int64_t e : end) ends.push_back(ir::int_imm(e, DataType::int64()));
  std::vector<int64_t> from_shape = get_ints(call.attrs(), "end_from_shape", {});
  if (!from_shape.empty() || call.args().size() > 1) {
    const std::vector<PrimExpr>& values = shape_arg(call, 1);
    if (values.size() != from_shape.size())
      value_error("end_from_shape lists ", from_shape.size(), " entries for ", values.size(), " shape values");
    for (size_t k = 0; k < from_shape.size(); ++k) {
      if (from_shape[k] < 0 || from_shape[k] >= static_cast<int64_t>(ends.size()))
        index_error("end_from_shape entry ", from_shape[k], " is out of range for ", ends.size(), " entries");
      ends[from_shape[k]] = values[k];
    }
  }
  SliceSpec spec;
  for (int a : normalize_axes(axes, static_cast<int>(shape.size()))) spec.axes.push_back(a);
  spec.strides = strides;
  for (size_t i = 0; i < spec.axes.size(); ++i)
    spec.ranges.push_back(normalize_slice(shape[spec.axes[i]], begin[i], ends[i], strides[i]));
  return spec;
}

}  // namespace anvil::graph::ops
