// A deployment-side model runner: links libanvil_runtime alone (no compiler, no LLVM, no
// protobuf), loads a model compiled by `anvil compile` / pipeline::compile + export_library,
// runs its "main" on the VM and writes the outputs. Usage:
//   anvil_runtime_only_run_model <model.so> <inputs.params> <outputs.params>
// inputs.params: a params file (runtime/tensor_io.h, save_params) keyed by the model's input
// names; outputs.params gets "output0", "output1", ... (a tuple result is flattened in order).
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "anvil/runtime/module/module.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor_io.h"
#include "anvil/runtime/vm/vm.h"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void flatten(const anvil::Value& v, std::vector<anvil::Tensor>& out) {
  if (v.kind() == anvil::ValueKind::kTensor) {
    out.push_back(v.as_tensor());
    return;
  }
  for (const anvil::Value& item : v.as_array()) flatten(item, out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::printf("usage: %s <model.so> <inputs.params> <outputs.params>\n"
                "Runs a compiled model's main on the VM with the Anvil runtime alone.\n",
                argv[0]);
    return argc == 2 && std::string(argv[1]) == "--help" ? 0 : 2;
  }
  try {
    anvil::register_runtime_functions();
    anvil::Module lib = anvil::Module::load_from_file(argv[1]);
    anvil::vm::Executable exe = anvil::vm::Executable::from_module(lib);
    int64_t main_index = exe->find_function("main");
    if (main_index < 0) throw std::runtime_error("the model has no function 'main'");
    const anvil::vm::FuncInfo& info = exe->func_table[static_cast<size_t>(main_index)];
    std::map<std::string, anvil::Tensor> inputs = anvil::load_params(read_file(argv[2]));
    std::vector<anvil::Value> args;
    for (const std::string& name : info.param_names) {
      auto it = inputs.find(name);
      if (it == inputs.end()) throw std::runtime_error("no input named '" + name + "' in " + argv[2]);
      args.emplace_back(it->second);
    }
    anvil::vm::VirtualMachine vm = anvil::vm::VirtualMachine::create(lib);
    anvil::Value result = vm->invoke("main", args);
    std::vector<anvil::Tensor> outs;
    flatten(result, outs);
    std::map<std::string, anvil::Tensor> named;
    for (size_t i = 0; i < outs.size(); ++i) named["output" + std::to_string(i)] = outs[i];
    std::ofstream out(argv[3], std::ios::binary);
    out << anvil::save_params(named);
    if (!out) throw std::runtime_error(std::string("cannot write '") + argv[3] + "'");
    for (size_t i = 0; i < outs.size(); ++i) std::printf("output%zu: %s\n", i, outs[i].to_string().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
