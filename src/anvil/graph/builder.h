// BlockBuilder: builds a graph Function binding by binding, inferring each call's type through
// the operator table — how the importer, the passes and tests write graph code.
//
//   BlockBuilder b;
//   Var x = b.add_param("x", Type::tensor({n, 4}, DataType::float32()));
//   Var y = b.emit(b.call("relu", {x}), "y");
//   Function f = b.finish(y);
//
// call() checks the arity and runs the operator's type inference; errors are re-thrown with
// the operator's name in front ("nn.conv2d: ...") and keep their kind.
#pragma once

#include <string>
#include <vector>

#include "anvil/graph/function.h"

namespace anvil::graph {

class BlockBuilder {
 public:
  Var add_param(std::string name, Type type);
  // A typed call of a registered operator, not yet bound.
  Expr call(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) const;
  // Binds `value` to a new Var named `name` (or "v" when empty) and returns it. Vars and
  // constants are returned as they are when they need no binding (emit_var forces one).
  Expr emit(Expr value, std::string name = "");
  Var emit_var(Expr value, std::string name = "");
  Expr emit_call(const std::string& op, std::vector<Expr> args, Attrs attrs = {}, std::string name = "") {
    return emit(call(op, std::move(args), std::move(attrs)), std::move(name));
  }
  const std::vector<Binding>& bindings() const { return bindings_; }
  // The function of the parameters and bindings so far; the builder is empty afterwards.
  Function finish(Expr result);

 private:
  std::vector<Var> params_;
  std::vector<Binding> bindings_;
};

// The type a call of `op` has with these arguments and attributes (the same inference as
// BlockBuilder::call), for passes that rebuild calls.
Type infer_call_type(const std::string& op, const std::vector<Expr>& args, const Attrs& attrs);

}  // namespace anvil::graph
