// Buffer: a typed, shaped view of memory reached through a data variable, and BufferLoadNode,
// the expression that reads it. (Buffer sits in ir/ because loads are expressions; statements
// that write or allocate buffers are in tir/.)
//
// Element (i0, ..., ik) of a buffer lives at data[elem_offset + sum(i_d * stride_d)], counted in
// elements of dtype; an empty strides list means compact row-major. Shape, strides and offset
// may be symbolic (Vars), so one kernel serves many sizes.
#pragma once

#include <string>
#include <vector>

#include "anvil/ir/expr.h"

namespace anvil::ir {

class BufferNode : public Node {
 public:
  std::string_view type_key() const override { return "ir.Buffer"; }
  const Var& data() const { return data_; }
  DataType dtype() const { return dtype_; }
  const std::vector<PrimExpr>& shape() const { return shape_; }
  const std::vector<PrimExpr>& strides() const { return strides_; }  // empty: compact row-major
  const PrimExpr& elem_offset() const { return elem_offset_; }
  const std::string& name() const { return name_; }
  int alignment() const { return alignment_; }         // bytes, of data + elem_offset
  const std::string& scope() const { return scope_; }  // "global", "shared", "local", ...
  int ndim() const { return static_cast<int>(shape_.size()); }

 private:
  friend class Buffer;
  BufferNode() = default;
  Var data_;
  DataType dtype_;
  std::vector<PrimExpr> shape_, strides_;
  PrimExpr elem_offset_;
  std::string name_;
  int alignment_ = 0;
  std::string scope_;
};

// Default alignment of buffers the compiler allocates (bytes).
inline constexpr int kDefaultBufferAlignment = 64;

class Buffer : public NodeRef<BufferNode> {
 public:
  Buffer() = default;
  explicit Buffer(const BufferNode* node) : NodeRef(node) {}

  // The full factory. Checks: data is a handle Var; dtype is not void/handle; shape, strides
  // and elem_offset are scalar integers; strides empty or one per dimension; alignment a power
  // of two >= 1; name and scope non-empty. elem_offset undefined means 0.
  static Buffer make(Var data, DataType dtype, std::vector<PrimExpr> shape, std::vector<PrimExpr> strides,
                     PrimExpr elem_offset, std::string name, int alignment, std::string scope);

  int ndim() const { return get()->ndim(); }
  // shape[0] * ... * shape[k-1] as an expression (1 for a scalar buffer); no simplification.
  PrimExpr num_elements() const;
  // The strides in elements: the declared ones, or row-major ones computed from the shape
  // (last dimension 1). No simplification.
  std::vector<PrimExpr> effective_strides() const;
  // The element offset of buffer[indices] from data: elem_offset + sum(index_d * stride_d), one
  // index per dimension (vector indices give a vector offset). No simplification beyond
  // dropping a constant-zero elem_offset and unit strides; flattening passes and code
  // generators use it.
  PrimExpr flat_index(const std::vector<PrimExpr>& indices) const;
};

// A compact buffer with a fresh data var named name (row-major, offset 0, default alignment).
Buffer decl_buffer(std::vector<PrimExpr> shape, DataType dtype, std::string name, std::string scope = "global");

// buffer[indices]. One index per dimension, scalar or vector integers. With vector indices (all
// of one lane count L, e.g. a Ramp), the load yields L elements: dtype = buffer dtype x L.
class BufferLoadNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kBufferLoad;
  static PrimExpr make(Buffer buffer, std::vector<PrimExpr> indices);
  const Buffer& buffer() const { return buffer_; }
  const std::vector<PrimExpr>& indices() const { return indices_; }

 private:
  BufferLoadNode(DataType t, Buffer b, std::vector<PrimExpr> idx)
      : PrimExprNode(kKind, t), buffer_(std::move(b)), indices_(std::move(idx)) {}
  Buffer buffer_;
  std::vector<PrimExpr> indices_;
};

// The lane count of an access with these indices (1 if all scalar); throws TypeError when
// indices are not integers or mix lane counts. `what` names the access for the message.
int access_lanes(const Buffer& buffer, const std::vector<PrimExpr>& indices, std::string_view what);

// Convenience: BufferLoadNode::make(buffer, indices).
PrimExpr buffer_load(const Buffer& buffer, std::vector<PrimExpr> indices);

}  // namespace anvil::ir
