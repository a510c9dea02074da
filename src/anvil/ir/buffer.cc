// Buffer factory and buffer loads.
#include "anvil/ir/buffer.h"

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::ir {
namespace {

void check_index_like(const std::vector<PrimExpr>& exprs, std::string_view buffer, std::string_view what) {
  for (size_t i = 0; i < exprs.size(); ++i) {
    const PrimExpr& e = exprs[i];
    if (!e.defined()) value_error("Buffer '", buffer, "': ", what, "[", i, "] is undefined");
    if (!is_integer(e.dtype()) || e.dtype().lanes() != 1)
      type_error("Buffer '", buffer, "': ", what, "[", i, "] must be a scalar integer, got ", dtype_name(e.dtype()));
  }
}

}  // namespace

Buffer Buffer::make(Var data, DataType dtype, std::vector<PrimExpr> shape, std::vector<PrimExpr> strides,
                    PrimExpr elem_offset, std::string name, int alignment, std::string scope) {
  if (name.empty()) value_error("Buffer: the name must be non-empty");
  if (!data.defined()) value_error("Buffer '", name, "': data var is undefined");
  if (!is_handle(data.dtype()))
    type_error("Buffer '", name, "': data var '", data.name(), "' must be a handle, got ", dtype_name(data.dtype()));
  if (is_void(dtype) || is_handle(dtype)) type_error("Buffer '", name, "': bad element dtype ", dtype_name(dtype));
  check_index_like(shape, name, "shape");
  check_index_like(strides, name, "strides");
  if (!strides.empty() && strides.size() != shape.size())
    value_error("Buffer '", name, "': ", strides.size(), " strides for ", shape.size(), " dimensions");
  if (!elem_offset.defined()) elem_offset = int_imm(0);
  check_index_like({elem_offset}, name, "elem_offset");
  if (alignment < 1 || (alignment & (alignment - 1)) != 0)
    value_error("Buffer '", name, "': alignment must be a power of two, got ", alignment);
  if (scope.empty()) value_error("Buffer '", name, "': scope must be non-empty");
  auto* node = new BufferNode();
  node->data_ = std::move(data);
  node->dtype_ = dtype;
  node->shape_ = std::move(shape);
  node->strides_ = std::move(strides);
  node->elem_offset_ = std::move(elem_offset);
  node->name_ = std::move(name);
  node->alignment_ = alignment;
  node->scope_ = std::move(scope);
  return Buffer(node);
}

PrimExpr Buffer::num_elements() const {
  const auto& shape = get()->shape();
  if (shape.empty()) return int_imm(1);
  PrimExpr n = shape[0];
  for (size_t i = 1; i < shape.size(); ++i) {
    PrimExpr d = shape[i];
    if (d.dtype() != n.dtype()) {  // widen to the wider integer type
      if (d.dtype().bits() > n.dtype().bits())
        n = CastNode::make(d.dtype(), n);
      else
        d = CastNode::make(n.dtype(), d);
    }
    n = MulNode::make(n, d);
  }
  return n;
}

std::vector<PrimExpr> Buffer::effective_strides() const {
  const BufferNode* b = get();
  if (!b->strides().empty()) return b->strides();
  std::vector<PrimExpr> strides(b->shape().size());
  PrimExpr running;
  for (size_t d = strides.size(); d-- > 0;) {
    strides[d] = running.defined() ? running : int_imm(1, b->shape()[d].dtype());
    running = running.defined() ? b->shape()[d] * running : b->shape()[d];
  }
  return strides;
}

PrimExpr Buffer::flat_index(const std::vector<PrimExpr>& indices) const {
  const BufferNode* b = get();
  access_lanes(*this, indices, "flat_index");
  std::vector<PrimExpr> strides = effective_strides();
  PrimExpr index;
  if (as_const_int(b->elem_offset()) != 0) index = b->elem_offset();
  for (size_t d = 0; d < indices.size(); ++d) {
    PrimExpr term = as_const_int(strides[d]) == 1 ? indices[d] : indices[d] * strides[d];
    index = index.defined() ? index + term : term;
  }
  return index.defined() ? index : int_imm(0);
}

Buffer decl_buffer(std::vector<PrimExpr> shape, DataType dtype, std::string name, std::string scope) {
  Var data(name + "_data", handle_type());
  return Buffer::make(std::move(data), dtype, std::move(shape), {}, PrimExpr(), std::move(name),
                      kDefaultBufferAlignment, std::move(scope));
}

int access_lanes(const Buffer& buffer, const std::vector<PrimExpr>& indices, std::string_view what) {
  if (!buffer.defined()) value_error(what, ": buffer is undefined");
  const std::string& name = buffer->name();
  if (static_cast<int>(indices.size()) != buffer.ndim())
    value_error(what, " ", name, ": ", indices.size(), " indices for a ", buffer.ndim(), "-d buffer");
  int lanes = 1;
  for (size_t i = 0; i < indices.size(); ++i) {
    const PrimExpr& e = indices[i];
    if (!e.defined()) value_error(what, " ", name, ": index ", i, " is undefined");
    if (!is_integer(e.dtype()))
      type_error(what, " ", name, ": index ", i, " must be an integer, got ", dtype_name(e.dtype()));
    int l = e.dtype().lanes();
    if (l != 1) {
      if (lanes != 1 && lanes != l) type_error(what, " ", name, ": indices mix ", lanes, " and ", l, " lanes");
      lanes = l;
    }
  }
  return lanes;
}

PrimExpr BufferLoadNode::make(Buffer buffer, std::vector<PrimExpr> indices) {
  int lanes = access_lanes(buffer, indices, "BufferLoad");
  DataType t = buffer->dtype();
  if (lanes != 1) t = with_lanes(t, t.lanes() * lanes);
  return PrimExpr(new BufferLoadNode(t, std::move(buffer), std::move(indices)));
}

PrimExpr buffer_load(const Buffer& buffer, std::vector<PrimExpr> indices) {
  return BufferLoadNode::make(buffer, std::move(indices));
}

}  // namespace anvil::ir
