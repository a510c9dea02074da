// Expression factories: operands checked, types derived where they follow from the operands.
#include "anvil/graph/expr.h"

#include "anvil/base/error.h"

namespace anvil::graph {

Var Var::make(std::string name, Type type) {
  if (!type.defined()) value_error("graph: variable '", name, "' has no type");
  return Var(new VarNode(std::move(name), std::move(type)));
}

Expr Constant::make(Tensor data) {
  if (!data.defined()) value_error("graph: a constant needs a tensor");
  if (data.device().type != kDLCPU) value_error("graph: a constant must be a CPU tensor");
  Type type = Type::tensor(data.shape(), data.dtype());
  return Expr(new ConstantNode(std::move(data), std::move(type)));
}

Expr Call::make(std::string op, std::vector<Expr> args, Attrs attrs, Type type) {
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i].defined()) value_error("graph: argument ", i, " of a call of '", op, "' is undefined");
  if (!type.defined()) value_error("graph: a call of '", op, "' has no type");
  return Expr(new CallNode(std::move(op), std::move(args), std::move(attrs), std::move(type)));
}

Expr Tuple::make(std::vector<Expr> fields) {
  std::vector<Type> types;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!fields[i].defined()) value_error("graph: field ", i, " of a tuple is undefined");
    types.push_back(fields[i].type());
  }
  Type type = Type::tuple(std::move(types));
  return Expr(new TupleNode(std::move(fields), std::move(type)));
}

Expr TupleGetItem::make(Expr tuple, int index) {
  if (!tuple.defined()) value_error("graph: tuple_getitem of an undefined tuple");
  Type field = tuple.type().field(index);  // TypeError / IndexError
  return Expr(new TupleGetItemNode(std::move(tuple), index, std::move(field)));
}

Expr ShapeExpr::make(std::vector<PrimExpr> values) {
  for (PrimExpr& v : values) v = dim_expr(v);
  Type type = Type::shape(static_cast<int>(values.size()));
  return Expr(new ShapeExprNode(std::move(values), std::move(type)));
}

}  // namespace anvil::graph
