// Reading __anvil_model_info.
#include "anvil/tools/model_info.h"

#include <nlohmann/json.hpp>

#include "anvil/base/error.h"

namespace anvil::tools {
namespace {

std::vector<TensorInfo> parse_list(const nlohmann::json& list) {
  std::vector<TensorInfo> out;
  for (const auto& j : list) {
    TensorInfo t;
    t.name = j.value("name", "");
    t.dtype = j.value("dtype", "");
    if (j.contains("shape") && j["shape"].is_array()) {
      t.has_shape = true;
      for (const auto& d : j["shape"]) t.dims.push_back(d.is_string() ? d.get<std::string>() : std::to_string(d.get<int64_t>()));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

ModelInfo parse_model_info(const std::string& json) {
  ModelInfo info;
  info.json = json;
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded()) value_error("the library's __anvil_model_info is not JSON");
  if (j.contains("inputs")) info.inputs = parse_list(j["inputs"]);
  if (j.contains("outputs")) info.outputs = parse_list(j["outputs"]);
  return info;
}

ModelInfo read_model_info(vm::VirtualMachine& vm) {
  ModelInfo info;
  const vm::Executable& exe = vm->executable();
  if (exe->find_function("__anvil_model_info") >= 0) {
    return parse_model_info(vm->invoke("__anvil_model_info", {}).as_string());
  }
  int64_t main = exe->find_function("main");
  if (main < 0) value_error("the library has no VM function 'main'");
  for (const std::string& n : exe->func_table[static_cast<size_t>(main)].param_names) info.inputs.push_back({n, "", {}, false});
  return info;
}

std::vector<int64_t> concrete_shape(const TensorInfo& info, const std::vector<int64_t>* pinned,
                                    std::vector<std::string>* defaulted) {
  if (pinned != nullptr) {
    if (info.has_shape && pinned->size() != info.dims.size())
      value_error("input '", info.name, "' has rank ", info.dims.size(), " but --input-shapes gives ", pinned->size(),
                  " dimensions");
    return *pinned;
  }
  if (!info.has_shape) value_error("input '", info.name, "': the library does not record its shape; pass --inputs or --input-shapes");
  std::vector<int64_t> out;
  for (const std::string& d : info.dims) {
    bool number = !d.empty() && d.find_first_not_of("0123456789") == std::string::npos;
    if (number) {
      out.push_back(std::stoll(d));
    } else {
      out.push_back(1);
      if (defaulted) defaulted->push_back(d);
    }
  }
  return out;
}

}  // namespace anvil::tools
