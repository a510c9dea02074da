// The scatter kernels (scatter.h): a copy of data, then the updates applied in order.
#include "anvil/ops/cpu/scatter.h"

#include <string>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/hand_kernel.h"

namespace anvil::ops {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::PrimExpr;
using ir::Var;
using tir::Stmt;

// Row-major strides of shape, in dtype.
std::vector<PrimExpr> strides_of(const std::vector<PrimExpr>& shape, DataType dtype) {
  std::vector<PrimExpr> s;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d)
    s.push_back(hand::extent_product(shape, d + 1, static_cast<int>(shape.size()), dtype));
  return s;
}

// y[e] = x[e] over every element (LLVM turns the loop into a copy).
Stmt copy_all(const Buffer& x, const Buffer& y, DataType it) {
  Var e("e", it);
  return tir::make_for(e, 0, hand::extent_product(y->shape(), 0, y->ndim(), it), hand::put(y, e, hand::at(x, e)));
}

// y[at] combined with update value u as attrs reduction says.
Stmt apply(const graph::CallNode& call, const Buffer& y, const PrimExpr& at, const PrimExpr& u) {
  const std::string red = graph::get_string(call.attrs(), "reduction", "none");
  const DataType dt = y->dtype(), acc = compute_dtype(dt);
  if (red == "none") return hand::put(y, at, u);
  PrimExpr a = convert(acc, hand::at(y, at)), b = convert(acc, u), r;
  if (red == "add") r = a + b;
  else if (red == "mul") r = a * b;
  else if (red == "max") r = ir::max(a, b);
  else if (red == "min") r = ir::min(a, b);
  else value_error(call.op(), ": unknown reduction '", red, "' (none, add, mul, max or min)");
  return hand::put(y, at, convert(dt, r));
}

// An index value wrapped (negative from the end), in int64 to compare before narrowing.
PrimExpr wrapped(const PrimExpr& raw, const PrimExpr& dim) {
  PrimExpr i = ir::cast(DataType::int64(), raw), d = ir::cast(DataType::int64(), dim);
  return ir::select(i < 0, i + d, i);
}
PrimExpr in_range(const PrimExpr& w, const PrimExpr& dim) { return w >= 0 && w < ir::cast(DataType::int64(), dim); }

}  // namespace

tir::Stmt scatter_elements_kernel(const graph::CallNode& call, const std::vector<Buffer>& inputs,
                                  const std::vector<Buffer>& outputs, const Target&) {
  const Buffer &xb = inputs[0], &ib = inputs[1];
  const int r = xb->ndim();
  if (r == 0) value_error("scatter_elements: data is 0-d");
  const int axis = graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", 0), r);
  const DataType it = xb->shape()[0].dtype();
  Buffer y = hand::flat(outputs[0]), ind = hand::flat(ib), upd = hand::flat(inputs[2]);
  std::vector<PrimExpr> xs = strides_of(xb->shape(), it), is = strides_of(ib->shape(), it);
  // One loop per dim of indices (no division to find an update's position).
  std::vector<Var> v;
  PrimExpr u = ir::int_imm(0, it), target = ir::int_imm(0, it);
  for (int d = 0; d < r; ++d) {
    v.emplace_back("i" + std::to_string(d), it);
    u = u + v[d] * is[d];
  }
  PrimExpr w = wrapped(hand::at(ind, u), xb->shape()[axis]);
  for (int d = 0; d < r; ++d) target = target + (d == axis ? ir::cast(it, w) : PrimExpr(v[d])) * xs[d];
  Stmt body = tir::if_then_else(in_range(w, xb->shape()[axis]), apply(call, y, target, hand::at(upd, u)));
  for (int d = r - 1; d >= 0; --d) body = tir::make_for(v[d], 0, ib->shape()[d], body);
  return tir::seq({copy_all(hand::flat(xb), y, it), body});
}

tir::Stmt scatter_nd_kernel(const graph::CallNode& call, const std::vector<Buffer>& inputs,
                            const std::vector<Buffer>& outputs, const Target&) {
  const Buffer &xb = inputs[0], &ib = inputs[1];
  const int n = xb->ndim(), ri = ib->ndim();
  std::optional<int64_t> qc = ri == 0 ? std::nullopt : ir::as_const_int(ib->shape()[ri - 1]);
  if (!qc || *qc > n) value_error("scatter_nd: the indices' last dim must be a constant of at most data's rank");
  const int q = static_cast<int>(*qc);
  const DataType it = n > 0 ? xb->shape()[0].dtype() : DataType::int32();
  Buffer y = hand::flat(outputs[0]), ind = hand::flat(ib), upd = hand::flat(inputs[2]);
  std::vector<PrimExpr> xs = strides_of(xb->shape(), it);
  PrimExpr count = hand::extent_product(ib->shape(), 0, ri - 1, it);  // index tuples
  PrimExpr slice = hand::extent_product(xb->shape(), q, n, it);       // elements each addresses
  Var k("k", it), s("s", it);
  PrimExpr base = ir::int_imm(0, it), valid;
  for (int j = 0; j < q; ++j) {
    PrimExpr w = wrapped(hand::at(ind, k * q + j), xb->shape()[j]);
    base = base + ir::cast(it, w) * xs[j];
    valid = valid.defined() ? (valid && in_range(w, xb->shape()[j])) : in_range(w, xb->shape()[j]);
  }
  Stmt each = tir::make_for(s, 0, slice, apply(call, y, base + s, hand::at(upd, k * slice + s)));
  Stmt body = tir::make_for(k, 0, count, valid.defined() ? tir::if_then_else(valid, each) : each);
  return tir::seq({copy_all(hand::flat(xb), y, it), body});
}

}  // namespace anvil::ops
