// recognize_softmax: softmax spelled out in a reduction, exp and a divide — as attention blocks
// written by hand and some exporters write it — rewritten as one nn.softmax:
//
//   [%m = max(%x, axes=[a], keepdims=1); %d = subtract(%x, %m)]   the max subtracted, or not
//   %e = exp(%d or %x)
//   %s = sum(%e, axes=[a], keepdims=1)
//   %y = divide(%e, %s)                  -> nn.softmax(%x, axis=a)
//
// (nn.softmax subtracts the maximum itself, so the form without it becomes the stabler one.)
// One axis, float32 data; every intermediate feeds only the next step of the pattern (%e: the
// sum and the divide). f itself when nothing matched.
#pragma once

#include "anvil/graph/function.h"

namespace anvil::graph::passes {

IRModule recognize_softmax(const IRModule& mod);
Function recognize_softmax(const Function& f);

}  // namespace anvil::graph::passes
