// Graph expressions (in the spirit of Relax): variables, constants (runtime tensors), operator
// calls with attributes, calls of PrimFuncs (op "call_tir"), tuples, tuple projections and shape
// values. Every expression carries its Type; nodes are immutable and built through factories.
//
//   Var x = Var::make("x", Type::tensor({n, 4}, DataType::float32()));
//   Expr y = Call::make("relu", {x}, {}, x->type());     // normally built by BlockBuilder::call,
//                                                        // which infers the type (op_registry.h)
//   Expr s = ShapeExpr::make({n, ir::int_imm(2)});        // a Shape[2] value, e.g. reshape's target
//
// Calls name their operator by string ("add", "nn.conv2d"); op_registry.h holds what each
// name means (arity, type inference, fusion pattern). A PrimFunc call is
// Call::make("call_tir", {args...}, {{"func", "fused_conv2d_relu"}}, out_type): the callee
// is the PrimFunc of that name in the IRModule, called with the arguments followed by freshly
// allocated outputs (one, or the fields of a tuple out_type).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/graph/attrs.h"
#include "anvil/graph/type.h"
#include "anvil/runtime/tensor.h"

namespace anvil::graph {

enum class ExprKind : uint8_t { kVar, kConstant, kCall, kTuple, kTupleGetItem, kShapeExpr };

class ExprNode : public ir::Node {
 public:
  std::string_view type_key() const override { return "graph.Expr"; }
  ExprKind kind() const { return kind_; }
  const Type& type() const { return type_; }

 protected:
  ExprNode(ExprKind kind, Type type) : kind_(kind), type_(std::move(type)) {}

 private:
  ExprKind kind_;
  Type type_;
};

class Expr : public ir::NodeRef<ExprNode> {
 public:
  Expr() = default;
  explicit Expr(const ExprNode* n) : NodeRef(n) {}
  ExprKind kind() const { return get()->kind(); }
  const Type& type() const { return get()->type(); }
  // The node as T when its kind is T::kKind, else nullptr.
  template <typename T>
  const T* as() const {
    return defined() && get()->kind() == T::kKind ? static_cast<const T*>(get()) : nullptr;
  }
};

// A value bound once: a function parameter or the left side of a binding. Identity matters
// (two Vars with one name are different values); the printer makes names unique.
class VarNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kVar;
  const std::string& name() const { return name_; }

 private:
  friend class Var;
  VarNode(std::string name, Type type) : ExprNode(kKind, std::move(type)), name_(std::move(name)) {}
  std::string name_;
};

class Var : public Expr {
 public:
  Var() = default;
  explicit Var(const VarNode* n) : Expr(n) {}
  static Var make(std::string name, Type type);
  const VarNode* operator->() const { return static_cast<const VarNode*>(get()); }
  const std::string& name() const { return (*this)->name(); }
};

// A compile-time tensor (weights, folded values): its type is the tensor's static shape.
class ConstantNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kConstant;
  const Tensor& data() const { return data_; }

 private:
  friend struct Constant;
  ConstantNode(Tensor data, Type type) : ExprNode(kKind, std::move(type)), data_(std::move(data)) {}
  Tensor data_;
};

struct Constant {
  // A CPU tensor; ValueError for a tensor on another device.
  static Expr make(Tensor data);
};

class CallNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kCall;
  const std::string& op() const { return op_; }
  const std::vector<Expr>& args() const { return args_; }
  const Attrs& attrs() const { return attrs_; }

 private:
  friend struct Call;
  CallNode(std::string op, std::vector<Expr> args, Attrs attrs, Type type)
      : ExprNode(kKind, std::move(type)), op_(std::move(op)), args_(std::move(args)), attrs_(std::move(attrs)) {}
  std::string op_;
  std::vector<Expr> args_;
  Attrs attrs_;
};

inline constexpr const char* kCallTIR = "call_tir";  // attrs: "func" = the PrimFunc's name
// A fused group's call (graph/passes/fuse_ops.h): attrs "func" = the group Function's name in the
// IRModule; its type is that function's result type, set by the pass (no inference).
inline constexpr const char* kCallFused = "call_fused";
// Control flow (graph/ops/control_flow.cc): attrs "then_func"/"else_func", or "body" and
// "num_carried", name Functions of the IRModule; typed by them (no inference).
inline constexpr const char* kCallIf = "if";
inline constexpr const char* kCallLoop = "loop";
// Shapes from values (graph/ops/data_dependent.cc): typed with fresh dims when built.
inline constexpr const char* kNonZero = "nonzero";
inline constexpr const char* kDynamicSlice = "dynamic_slice";
inline constexpr const char* kUnique = "unique";
inline constexpr const char* kTensorToShape = "tensor_to_shape";
inline constexpr const char* kReshapeTarget = "reshape_target";
inline constexpr const char* kRangeLength = "range_length";
// The operators above whose result's shape (or a Shape result's values) the VM computes.
inline bool is_data_dependent_op(const std::string& op) {
  return op == kNonZero || op == kDynamicSlice || op == kUnique || op == kTensorToShape || op == kReshapeTarget ||
         op == kRangeLength;
}
// Calls whose type is given when they are built, not inferred from their arguments.
inline bool call_keeps_type(const std::string& op) {
  return op == kCallTIR || op == kCallFused || op == kCallIf || op == kCallLoop || is_data_dependent_op(op);
}

struct Call {
  // The type as given (no inference: see BlockBuilder::call); arguments must be defined.
  static Expr make(std::string op, std::vector<Expr> args, Attrs attrs, Type type);
};

class TupleNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kTuple;
  const std::vector<Expr>& fields() const { return fields_; }

 private:
  friend struct Tuple;
  TupleNode(std::vector<Expr> fields, Type type) : ExprNode(kKind, std::move(type)), fields_(std::move(fields)) {}
  std::vector<Expr> fields_;
};

struct Tuple {
  static Expr make(std::vector<Expr> fields);  // type: the tuple of the fields' types
};

class TupleGetItemNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kTupleGetItem;
  const Expr& tuple() const { return tuple_; }
  int index() const { return index_; }

 private:
  friend struct TupleGetItem;
  TupleGetItemNode(Expr tuple, int index, Type type)
      : ExprNode(kKind, std::move(type)), tuple_(std::move(tuple)), index_(index) {}
  Expr tuple_;
  int index_;
};

struct TupleGetItem {
  // TypeError when `tuple` is not of tuple type; IndexError when index is out of range.
  static Expr make(Expr tuple, int index);
};

// A shape value (Shape[n]) made of dimension expressions: reshape targets, broadcast targets.
class ShapeExprNode : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kShapeExpr;
  const std::vector<PrimExpr>& values() const { return values_; }

 private:
  friend struct ShapeExpr;
  ShapeExprNode(std::vector<PrimExpr> values, Type type)
      : ExprNode(kKind, std::move(type)), values_(std::move(values)) {}
  std::vector<PrimExpr> values_;
};

struct ShapeExpr {
  static Expr make(std::vector<PrimExpr> values);  // values become int32 dims (dim_expr)
};

}  // namespace anvil::graph
