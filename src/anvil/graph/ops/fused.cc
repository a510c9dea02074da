// The fused family: call_fused, the call of a fused group (graph/passes/fuse_ops.h).
//
//   call_fused(inputs...; func="fused_add_relu") -> the group Function's result type
//
// Registered so that the table, the printer, the parser and the verifier know the name. Its type
// cannot be inferred from the call alone (it is the callee's, and inference does not see the
// module): fuse_ops builds the Call with its type, the parser takes the binding's printed type and
// the verifier checks it against the callee. kOpaque: a group is never fused again.
#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {
namespace {

Type call_fused_type(const CallNode&) {
  value_error("the type of a call_fused is its group function's result type, which type inference cannot see; "
              "build it with Call::make and the callee's type (as fuse_ops does)");
}

}  // namespace

void register_fused_ops() {
  register_op({kCallFused, 0, -1, OpPattern::kOpaque, call_fused_type,
               "call_fused(inputs...; func): a fused group's Function of the module, typed by its result"});
}

}  // namespace anvil::graph::ops
