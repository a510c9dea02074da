// The control-flow family: `if` and `loop`, whose bodies are Functions of the module (the
// ONNX If/Loop subgraphs, outer-scope values passed as arguments).
//
//   if(cond, captured...; then_func="f", else_func="g")  -> the branches' (equal) result type
//       cond: a one-element bool/integer tensor; both branch functions take `captured...`.
//   loop(max_trip, cond, carried..., captured...; body="b", num_carried=N)
//       -> Tuple[carried..., scans...]
//       max_trip: Tensor[(), int64]; cond: Tensor[(), bool]. The body takes
//       (iteration: Tensor[(), int64], cond, carried..., captured...) and returns
//       Tuple[cond, carried..., scan elements...]; the loop runs while iteration < max_trip and
//       cond, and each scan output is its per-iteration elements stacked on a new leading axis.
//
//   check(x, ok; message) -> x's type
//       a copy of x when every element of ok (a bool tensor) is true, else a ValueError with
//       `message` and x's values. The importer's guard before an if chain specialised on values
//       known only at run time (frontend/onnx/specialize.h): a value it was not compiled for
//       fails instead of taking some branch. Typed by inference; the VM runs it (vm.builtin.check).
//
// Like call_fused, their type is the callee's, which inference cannot see: the importer builds
// the Call with it, the parser takes the binding's printed type and the verifier checks it.
// kOpaque: never fused; lower_graph leaves them to the VM (vm_codegen emits the branches/loop).
#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {
namespace {

Type control_flow_type(const CallNode& c) {
  value_error("the type of an ", c.op(), " is its body functions' result type, which type inference cannot see; "
              "build it with Call::make and that type (as the ONNX importer does)");
}

Type check_type(const CallNode& c) {
  const Type& x = tensor_arg(c, 0, false);
  const Type& ok = tensor_arg(c, 1, false);
  if (ok.dtype() != DataType::boolean()) type_error("argument 1 (ok) must be a bool tensor, not ", to_string(ok));
  get_string(c.attrs(), "message");
  return x;
}

}  // namespace

void register_control_flow_ops() {
  register_op({"check", 2, 2, OpPattern::kOpaque, check_type,
               "check(x, ok; message): x, after a run-time check that every element of ok is true (ValueError otherwise)"});
  register_op({kCallIf, 1, -1, OpPattern::kOpaque, control_flow_type,
               "if(cond, captured...; then_func, else_func): one of two functions of the module, by a 0-d condition"});
  register_op({kCallLoop, 2, -1, OpPattern::kOpaque, control_flow_type,
               "loop(max_trip, cond, carried..., captured...; body, num_carried): a body function run while "
               "iteration < max_trip and cond, carrying values and stacking scan outputs"});
}

}  // namespace anvil::graph::ops
