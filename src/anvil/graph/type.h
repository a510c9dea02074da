// Types of graph values (Relax's "struct info"): a tensor with a dtype and a shape whose
// dimensions are tensor-IR expressions (so a symbolic `n` or `n * 2` is the same Var the
// kernels see), a tuple of types, a shape value of a known rank (and maybe known values: the
// Vars a run-time tensor_to_shape binds, so later types can name them), or an opaque object.
//
//   Var n = ir::size_var("n");
//   Type t = Type::tensor({n, 3, 224, 224}, DataType::float32());   // Tensor[(n, 3, 224, 224), float32]
//   t.ndim() == 4;  t.static_shape() == std::nullopt;  t.dim(1) == 3
//
// A tensor of unknown rank (Type::tensor_any_rank) is allowed only before shape inference; the
// verifier rejects it between later stages. Dimensions are int32 expressions, the index type of
// the tensor IR and its schedules (Relax uses int64; a dimension above 2^31 - 1 is a ValueError).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/ir/expr.h"
#include "anvil/ir/node.h"

namespace anvil::graph {

using ir::DataType;
using ir::PrimExpr;

enum class TypeKind : uint8_t { kTensor, kTuple, kShape, kObject };

class TypeNode;

// (Type comes first: TypeNode holds a vector of them, which needs the complete class.)
class Type : public ir::NodeRef<TypeNode> {
 public:
  Type() = default;
  explicit Type(const TypeNode* n);

  // Dimensions must be non-negative integer expressions (converted to int32: dim_expr); a
  // negative constant is a ValueError.
  static Type tensor(std::vector<PrimExpr> shape, DataType dtype);
  static Type tensor(const std::vector<int64_t>& shape, DataType dtype);
  static Type tensor_any_rank(DataType dtype);
  static Type tuple(std::vector<Type> fields);
  static Type shape(int ndim);
  static Type shape(std::vector<PrimExpr> values);  // Shape[(v0, v1)]: its values known
  static Type object();

  TypeKind kind() const;
  bool is_tensor() const { return kind() == TypeKind::kTensor; }
  bool is_tuple() const { return kind() == TypeKind::kTuple; }
  bool is_shape() const { return kind() == TypeKind::kShape; }
  DataType dtype() const;                     // tensors only (ValueError otherwise)
  bool has_rank() const;                      // a tensor of known rank
  int ndim() const;                           // tensors of known rank, shapes of known rank
  const std::vector<PrimExpr>& shape() const;  // tensors of known rank (ValueError otherwise)
  // A shape value's values when its type knows them (Shape[(n, 4)]), else nullptr.
  const std::vector<PrimExpr>* shape_values() const;
  const PrimExpr& dim(int i) const;           // negative i counts from the end
  std::optional<std::vector<int64_t>> static_shape() const;  // every dim a constant
  const std::vector<Type>& fields() const;
  const Type& field(int i) const;
};

class TypeNode : public ir::Node {
 public:
  std::string_view type_key() const override { return "graph.Type"; }
  TypeKind kind() const { return kind_; }
  DataType dtype() const { return dtype_; }                          // kTensor
  // kTensor: the dims (nullopt = any rank); kShape: the values when known.
  const std::optional<std::vector<PrimExpr>>& shape() const { return shape_; }
  const std::vector<Type>& fields() const { return fields_; }        // kTuple
  int shape_ndim() const { return shape_ndim_; }                     // kShape: -1 = unknown

 private:
  friend class Type;
  TypeNode() = default;
  TypeKind kind_ = TypeKind::kObject;
  DataType dtype_;
  std::optional<std::vector<PrimExpr>> shape_;
  std::vector<Type> fields_;
  int shape_ndim_ = -1;
};

inline Type::Type(const TypeNode* n) : NodeRef(n) {}
inline TypeKind Type::kind() const { return get()->kind(); }
inline const std::vector<Type>& Type::fields() const { return get()->fields(); }

// "Tensor[(n, 3), float32]", "Tuple[...]", "Shape[2]", "Shape[(n, 4)]", "Object".
std::string to_string(const Type& t);
// Structural equality (dimension expressions compared structurally, free Vars by identity).
bool type_equal(const Type& a, const Type& b);

// An int32 dimension expression from an int (ValueError when negative or too large), or
// converted from another integer dtype.
PrimExpr dim_expr(const PrimExpr& e);
PrimExpr dim_expr(int64_t value);
// The product of dims (simplified); 1 for a 0-d shape.
PrimExpr num_elements(const std::vector<PrimExpr>& shape);

}  // namespace anvil::graph
