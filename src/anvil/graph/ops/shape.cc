// Operators of the shape family: values about shapes, evaluated by the VM (kOpaque, no kernel).
//
//   shape_of(data) -> Shape[ndim]                 the dims of a tensor as a shape value
//   shape_to_tensor(shape) -> Tensor[(ndim,), int64]   a ShapeExpr or Shape-typed value as a tensor
#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {
namespace {

Type shape_of_type(const CallNode& call) { return Type::shape(tensor_arg(call, 0).ndim()); }

Type shape_to_tensor_type(const CallNode& call) {
  if (call.args().empty()) type_error("argument 0 is missing");
  const Type& t = call.args()[0].type();
  if (!t.is_shape()) type_error("argument 0 is ", to_string(t), ", expected a shape value");
  if (t.ndim() < 0) type_error("argument 0 is a shape of unknown rank, expected a known rank");
  return Type::tensor(std::vector<int64_t>{t.ndim()}, DataType::int64());
}

}  // namespace

void register_shape_ops() {
  register_op({"shape_of", 1, 1, OpPattern::kOpaque, shape_of_type, "shape_of(data): the dims of a tensor (VM)"});
  register_op({"shape_to_tensor", 1, 1, OpPattern::kOpaque, shape_to_tensor_type,
               "shape_to_tensor(shape): a shape value as an int64 tensor (VM)"});
}

}  // namespace anvil::graph::ops
