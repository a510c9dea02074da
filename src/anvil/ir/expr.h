// Scalar and vector expressions of the tensor IR (PrimExpr) — the node classes and their
// factories. Every node is immutable; every factory checks its operands and throws
// anvil::Error (TypeError for a dtype mismatch, ValueError for a bad value) naming the
// operation and the operands. Factories here are *strict*: operands must already agree in dtype.
// The promoting builders (a + b, a * 2, min(a, b), ...) are in "anvil/ir/expr_ops.h".
//
// Vectors: a dtype with lanes > 1 (float32x4). Ramp(base, stride, lanes) and Broadcast(value,
// lanes) build them; element-wise nodes work lane by lane; comparisons give boolxL.
// Buffer loads (BufferLoadNode) live in "anvil/ir/buffer.h" with the Buffer they read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/dtype.h"
#include "anvil/ir/node.h"

namespace anvil::ir {

enum class ExprKind : uint8_t {
#define ANVIL_EXPR_KIND(Name) k##Name,
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_EXPR_KIND
};
// "Add", "BufferLoad", ...
std::string_view expr_kind_name(ExprKind kind);

// The math intrinsics a Call may name (intrinsics.def).
enum class CallOp : uint8_t {
#define ANVIL_INTRINSIC(name, arity, kind) k_##name,
#include "anvil/ir/intrinsics.def"
#undef ANVIL_INTRINSIC
};
// Which dtypes an intrinsic takes and what it returns (intrinsics.def explains each).
enum class IntrinsicKind : uint8_t { kFloat, kNumeric, kInteger, kFloatTest };
std::string_view call_op_name(CallOp op);
int call_op_arity(CallOp op);
IntrinsicKind call_op_kind(CallOp op);
std::optional<CallOp> parse_call_op(std::string_view name);

class PrimExprNode : public Node {
 public:
  ExprKind kind() const { return kind_; }
  DataType dtype() const { return dtype_; }
  std::string_view type_key() const override;  // "ir.Add", ...

 protected:
  PrimExprNode(ExprKind kind, DataType dtype) : kind_(kind), dtype_(dtype) {}

 private:
  ExprKind kind_;
  DataType dtype_;
};

// Handle to any expression. Implicitly built from an int (an int32 immediate) or a double (a
// float32 immediate) so that shapes, bounds and constants read naturally: {n, 4},
// make_for(i, 0, n, ...), select(c, x, 0.0). Builders let such literals adopt the dtype of the
// other operand (see expr_ops.h). Other C++ arithmetic types are ambiguous on purpose: use
// int_imm / float_imm with an explicit dtype.
class PrimExpr : public NodeRef<PrimExprNode> {
 public:
  PrimExpr() = default;
  explicit PrimExpr(const PrimExprNode* node) : NodeRef(node) {}
  PrimExpr(int value);     // NOLINT(google-explicit-constructor): int32 immediate
  PrimExpr(double value);  // NOLINT(google-explicit-constructor): float32 immediate

  DataType dtype() const { return get()->dtype(); }
  ExprKind kind() const { return get()->kind(); }
  // The node as T when it is one (T::kKind matches), else nullptr. Safe on undefined handles.
  template <typename T>
  const T* as() const {
    return defined() && get()->kind() == T::kKind ? static_cast<const T*>(get()) : nullptr;
  }
};

// ---- immediates ---------------------------------------------------------------------------

// Integer, unsigned or bool constant (bool: value 0 or 1). The value must fit the dtype.
class IntImmNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  static PrimExpr make(DataType dtype, int64_t value);
  int64_t value() const { return value_; }

 private:
  IntImmNode(DataType t, int64_t v) : PrimExprNode(kKind, t), value_(v) {}
  int64_t value_;
};

// Floating-point constant (stored as double; the dtype says the precision).
class FloatImmNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  static PrimExpr make(DataType dtype, double value);
  double value() const { return value_; }

 private:
  FloatImmNode(DataType t, double v) : PrimExprNode(kKind, t), value_(v) {}
  double value_;
};

// A string constant (dtype handle): attribute values, pragma arguments.
class StringImmNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kStringImm;
  static PrimExpr make(std::string value);
  const std::string& value() const { return value_; }

 private:
  explicit StringImmNode(std::string v) : PrimExprNode(kKind, handle_type()), value_(std::move(v)) {}
  std::string value_;
};

PrimExpr int_imm(int64_t value, DataType dtype = DataType::int32());
PrimExpr float_imm(double value, DataType dtype = DataType::float32());
PrimExpr bool_imm(bool value);
PrimExpr string_imm(std::string value);
// A constant of any scalar or vector dtype (vectors: a Broadcast of the scalar constant).
// Integer dtypes require an integral value.
PrimExpr make_const(DataType dtype, double value);
PrimExpr make_zero(DataType dtype);
// The integer value of an IntImm (or a Broadcast of one); nullopt otherwise.
std::optional<int64_t> as_const_int(const PrimExpr& e);

// ---- variables ----------------------------------------------------------------------------

class Var;
// A fresh size variable: an integer var known to be non-negative (symbolic shape dimension).
Var size_var(std::string name, DataType dtype = DataType::int32());

// A variable. Identity is the node: two Vars named "i" are different variables. The name is a
// hint for printing. A size var (is_size_var) is an int var known to be >= 0 (shape extents).
class VarNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kVar;
  const std::string& name() const { return name_; }
  bool is_size_var() const { return size_var_; }

 private:
  friend class Var;
  friend Var size_var(std::string name, DataType dtype);
  VarNode(std::string name, DataType t, bool size_var)
      : PrimExprNode(kKind, t), name_(std::move(name)), size_var_(size_var) {}
  std::string name_;
  bool size_var_;
};

