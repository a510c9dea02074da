// The default CPU schedule of reduction kernels (sum/mean/max/min/prod, argmax/argmin and
// their epilogues): every reduction stage at the root, its data-parallel axes fused and the
// fused loop parallel (for enough work); when no load of the stage reads its innermost index
// through a reduction axis (the reduced axes are not the input's innermost), the innermost
// data axis is split by the vector width and vectorised inside the reduction loops, so each
// reduction step reads contiguous vectors. Other intermediate stages are inlined and the
// outputs that are not reductions get the injective schedule.
#pragma once

#include <vector>

#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops {

void schedule_reduce_stage(te::Schedule& s, const te::Tensor& stage, const Target& target);

void schedule_reduce(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target);

}  // namespace anvil::ops
