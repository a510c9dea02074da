// compile: the order of the graph compiler's stages, from a graph IRModule to an executable that
// imports its kernels. Each stage is one line here; what a stage does is in its own file.
#include "anvil/pipeline/compile.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/codegen/codegen_registry.h"
#include "anvil/graph/passes/canonicalize.h"
#include "anvil/graph/passes/recognize_gelu.h"
#include "anvil/graph/passes/recognize_layer_norm.h"
#include "anvil/graph/passes/recognize_softmax.h"
#include "anvil/graph/passes/dead_code_elimination.h"
#include "anvil/graph/passes/fold_constant.h"
#include "anvil/graph/passes/fuse_ops.h"
#include "anvil/graph/printer.h"
#include "anvil/ops/strategy.h"
#include "anvil/ops/prepack.h"
#include "anvil/pipeline/build.h"
#include "anvil/pipeline/constant_evaluator.h"
#include "anvil/pipeline/lower_graph.h"
#include "anvil/pipeline/vm_codegen.h"
#include "anvil/runtime/device.h"
#include "anvil/tir/printer.h"

namespace anvil::pipeline {
namespace {

namespace fs = std::filesystem;

// Dumps are for reading: big constants print as their size and hash; kernels go to tir/.
const graph::PrintOptions kDumpOptions{.max_constant_values = 16, .print_prim_funcs = false};

// Times each stage, reports it to the progress callback and writes its IR to dump_ir_dir.
class Stages {
 public:
  explicit Stages(const CompileOptions& options) : options_(options) {
    if (!options.dump_ir_dir.empty()) fs::create_directories(options.dump_ir_dir);
  }
  template <typename F>
  auto run(const std::string& stage, int total, F&& body) {
    return step(stage, total, total, std::forward<F>(body));
  }
  // One unit of a stage with several (done of total).
  template <typename F>
  auto step(const std::string& stage, int done, int total, F&& body) {
    auto start = std::chrono::steady_clock::now();
    auto out = body();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options_.progress) options_.progress(stage, done, total, seconds);
    return out;
  }
  void dump(const std::string& file, const std::string& text) const {
    if (options_.dump_ir_dir.empty()) return;
    fs::path path = fs::path(options_.dump_ir_dir) / file;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) io_error("compile: cannot write the IR dump '", path.string(), "'");
  }

 private:
  const CompileOptions& options_;
};

}  // namespace

vm::Executable compile(const graph::IRModule& input, const Target& target, const CompileOptions& options) {
  Stages stages(options);
  graph::IRModule mod = input;
  stages.dump("graph.input.txt", graph::to_string(mod, kDumpOptions));
  // Graph passes, in order (issue #11 item 3).
  if (options.opt_level >= 1) {
    // Calls on constants run now (weight transposes, casts, static shape_of / shape_to_tensor),
    // BatchNorm folds into the preceding Conv's weights and bias, conv weights are packed (both
    // then folded again), and what
    // nobody uses goes.
    auto fold = [&] { return graph::passes::fold_constant(mod, evaluate_constant_call); };
    mod = stages.run("fold_constant", 1, fold);
    mod = stages.run("canonicalize", 1, [&] { return graph::passes::canonicalize(mod); });
    // Layer norm, GELU and softmax spelled out in elementwise ops and reductions: one op each.
    mod = stages.run("recognize_layer_norm", 1, [&] { return graph::passes::recognize_layer_norm(mod); });
    mod = stages.run("recognize_gelu", 1, [&] { return graph::passes::recognize_gelu(mod); });
    mod = stages.run("recognize_softmax", 1, [&] { return graph::passes::recognize_softmax(mod); });
    // Constant conv weights into the blocked layout the CPU schedule reads (packed once, here).
    mod = stages.run("prepack_weights", 1, [&] { return ops::prepack_conv2d_weights(mod, target); });
    mod = stages.run("fold_constant (after canonicalize)", 1, fold);
    mod = stages.run("dead_code_elimination", 1, [&] { return graph::passes::dead_code_elimination(mod); });
    stages.dump("graph.optimized.txt", graph::to_string(mod, kDumpOptions));
  }
  if (options.opt_level >= 2) {
    // Chains of elementwise/broadcast/injective calls become one kernel each (not the ops the
    // VM evaluates itself, nor ops without a kernel for the target).
    auto fusible = [&](const graph::CallNode& c) {
      return !vm_evaluated_op(c.op()) && ops::find_implementation(c.op(), ops::target_family(target)) != nullptr;
    };
    mod = stages.run("fuse_ops", 1, [&] { return graph::passes::fuse_ops(mod, fusible); });
    stages.dump("graph.fused.txt", graph::to_string(mod, kDumpOptions));
  }

  // Operator calls -> call_tir of PrimFuncs (lowered through the strategy table, identical
  // calls sharing one kernel).
  mod = stages.run("lower_graph", 1, [&] { return lower_graph(mod, target); });
  stages.dump("graph.lowered.txt", graph::to_string(mod, kDumpOptions));
  for (const auto& [name, f] : mod.prim_funcs) stages.dump("tir/" + name + ".tir", tir::to_string(f));

  // Kernels: the TIR pass pipeline per kernel (reported one by one), then the target's code
  // generator on all of them, into one module (build's own pass run finds nothing left to do).
  // A model without kernels still gets an (empty) host module, so export_library has code to link.
  std::vector<tir::PrimFunc> funcs;
  BuildOptions kernel_options;
  kernel_options.vectorize = target.is_host_kind();  // device kernels keep scalar code
  for (const auto& entry : mod.prim_funcs) {
    const tir::PrimFunc& f = entry.second;  // (a structured binding cannot be captured in C++20)
    tir::PrimFunc lowered = stages.step("kernels", static_cast<int>(funcs.size()) + 1,
                                        static_cast<int>(mod.prim_funcs.size()), [&] { return run_tir_pipeline(f, kernel_options); });
    funcs.push_back(lowered);
  }
  Module kernels = stages.run("codegen", 1, [&] {
    return funcs.empty() ? codegen::build_for_target({}, target.host()) : build(funcs, target);
  });

  // The VM program: parameter checks, shape heap, planned allocations, kernel calls.
  VmCodegenOptions vm_options;
  vm_options.plan_memory = options.opt_level >= 1;
  vm_options.target = target.str();
  // Where the parameters must be: the device the target's kernels run on (device_types.def
  // names the target kinds too: "llvm" and "c" are the CPU).
  vm_options.device_type = Device::parse(target.kind_name()).type;
  VmCodegenResult result = stages.run("vm_codegen", 1, [&] { return vm_codegen(mod, vm_options); });
  stages.dump("vm.txt", result.exec->as_text());
  stages.dump("memory_plan.json", result.memory_plan.to_json() + "\n");

  // The executable imports its kernels: the VM finds them there, export_library packs both.
  result.exec.as_module().import_module(kernels);
  return result.exec;
}

Module compile_to_module(const graph::IRModule& mod, const Target& target, const CompileOptions& options) {
  return compile(mod, target, options).as_module();
}

}  // namespace anvil::pipeline
