// Type factories (checked), printing and structural equality.
#include "anvil/graph/type.h"

#include <limits>
#include <sstream>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"

namespace anvil::graph {
namespace {

Type make(TypeNode* n) { return Type(n); }

}  // namespace

PrimExpr dim_expr(int64_t value) {
  if (value < 0) value_error("graph: dimension ", value, " is negative");
  if (value > std::numeric_limits<int32_t>::max())
    value_error("graph: dimension ", value, " does not fit the tensor IR's int32 index type");
  return ir::int_imm(value, DataType::int32());
}

PrimExpr dim_expr(const PrimExpr& e) {
  if (!e.defined()) value_error("graph: undefined dimension");
  if (std::optional<int64_t> c = ir::as_const_int(e)) return dim_expr(*c);
  if (!e->dtype().is_int() && !e->dtype().is_uint())
    type_error("graph: dimension ", ir::to_string(e), " has dtype ", e->dtype(), ", expected an integer");
  if (e->dtype() == DataType::int32()) return e;
  return ir::cast(DataType::int32(), e);
}

PrimExpr num_elements(const std::vector<PrimExpr>& shape) {
  PrimExpr n = ir::int_imm(1, DataType::int32());
  for (const PrimExpr& d : shape) n = n * d;
  return arith::simplify(n);
}

// Each factory checks its operands before allocating the node (a throw after `new` would leak it).
Type Type::tensor(std::vector<PrimExpr> shape, DataType dtype) {
  for (PrimExpr& d : shape) d = dim_expr(d);
  auto* n = new TypeNode();
  n->kind_ = TypeKind::kTensor;
  n->dtype_ = dtype;
  n->shape_ = std::move(shape);
  return make(n);
}

Type Type::tensor(const std::vector<int64_t>& shape, DataType dtype) {
  std::vector<PrimExpr> dims;
  dims.reserve(shape.size());
  for (int64_t d : shape) dims.push_back(dim_expr(d));
  return tensor(std::move(dims), dtype);
}

Type Type::tensor_any_rank(DataType dtype) {
  auto* n = new TypeNode();
  n->kind_ = TypeKind::kTensor;
  n->dtype_ = dtype;
  return make(n);
}

Type Type::tuple(std::vector<Type> fields) {
  for (const Type& f : fields)
    if (!f.defined()) value_error("graph: a tuple type with an undefined field");
  auto* n = new TypeNode();
  n->kind_ = TypeKind::kTuple;
  n->fields_ = std::move(fields);
  return make(n);
}

Type Type::shape(int ndim) {
  auto* n = new TypeNode();
  n->kind_ = TypeKind::kShape;
  n->shape_ndim_ = ndim;
  return make(n);
}

Type Type::shape(std::vector<PrimExpr> values) {
  for (PrimExpr& v : values) v = dim_expr(v);
  auto* n = new TypeNode();
  n->kind_ = TypeKind::kShape;
  n->shape_ndim_ = static_cast<int>(values.size());
  n->shape_ = std::move(values);
  return make(n);
}

const std::vector<PrimExpr>* Type::shape_values() const {
  return is_shape() && get()->shape() ? &*get()->shape() : nullptr;
}

Type Type::object() { return make(new TypeNode()); }

DataType Type::dtype() const {
  if (!is_tensor()) type_error("graph: ", to_string(*this), " is not a tensor type");
  return get()->dtype();
}

bool Type::has_rank() const { return is_tensor() && get()->shape().has_value(); }

int Type::ndim() const {
  if (is_shape()) return get()->shape_ndim();
  if (!has_rank()) type_error("graph: ", to_string(*this), " has no known rank");
  return static_cast<int>(get()->shape()->size());
}

const std::vector<PrimExpr>& Type::shape() const {
  if (!has_rank()) type_error("graph: ", to_string(*this), " is not a tensor of known rank");
  return *get()->shape();
}

const PrimExpr& Type::dim(int i) const {
  const auto& s = shape();
  int n = static_cast<int>(s.size());
  int j = i < 0 ? i + n : i;
  if (j < 0 || j >= n) index_error("graph: dimension ", i, " of ", to_string(*this), " is out of range");
  return s[static_cast<size_t>(j)];
}

std::optional<std::vector<int64_t>> Type::static_shape() const {
  if (!has_rank()) return std::nullopt;
  std::vector<int64_t> out;
  for (const PrimExpr& d : shape()) {
    std::optional<int64_t> c = ir::as_const_int(d);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

const Type& Type::field(int i) const {
  if (!is_tuple()) type_error("graph: ", to_string(*this), " is not a tuple type");
  if (i < 0 || i >= static_cast<int>(fields().size()))
    index_error("graph: field ", i, " of ", to_string(*this), " is out of range");
  return fields()[static_cast<size_t>(i)];
}

std::string to_string(const Type& t) {
  if (!t.defined()) return "<undefined type>";
  std::ostringstream os;
  switch (t.kind()) {
    case TypeKind::kTensor:
      os << "Tensor[";
      if (t.has_rank()) {
        os << "(";
        const auto& s = t.shape();
        for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << ir::to_string(s[i]);
        os << (s.size() == 1 ? ",)" : ")");
      } else {
        os << "?";
      }
      os << ", " << t.get()->dtype() << "]";
      break;
    case TypeKind::kTuple:
      os << "Tuple[";
      for (size_t i = 0; i < t.fields().size(); ++i) os << (i ? ", " : "") << to_string(t.fields()[i]);
      os << "]";
      break;
    case TypeKind::kShape:
      os << "Shape[";
      if (const std::vector<PrimExpr>* v = t.shape_values()) {
        os << "(";
        for (size_t i = 0; i < v->size(); ++i) os << (i ? ", " : "") << ir::to_string((*v)[i]);
        os << (v->size() == 1 ? ",)" : ")");
      } else if (t.ndim() < 0) {
        os << "?";
      } else {
        os << t.ndim();
      }
      os << "]";
      break;
    case TypeKind::kObject:
      os << "Object";
      break;
  }
  return os.str();
}

bool type_equal(const Type& a, const Type& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case TypeKind::kTensor: {
      if (a.get()->dtype() != b.get()->dtype() || a.has_rank() != b.has_rank()) return false;
      if (!a.has_rank()) return true;
      if (a.ndim() != b.ndim()) return false;
      for (int i = 0; i < a.ndim(); ++i)
        if (!ir::structural_equal(a.dim(i), b.dim(i))) return false;
      return true;
    }
    case TypeKind::kTuple:
      if (a.fields().size() != b.fields().size()) return false;
      for (size_t i = 0; i < a.fields().size(); ++i)
        if (!type_equal(a.fields()[i], b.fields()[i])) return false;
      return true;
    case TypeKind::kShape: {
      if (a.ndim() != b.ndim() || (a.shape_values() == nullptr) != (b.shape_values() == nullptr)) return false;
      if (a.shape_values() == nullptr) return true;
      for (size_t i = 0; i < a.shape_values()->size(); ++i)
        if (!ir::structural_equal((*a.shape_values())[i], (*b.shape_values())[i])) return false;
      return true;
    }
    case TypeKind::kObject:
      return true;
  }
  return false;
}

}  // namespace anvil::graph
