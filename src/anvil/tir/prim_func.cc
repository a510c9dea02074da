// PrimFunc factory and helpers.
#include "anvil/tir/prim_func.h"

#include <unordered_set>

#include "anvil/base/error.h"

namespace anvil::tir {

Buffer PrimFuncNode::buffer_of(const Var& param) const {
  for (const auto& [p, b] : buffer_map_)
    if (p.same_as(param)) return b;
  return Buffer();
}

std::optional<std::string> PrimFuncNode::str_attr(std::string_view key) const {
  auto it = attrs_.find(std::string(key));
  if (it == attrs_.end()) return std::nullopt;
  if (auto* s = it->second.as<ir::StringImmNode>()) return s->value();
  return std::nullopt;
}

PrimFunc PrimFunc::make(std::vector<Var> params, std::vector<std::pair<Var, Buffer>> buffer_map, Stmt body,
                        DataType ret_type, FuncAttrs attrs) {
  std::unordered_set<const void*> seen;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined()) value_error("PrimFunc: param ", i, " is undefined");
    if (!seen.insert(params[i].get()).second) value_error("PrimFunc: param '", params[i].name(), "' appears twice");
  }
  std::unordered_set<const void*> mapped;
  for (const auto& [param, buffer] : buffer_map) {
    if (!param.defined() || !buffer.defined()) value_error("PrimFunc: undefined entry in buffer_map");
    if (!seen.count(param.get()))
      value_error("PrimFunc: buffer_map key '", param.name(), "' (buffer ", buffer->name(), ") is not a param");
    if (!ir::is_handle(param.dtype()))
      type_error("PrimFunc: param '", param.name(), "' bound to buffer ", buffer->name(), " must be a handle, got ",
                 ir::dtype_name(param.dtype()));
    if (!mapped.insert(param.get()).second) value_error("PrimFunc: param '", param.name(), "' bound twice");
  }
  if (!body.defined()) value_error("PrimFunc: body is undefined");
  for (const auto& [key, value] : attrs)
    if (!value.defined()) value_error("PrimFunc: attribute '", key, "' is undefined");
  auto* node = new PrimFuncNode();
  node->params_ = std::move(params);
  node->buffer_map_ = std::move(buffer_map);
  node->body_ = std::move(body);
  node->ret_type_ = ret_type;
  node->attrs_ = std::move(attrs);
  return PrimFunc(node);
}

PrimFunc PrimFunc::with_body(Stmt body) const {
  const PrimFuncNode* n = get();
  return make(n->params(), n->buffer_map(), std::move(body), n->ret_type(), n->attrs());
}

PrimFunc PrimFunc::with_attr(std::string key, PrimExpr value) const {
  const PrimFuncNode* n = get();
  FuncAttrs attrs = n->attrs();
  attrs[std::move(key)] = std::move(value);
  return make(n->params(), n->buffer_map(), n->body(), n->ret_type(), std::move(attrs));
}

PrimFunc make_prim_func(std::string name, const std::vector<FuncParam>& params, Stmt body) {
  if (name.empty()) value_error("make_prim_func: the name must be non-empty");
  std::vector<Var> vars;
  std::vector<std::pair<Var, Buffer>> buffer_map;
  for (const auto& p : params) {
    if (auto* b = std::get_if<Buffer>(&p)) {
      if (!b->defined()) value_error("make_prim_func ", name, ": undefined buffer parameter");
      Var handle((*b)->name(), ir::handle_type());
      vars.push_back(handle);
      buffer_map.emplace_back(handle, *b);
    } else {
      vars.push_back(std::get<Var>(p));
    }
  }
  FuncAttrs attrs;
  attrs[std::string(attr::kGlobalSymbol)] = ir::string_imm(name);
  return PrimFunc::make(std::move(vars), std::move(buffer_map), std::move(body), ir::void_type(), std::move(attrs));
}

}  // namespace anvil::tir
