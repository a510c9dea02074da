// Small pieces for hand-written TIR kernels (OpImplementation::kernel: cumsum, topk), which
// index their tensors as flat arrays (outer x axis x inner) and carry state in local buffers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "anvil/ir/buffer.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/tir/stmt.h"

namespace anvil::ops::hand {

// The same memory as b, one-dimensional and compact (storage_flatten's own form of b).
inline ir::Buffer flat(const ir::Buffer& b) {
  return ir::Buffer::make(b->data(), b->dtype(), {b.num_elements()}, {}, ir::PrimExpr(), b->name(), b->alignment(),
                          b->scope());
}

// The product of dims [begin, end) of shape (1 when empty) in dtype, the constant dims folded
// (a constant product is an IntImm, so as_const_int sees it).
inline ir::PrimExpr extent_product(const std::vector<ir::PrimExpr>& shape, int begin, int end, ir::DataType dtype) {
  int64_t c = 1;
  ir::PrimExpr sym;
  for (int d = begin; d < end; ++d) {
    if (std::optional<int64_t> v = ir::as_const_int(shape[d])) c *= *v;
    else sym = sym.defined() ? sym * ir::cast(dtype, shape[d]) : ir::cast(dtype, shape[d]);
  }
  if (!sym.defined()) return ir::int_imm(c, dtype);
  return c == 1 ? sym : sym * ir::int_imm(c, dtype);
}

// A local (per task) buffer of n elements, and the allocation that scopes body to it.
inline ir::Buffer local(ir::PrimExpr n, ir::DataType dtype, const std::string& name) {
  return ir::decl_buffer({std::move(n)}, dtype, name, "local");
}
inline tir::Stmt with_local(const ir::Buffer& b, tir::Stmt body) {
  return tir::allocate(b->data(), b->dtype(), b->shape(), "local", std::move(body));
}

inline ir::PrimExpr at(const ir::Buffer& b, ir::PrimExpr i) { return ir::buffer_load(b, {std::move(i)}); }
inline tir::Stmt put(const ir::Buffer& b, ir::PrimExpr i, ir::PrimExpr v) {
  return tir::buffer_store(b, std::move(v), {std::move(i)});
}

}  // namespace anvil::ops::hand
