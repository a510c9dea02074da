// `anvil inspect model.onnx | model.so`: what a model takes and gives (symbolic dims too),
// its operators, and for a compiled library its kernels and memory plan.
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/importer.h"
#include "anvil/frontend/onnx/model_summary.h"
#include "anvil/graph/printer.h"
#include "anvil/rpc/cli_options.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/vm/vm.h"
#include "anvil/tools/anvil_commands.h"
#include "anvil/tools/model_info.h"

namespace anvil::tools {
namespace {

void inspect_onnx(const std::string& path, const std::string& shapes_text, bool print_ir) {
  frontend::onnx::LoadedModel model = frontend::onnx::load_model(path);
  std::cout << frontend::onnx::format_summary(frontend::onnx::summarize_model(model));
  frontend::onnx::ImportOptions options;
  if (!shapes_text.empty()) options.input_shapes = parse_input_shapes(shapes_text);
  graph::IRModule mod = frontend::onnx::from_onnx(model, options);
  const graph::Function& main = mod.main();
  std::cout << "\nimported (types inferred by Anvil):\n";
  for (const graph::Var& p : main.params()) std::cout << "  input   %" << p.name() << ": " << graph::to_string(p.type()) << "\n";
  std::cout << "  output  " << graph::to_string(main.result().type()) << "\n";
  std::map<std::string, int> ops;
  for (const graph::Binding& b : main.bindings())
    if (const auto* c = b.value.as<graph::CallNode>()) ++ops[c->op()];
  std::cout << "  graph operators (" << main.bindings().size() << " bindings):";
  for (const auto& [op, n] : ops) std::cout << " " << op << " x" << n;
  std::cout << "\n";
  if (print_ir) std::cout << "\n" << graph::to_string(mod) << "\n";
}

void inspect_library(const std::string& path) {
  register_runtime_functions();
  Module lib = Module::load_from_file(path);
  vm::VirtualMachine machine = vm::VirtualMachine::create(lib, {Device::cpu()});
  ModelInfo info = read_model_info(machine);
  auto print_tensors = [](const char* title, const std::vector<TensorInfo>& ts) {
    std::cout << title << "\n";
    for (const TensorInfo& t : ts) {
      std::cout << "  " << t.name << "  " << (t.dtype.empty() ? "?" : t.dtype) << "  ";
      if (!t.has_shape) {
        std::cout << "(shape not recorded)\n";
        continue;
      }
      std::cout << "[";
      for (size_t i = 0; i < t.dims.size(); ++i) std::cout << (i ? ", " : "") << t.dims[i];
      std::cout << "]\n";
    }
  };
  std::cout << "library  " << path << "  (" << std::filesystem::file_size(path) << " bytes)\n";
  std::cout << machine->executable()->stats() << "\n";
  print_tensors("inputs", info.inputs);
  print_tensors("outputs", info.outputs);
  if (info.json.empty()) return;
  nlohmann::json j = nlohmann::json::parse(info.json);
  if (j.contains("target")) std::cout << "target   " << j["target"].get<std::string>() << "\n";
  if (j.contains("memory")) {
    const auto& m = j["memory"];
    std::cout << "memory plan\n";
    for (auto it = m.begin(); it != m.end(); ++it) std::cout << "  " << it.key() << "  " << it.value().dump() << "\n";
  }
  if (j.contains("kernels")) {
    std::cout << "kernels (" << j["kernels"].size() << ")\n";
    for (const auto& k : j["kernels"]) {
      std::cout << "  " << k.value("name", "?") << "  " << k.value("op", "") << "  " << k.value("implementation", "") << "\n";
    }
  }
}

}  // namespace

int inspect_main(int argc, char** argv) {
  CLI::App app{"Describe an ONNX model or a compiled library: inputs and outputs (symbolic dims too), operators, "
               "kernels, memory plan.",
               "anvil inspect"};
  rpc::cli::setup(app);
  std::string path, shapes_text;
  bool print_ir = false;
  app.add_option("model", path, "an ONNX model (.onnx) or a library made by anvil compile (.so)")->required();
  app.add_option("--input-shapes", shapes_text, "(.onnx) pin input shapes before inferring: name:1x3x224x224,...");
  app.add_flag("--ir", print_ir, "(.onnx) also print the imported graph IR");
  if (auto code = rpc::cli::parse(app, argc, argv)) return *code;
  try {
    std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".onnx") inspect_onnx(path, shapes_text, print_ir);
    else inspect_library(path);
  } catch (const Error& e) {
    std::cerr << "anvil inspect: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace anvil::tools
