// Tensor expressions: placeholders, computations and their iteration axes (TVM's te names).
//
//   Var n = ir::size_var("n");
//   Tensor A = placeholder({n, 4}, DataType::float32(), "A");
//   IterVar k = reduce_axis(0, 4, "k");
//   Tensor B = compute({n}, [&](Var i) { return sum(A(i, k) * 2.0f, {k}); }, "B");
//
// A Tensor is the single output of an operation (placeholder or compute), so the handle is the
// operation: Tensor::op() is the tensor itself. Indexing a tensor, A(i, j), builds a BufferLoad
// of the tensor's *TE buffer* (a compact buffer named like the tensor); lowering maps that
// buffer to the buffer the tensor is realised in (a function argument, an allocation) or
// substitutes the producer's body (compute_inline).
//
// Errors: anvil::Error (ValueError) naming the tensor — wrong number of indices, a shape of the
// wrong rank for fcompute, a reduction nested inside an expression.
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "anvil/ir/buffer.h"
#include "anvil/ir/expr.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::te {

using ir::Buffer;
using ir::DataType;
using ir::PrimExpr;
using ir::Var;

// [min, min + extent)
struct Range {
  PrimExpr min;
  PrimExpr extent;
};

enum class IterKind : uint8_t { kDataPar, kReduce };

// An iteration axis: a loop variable with a domain (root axes; derived axes made by split/fuse
// get their extents during lowering and carry an undefined dom).
class IterVarNode : public ir::Node {
 public:
  std::string_view type_key() const override { return "te.IterVar"; }
  const Var& var() const { return var_; }
  const Range& dom() const { return dom_; }
  IterKind iter_kind() const { return kind_; }
  const std::string& name() const { return var_->name(); }

 private:
  friend class IterVar;
  IterVarNode(Var v, Range d, IterKind k) : var_(std::move(v)), dom_(std::move(d)), kind_(k) {}
  Var var_;
  Range dom_;
  IterKind kind_;
};

class IterVar : public ir::NodeRef<IterVarNode> {
 public:
  IterVar() = default;
  static IterVar make(Var var, Range dom, IterKind kind);
  const Var& var() const { return get()->var(); }
  // Use an axis where an expression is expected: A(i, k) with k an IterVar.
  operator PrimExpr() const { return get()->var(); }  // NOLINT(google-explicit-constructor)
  bool is_reduce() const { return get()->iter_kind() == IterKind::kReduce; }
};

// A reduction axis over [lo, hi).
IterVar reduce_axis(PrimExpr lo, PrimExpr hi, std::string name = "k");

enum class OpKind : uint8_t { kPlaceholder, kCompute };
enum class ReduceKind : uint8_t { kNone, kSum, kMax, kMin };

class Tensor;

class OperationNode : public ir::Node {
 public:
  std::string_view type_key() const override { return "te.Operation"; }
  OpKind op_kind() const { return kind_; }
  const std::string& name() const { return name_; }
  const std::vector<PrimExpr>& shape() const { return buffer_->shape(); }
  DataType dtype() const { return buffer_->dtype(); }
  // The buffer loads of this tensor read in TE expressions.
  const Buffer& buffer() const { return buffer_; }
  // Compute only: one data-parallel axis per output dimension, the reduction axes, the body
  // (the reduction's source when reduce_kind != kNone) and the tensors the body reads.
  const std::vector<IterVar>& axis() const { return axis_; }
  const std::vector<IterVar>& reduce_axis() const { return reduce_axis_; }
  const PrimExpr& body() const { return body_; }
  ReduceKind reduce_kind() const { return reduce_kind_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }

 private:
  friend class Tensor;
  OperationNode() = default;
  OpKind kind_ = OpKind::kPlaceholder;
  std::string name_;
  Buffer buffer_;
  std::vector<IterVar> axis_, reduce_axis_;
  PrimExpr body_;
  ReduceKind reduce_kind_ = ReduceKind::kNone;
  std::vector<Tensor> inputs_;
};

