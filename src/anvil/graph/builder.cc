// BlockBuilder and call type inference.
#include "anvil/graph/builder.h"

#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"

namespace anvil::graph {

Type infer_call_type(const std::string& op, const std::vector<Expr>& args, const Attrs& attrs) {
  const OpInfo& info = get_op(op);
  int n = static_cast<int>(args.size());
  if (n < info.min_args || (info.max_args >= 0 && n > info.max_args)) {
    if (info.min_args == info.max_args)
      type_error(op, ": expected ", info.min_args, " arguments but got ", n);
    type_error(op, ": expected ", info.min_args, " to ", info.max_args < 0 ? "any number of" : std::to_string(info.max_args),
               " arguments but got ", n);
  }
  // Inference reads a provisional call (its own type is a placeholder, never looked at).
  Expr probe = Call::make(op, args, attrs, Type::object());
  try {
    return info.infer_type(*probe.as<CallNode>());
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat(op, ": ", e.what()));
  }
}

Var BlockBuilder::add_param(std::string name, Type type) {
  Var v = Var::make(std::move(name), std::move(type));
  params_.push_back(v);
  return v;
}

Expr BlockBuilder::call(const std::string& op, std::vector<Expr> args, Attrs attrs) const {
  Type t = infer_call_type(op, args, attrs);
  return Call::make(op, std::move(args), std::move(attrs), std::move(t));
}

Expr BlockBuilder::emit(Expr value, std::string name) {
  if (value.kind() == ExprKind::kVar || value.kind() == ExprKind::kConstant) return value;
  return emit_var(std::move(value), std::move(name));
}

Var BlockBuilder::emit_var(Expr value, std::string name) {
  if (!value.defined()) value_error("BlockBuilder: emit of an undefined expression");
  Var v = Var::make(name.empty() ? "v" : std::move(name), value.type());
  bindings_.push_back({v, std::move(value)});
  return v;
}

Function BlockBuilder::finish(Expr result) {
  Function f = Function::make(std::move(params_), std::move(bindings_), std::move(result));
  params_.clear();
  bindings_.clear();
  return f;
}

}  // namespace anvil::graph