class Var : public PrimExpr {
 public:
  Var() = default;
  explicit Var(const VarNode* node) : PrimExpr(node) {}
  // A fresh variable. The name must be non-empty; dtype must not be void.
  explicit Var(std::string name, DataType dtype = DataType::int32());
  const VarNode* get() const { return static_cast<const VarNode*>(PrimExpr::get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name(); }
};

// ---- binary operators ---------------------------------------------------------------------

// a OP b, one class per kind (see expr_kinds.def). make() requires a.dtype() == b.dtype():
//   Add Sub Mul Div FloorDiv FloorMod Min Max: numeric operands, result the operand dtype.
//     Div on integers truncates toward zero (C); on floats it is true division.
//     FloorDiv/FloorMod round toward negative infinity (Python's // and %).
//   EQ NE LT LE GT GE: any non-handle dtype, result bool with the operands' lanes.
//   And Or: bool operands.
template <ExprKind K>
class BinaryOpNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = K;
  static PrimExpr make(PrimExpr a, PrimExpr b);
  const PrimExpr& a() const { return a_; }
  const PrimExpr& b() const { return b_; }

 private:
  BinaryOpNode(DataType t, PrimExpr a, PrimExpr b) : PrimExprNode(K, t), a_(std::move(a)), b_(std::move(b)) {}
  PrimExpr a_, b_;
};

#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec) using Name##Node = BinaryOpNode<ExprKind::k##Name>;
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND

// Whether kind is one of the binary kinds above.
bool is_binary_kind(ExprKind kind);

// ---- other operators ----------------------------------------------------------------------

// not a (bool operand).
class NotNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kNot;
  static PrimExpr make(PrimExpr a);
  const PrimExpr& a() const { return a_; }

 private:
  NotNode(DataType t, PrimExpr a) : PrimExprNode(kKind, t), a_(std::move(a)) {}
  PrimExpr a_;
};

// cond ? true_value : false_value, both values evaluated. cond is bool (scalar, or the values'
// lanes); the values share one dtype, which is the result's.
class SelectNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kSelect;
  static PrimExpr make(PrimExpr cond, PrimExpr true_value, PrimExpr false_value);
  const PrimExpr& cond() const { return cond_; }
  const PrimExpr& true_value() const { return t_; }
  const PrimExpr& false_value() const { return f_; }

 private:
  SelectNode(DataType t, PrimExpr c, PrimExpr tv, PrimExpr fv)
      : PrimExprNode(kKind, t), cond_(std::move(c)), t_(std::move(tv)), f_(std::move(fv)) {}
  PrimExpr cond_, t_, f_;
};

// Conversion of value to dtype (same lanes; numeric/bool only). Float to int truncates.
class CastNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kCast;
  static PrimExpr make(DataType dtype, PrimExpr value);
  const PrimExpr& value() const { return value_; }

 private:
  CastNode(DataType t, PrimExpr v) : PrimExprNode(kKind, t), value_(std::move(v)) {}
  PrimExpr value_;
};

// The vector [base, base + stride, ..., base + (lanes-1)*stride]; base and stride are scalar
// integers of one dtype; lanes >= 2.
class RampNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kRamp;
  static PrimExpr make(PrimExpr base, PrimExpr stride, int lanes);
  const PrimExpr& base() const { return base_; }
  const PrimExpr& stride() const { return stride_; }
  int lanes() const { return dtype().lanes(); }

 private:
  RampNode(DataType t, PrimExpr b, PrimExpr s) : PrimExprNode(kKind, t), base_(std::move(b)), stride_(std::move(s)) {}
  PrimExpr base_, stride_;
};

// A scalar value repeated in lanes >= 2 lanes.
class BroadcastNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kBroadcast;
  static PrimExpr make(PrimExpr value, int lanes);
  const PrimExpr& value() const { return value_; }
  int lanes() const { return dtype().lanes(); }

 private:
  BroadcastNode(DataType t, PrimExpr v) : PrimExprNode(kKind, t), value_(std::move(v)) {}
  PrimExpr value_;
};

// let var = value in body. Defines var (var.dtype == value.dtype) for body only.
class LetNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kLet;
  static PrimExpr make(Var var, PrimExpr value, PrimExpr body);
  const Var& var() const { return var_; }
  const PrimExpr& value() const { return value_; }
  const PrimExpr& body() const { return body_; }

 private:
  LetNode(Var var, PrimExpr value, PrimExpr body)
      : PrimExprNode(kKind, body.dtype()), var_(std::move(var)), value_(std::move(value)), body_(std::move(body)) {}
  Var var_;
  PrimExpr value_, body_;
};

// A math intrinsic applied lane-wise. Arity and dtype rules from intrinsics.def: all arguments
// share one dtype, which is the result's, except the kFloatTest ones (isnan, ...: bool result).
class CallNode : public PrimExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kCall;
  static PrimExpr make(CallOp op, std::vector<PrimExpr> args);
  CallOp op() const { return op_; }
  const std::vector<PrimExpr>& args() const { return args_; }

 private:
  CallNode(DataType t, CallOp op, std::vector<PrimExpr> args)
      : PrimExprNode(kKind, t), op_(op), args_(std::move(args)) {}
  CallOp op_;
  std::vector<PrimExpr> args_;
};

}  // namespace anvil::ir
