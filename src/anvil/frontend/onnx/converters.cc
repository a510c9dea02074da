// The converter table (converters.h): filled once, on first use, by the family files; no
// static initialisers. Registering after the fill is allowed too (tests add converters of their
// own), from one thread, before the converters are looked up concurrently.
#include "anvil/frontend/onnx/converters.h"

#include <map>
#include <mutex>

#include "anvil/base/error.h"

namespace anvil::frontend::onnx {
namespace {

std::map<std::string, Converter>& table() {
  static std::map<std::string, Converter> t;
  return t;
}

bool& filling() {
  static bool f = false;
  return f;
}

const std::map<std::string, Converter>& filled_table() {
  static std::once_flag once;
  std::call_once(once, [] {
    filling() = true;
    register_elementwise_converters();
    register_reduce_converters();
    register_nn_converters();
    register_attention_converter();
    register_linear_attention_converter();
    register_transform_converters();
    register_quantize_converters();
    register_recurrent_converters();
    register_dropout_converter();
    register_rotary_converter();
    filling() = false;
  });
  return table();
}

}  // namespace

const Converter* find_converter(const std::string& op_type) {
  const auto& t = filled_table();
  auto it = t.find(op_type);
  return it == t.end() ? nullptr : &it->second;
}

std::vector<std::string> list_converters() {
  std::vector<std::string> out;
  for (const auto& [name, converter] : filled_table()) out.push_back(name);
  return out;
}

void register_converter(const std::string& op_type, Converter converter) {
  if (!filling()) filled_table();  // a later registration must not run before the families'
  ANVIL_ICHECK(static_cast<bool>(converter), "ONNX converter for ", op_type, " is empty");
  bool inserted = table().emplace(op_type, std::move(converter)).second;
  ANVIL_ICHECK(inserted, "ONNX converter registered twice: ", op_type);
}

}  // namespace anvil::frontend::onnx
