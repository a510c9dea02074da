// libFuzzer target: arbitrary bytes into the ONNX loader. Every input must parse or throw
// anvil::Error; a parsed one is checked, every tensor in it converted and the model summarized,
// each failing only with anvil::Error. No directory is given, so external data is refused
// before any file is opened.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/graph_walk.h"
#include "anvil/frontend/onnx/model_loader.h"
#include "anvil/frontend/onnx/model_summary.h"
#include "anvil/frontend/onnx/tensor_proto.h"

namespace onnx_fe = anvil::frontend::onnx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx_fe::ModelProto model;
  try {
    model = onnx_fe::parse_model(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const anvil::Error&) {
    return 0;
  }
  try {
    onnx_fe::check_model(model, "fuzz", {});
  } catch (const anvil::Error&) {
  }
  onnx_fe::for_each_tensor(model.graph(), [](const onnx_fe::TensorProto& tensor, const std::string&) {
    try {
      onnx_fe::tensor_from_proto(tensor);
    } catch (const anvil::Error&) {
    }
  });
  (void)onnx_fe::format_summary(onnx_fe::summarize_model(model, "fuzz"));
  return 0;
}
