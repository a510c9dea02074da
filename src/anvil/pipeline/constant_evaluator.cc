// Compile-time evaluation of calls on constants.
#include "anvil/pipeline/constant_evaluator.h"

#include "anvil/base/error.h"
#include "anvil/ops/lower_call.h"
#include "anvil/pipeline/build.h"

namespace anvil::pipeline {

std::optional<Tensor> evaluate_constant_call(const graph::CallNode& call) {
  const graph::Type& out_type = call.type();
  if (!out_type.is_tensor()) return std::nullopt;
  std::optional<std::vector<int64_t>> shape = out_type.static_shape();
  if (!shape) return std::nullopt;
  int64_t bytes = out_type.dtype().bytes();
  for (int64_t d : *shape) bytes *= d;
  if (bytes > kMaxFoldedBytes) return std::nullopt;
  std::vector<Value> args;
  for (const graph::Expr& a : call.args()) {
    if (const auto* c = a.as<graph::ConstantNode>()) args.emplace_back(c->data());
    else if (a.kind() != graph::ExprKind::kShapeExpr) return std::nullopt;
  }
  for (const graph::Expr& a : call.args())
    if (const auto* s = a.as<graph::ShapeExprNode>())
      for (const ir::PrimExpr& v : s->values())
        if (!ir::as_const_int(v)) return std::nullopt;
  Target host = Target::parse("llvm");
  ops::LoweredCall lowered;
  try {
    lowered = ops::lower_call(call, host, "anvil_fold_constant");
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kNotImplemented) return std::nullopt;
    throw;
  }
  if (!lowered.shape_vars.empty()) return std::nullopt;  // constants have static shapes
  Module m = build({lowered.func}, host);
  Tensor out = Tensor::empty(*shape, out_type.dtype());
  args.emplace_back(out);
  m.get_function("anvil_fold_constant").call(Args(args.data(), args.size()));
  return out;
}

}  // namespace anvil::pipeline
