// PrimFunc: one kernel of the loop-level IR — parameters, the buffers behind handle parameters,
// a body, a return type and attributes ("global_symbol", ...).
//
// Building one:
//   Var n = ir::size_var("n");
//   Buffer A = ir::decl_buffer({n}, DataType::float32(), "A");
//   Buffer B = ir::decl_buffer({n}, DataType::float32(), "B");
//   Var i("i");
//   Stmt body = make_for(i, 0, n, buffer_store(B, ir::buffer_load(A, {i}) * 2.0, {i}));
//   PrimFunc f = make_prim_func("scale", {A, B}, body);   // params: A, B (handles) -> buffers
// Symbolic shape vars (n) are defined by the buffer_map: callers bind them from the tensors.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "anvil/tir/stmt.h"

namespace anvil::tir {

// Function attributes, ordered by key. Values are expressions (StringImm for names).
using FuncAttrs = std::map<std::string, PrimExpr>;

namespace attr {
inline constexpr std::string_view kGlobalSymbol = "global_symbol";  // StringImm: exported name
}  // namespace attr

class PrimFuncNode : public ir::Node {
 public:
  std::string_view type_key() const override { return "tir.PrimFunc"; }
  const std::vector<Var>& params() const { return params_; }
  // (param, buffer) pairs in parameter order; each param is a handle param.
  const std::vector<std::pair<Var, Buffer>>& buffer_map() const { return buffer_map_; }
  const Stmt& body() const { return body_; }
  DataType ret_type() const { return ret_type_; }
  const FuncAttrs& attrs() const { return attrs_; }

  // The buffer bound to param, or an undefined Buffer.
  Buffer buffer_of(const Var& param) const;
  // A string attribute (StringImm), if present.
  std::optional<std::string> str_attr(std::string_view key) const;

 private:
  friend class PrimFunc;
  PrimFuncNode() = default;
  std::vector<Var> params_;
  std::vector<std::pair<Var, Buffer>> buffer_map_;
  Stmt body_;
  DataType ret_type_ = ir::void_type();
  FuncAttrs attrs_;
};

class PrimFunc : public ir::NodeRef<PrimFuncNode> {
 public:
  PrimFunc() = default;
  explicit PrimFunc(const PrimFuncNode* node) : NodeRef(node) {}

  // Checks: params defined and distinct; every buffer_map key is a handle param, at most once;
  // body defined; attribute values defined.
  static PrimFunc make(std::vector<Var> params, std::vector<std::pair<Var, Buffer>> buffer_map, Stmt body,
                       DataType ret_type = ir::void_type(), FuncAttrs attrs = {});

  // Copies with one part replaced (the original is unchanged).
  PrimFunc with_body(Stmt body) const;
  PrimFunc with_attr(std::string key, PrimExpr value) const;
};

// A parameter of make_prim_func: a Buffer (becomes a handle param named like the buffer, bound
// to it in buffer_map) or a scalar Var (passed by value).
using FuncParam = std::variant<Buffer, Var>;

// The usual way to build a kernel: params in order, "global_symbol" = name.
PrimFunc make_prim_func(std::string name, const std::vector<FuncParam>& params, Stmt body);

}  // namespace anvil::tir
