// ParamsModule (kind "params"): named constant tensors (model weights) that travel inside a
// library's blob. Functions: "get_param"(name) -> Tensor, "list_params"() -> array of names,
// "num_params"() -> int.
#pragma once

#include <map>
#include <string>

#include "anvil/runtime/module/module.h"
#include "anvil/runtime/tensor.h"

namespace anvil {

Module make_params_module(std::map<std::string, Tensor> params);

}  // namespace anvil