class Tensor : public ir::NodeRef<OperationNode> {
 public:
  Tensor() = default;
  explicit Tensor(const OperationNode* node) : NodeRef(node) {}

  // Factories (checked). make_compute reuses `buffer` when defined (schedule rewrites keep the
  // identity consumers load through), else declares a fresh one.
  static Tensor make_placeholder(std::vector<PrimExpr> shape, DataType dtype, std::string name);
  static Tensor make_compute(std::string name, DataType dtype, std::vector<IterVar> axis,
                             std::vector<IterVar> reduce_axis, PrimExpr body, ReduceKind reduce_kind,
                             std::vector<Tensor> inputs, Buffer buffer = Buffer());

  const Tensor& op() const { return *this; }
  const std::string& name() const { return get()->name(); }
  const std::vector<PrimExpr>& shape() const { return get()->shape(); }
  DataType dtype() const { return get()->dtype(); }
  int ndim() const { return static_cast<int>(shape().size()); }
  bool is_compute() const { return get()->op_kind() == OpKind::kCompute; }
  IterVar axis(int i) const;
  IterVar reduce_axis(int i) const;
  // All axes (TVM's op.axis / op.reduce_axis); empty for a placeholder.
  const std::vector<IterVar>& axis() const { return get()->axis(); }
  const std::vector<IterVar>& reduce_axis() const { return get()->reduce_axis(); }

  // A(i, j): a load of element (i, j). One index per dimension (ValueError otherwise).
  PrimExpr operator()(std::vector<PrimExpr> indices) const;
  template <typename... Args>
  PrimExpr operator()(Args&&... args) const {
    return (*this)(std::vector<PrimExpr>{PrimExpr(std::forward<Args>(args))...});
  }
};

Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype = DataType::float32(), std::string name = "placeholder");

// compute(shape, fcompute, name): fcompute receives one Var per dimension, either as a
// std::vector<Var> or as separate Var arguments (1 to 5), and returns the element's value — an
// expression, or a reduction sum/max/min(...) (only at the top). Axes are named axis_names
// when given (one per dimension), else i, j (up to two dimensions) or i0, i1, ...
using FCompute = std::function<PrimExpr(const std::vector<Var>&)>;
Tensor compute(std::vector<PrimExpr> shape, const FCompute& fcompute, std::string name = "compute",
               const std::vector<std::string>& axis_names = {});

namespace detail {
template <typename F, size_t... I>
FCompute wrap_fixed(F f, std::index_sequence<I...>) {
  return [f](const std::vector<Var>& v) { return PrimExpr(f(v[I]...)); };
}
template <typename F>
constexpr int fixed_arity() {
  if constexpr (std::is_invocable_v<F, Var>)
    return 1;
  else if constexpr (std::is_invocable_v<F, Var, Var>)
    return 2;
  else if constexpr (std::is_invocable_v<F, Var, Var, Var>)
    return 3;
  else if constexpr (std::is_invocable_v<F, Var, Var, Var, Var>)
    return 4;
  else if constexpr (std::is_invocable_v<F, Var, Var, Var, Var, Var>)
    return 5;
  else
    return -1;
}
[[noreturn]] void arity_mismatch(const std::string& name, size_t dims, int arity);
}  // namespace detail

template <typename F>
requires(!std::is_convertible_v<F, FCompute> && detail::fixed_arity<F>() > 0) Tensor
    compute(std::vector<PrimExpr> shape, F fcompute, std::string name = "compute",
            const std::vector<std::string>& axis_names = {}) {
  constexpr int n = detail::fixed_arity<F>();
  if (shape.size() != static_cast<size_t>(n)) detail::arity_mismatch(name, shape.size(), n);
  return compute(std::move(shape), detail::wrap_fixed(std::move(fcompute), std::make_index_sequence<n>()),
                 std::move(name), axis_names);
}

// The tensors read by an expression (in first-use order), found through their buffers among
// `candidates`; a load of any other buffer is a ValueError naming `what`.
std::vector<Tensor> tensors_read(const PrimExpr& e, const std::vector<Tensor>& candidates, const std::string& what);

}  // namespace anvil::te
