// lower and build: the order of the TIR passes (run_tir_pipeline), the grouping of functions per
// target and the hand-off to each target's code generator (codegen/codegen_registry.h).
#include "anvil/pipeline/build.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <set>
#include <utility>

#include "anvil/base/error.h"
#include "anvil/codegen/codegen_registry.h"
#include "anvil/te/lower.h"
#include "anvil/tir/passes/loop_partition.h"
#include "anvil/tir/passes/lower_parallel.h"
#include "anvil/tir/passes/remove_no_op.h"
#include "anvil/tir/passes/select_to_if.h"
#include "anvil/tir/passes/simplify.h"
#include "anvil/tir/passes/storage_flatten.h"
#include "anvil/tir/passes/unroll.h"
#include "anvil/tir/passes/vectorize.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/verify.h"

namespace anvil::pipeline {
namespace {

bool env_dump_ir() {
  const char* v = std::getenv("ANVIL_DUMP_IR");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

// After each stage: print it (dump_ir) and check it (verify, or always in debug builds).
class StageHook {
 public:
  explicit StageHook(const BuildOptions& options) : dump_(options.dump_ir || env_dump_ir()) {
#ifndef NDEBUG
    verify_ = true;
#else
    verify_ = options.verify;
#endif
  }
  const tir::PrimFunc& operator()(const char* stage, const tir::PrimFunc& f) const {
    if (dump_) std::cerr << "// ---- after " << stage << "\n" << tir::to_string(f) << "\n";
    if (verify_) tir::check_well_formed(f, stage);
    return f;
  }

 private:
  bool dump_;
  bool verify_ = false;
};

tir::PrimFunc run_stages(tir::PrimFunc f, const StageHook& after, bool vectorize) {
  namespace p = tir::passes;
  // The standard order (DESIGN.md §1): clean up what lowering produced, turn loop-bounded
  // selects into ifs and peel those and the guards of non-dividing splits so the main part of
  // each loop has no condition, expand unrolled and
  // vectorized loops, flatten n-d buffer accesses, drop dead code, and give parallel loops the
  // form the code generators outline.
  f = after("simplify", p::simplify(f));
  f = after("select_to_if", p::select_to_if(f));
  f = after("loop_partition", p::loop_partition(f));
  f = after("simplify (after loop_partition)", p::simplify(f));
  f = after("unroll", p::unroll(f));
  if (vectorize) f = after("vectorize", p::vectorize(f));
  f = after("storage_flatten", p::storage_flatten(f));
  f = after("simplify (after storage_flatten)", p::simplify(f));
  f = after("remove_no_op", p::remove_no_op(f));
  f = after("lower_parallel", p::lower_parallel(f));
  return f;
}

std::string func_name(const tir::PrimFunc& f) { return f->str_attr(tir::attr::kGlobalSymbol).value_or("main"); }

// The target a function is built for: its "target" attribute (TVM's convention; the host's
// functions and device kernels of one build carry different ones), else the build's target.
Target target_of(const tir::PrimFunc& f, const Target& target) {
  std::optional<std::string> text = f->str_attr(kTargetAttr);
  if (!text) return target;
  Target own = Target::parse(*text);
  if (own.is_host_kind() && own != target.host())
    value_error("build: function '", func_name(f), "' is for the host target '", own.str(),
                "' but the build's host is '", target.host().str(), "'");
  return own;
}

// Fails before any work when some group's kind has no code generator (device back ends that are
// not written yet): NotImplementedError naming the kind.
void check_generators(const std::vector<std::pair<Target, std::vector<tir::PrimFunc>>>& groups) {
  for (const auto& [target, funcs] : groups)
    if (codegen::find_codegen(target.kind()) == nullptr) codegen::build_for_target(funcs, target);
}

std::vector<std::pair<Target, std::vector<tir::PrimFunc>>> group_by_target(const std::vector<tir::PrimFunc>& funcs,
                                                                            const Target& target) {
  std::vector<std::pair<Target, std::vector<tir::PrimFunc>>> groups;
  for (const tir::PrimFunc& f : funcs) {
    Target t = target_of(f, target);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == t; });
    if (it == groups.end()) {
      groups.emplace_back(t, std::vector<tir::PrimFunc>{});
      it = groups.end() - 1;
    }
    it->second.push_back(f);
  }
  return groups;
}

// Each target's functions through its code generator. Host functions alone: their module.
// Otherwise the host group's module (an empty one of the host's generator if no function is for
// the host) imports the device modules, so export_library has host code to compile and puts the
// device modules into its blob (as TVM's device builds do).
Module generate(const std::vector<tir::PrimFunc>& lowered, const Target& target) {
  auto groups = group_by_target(lowered, target);
  check_generators(groups);
  if (groups.size() == 1 && groups[0].first.is_host_kind())
    return codegen::build_for_target(groups[0].second, groups[0].first);
  Target host = target.host();
  std::vector<tir::PrimFunc> host_funcs;
  std::vector<Module> device_modules;
  for (const auto& [t, funcs] : groups) {
    if (t == host) host_funcs = funcs;
    else device_modules.push_back(codegen::build_for_target(funcs, t));
  }
  Module root = codegen::build_for_target(host_funcs, host);
  for (const Module& m : device_modules) root.import_module(m);
  return root;
}

}  // namespace

tir::PrimFunc run_tir_pipeline(const tir::PrimFunc& f, const BuildOptions& options) {
  StageHook after(options);
  return run_stages(after("input", f), after, options.vectorize);
}

tir::PrimFunc lower(const te::Schedule& schedule, const std::vector<te::LowerArg>& args, const std::string& name,
                    const BuildOptions& options) {
  StageHook after(options);
  return run_stages(after("te::lower", te::lower(schedule, args, name)), after, options.vectorize);
}

tir::PrimFunc lower(const te::Schedule& schedule, const std::vector<te::Tensor>& args, const std::string& name,
                    const BuildOptions& options) {
  return lower(schedule, std::vector<te::LowerArg>(args.begin(), args.end()), name, options);
}

Module build(const std::vector<tir::PrimFunc>& funcs, const Target& target, const BuildOptions& options) {
  if (funcs.empty()) value_error("build: no functions to build");
  std::vector<tir::PrimFunc> lowered;
  std::set<std::string> names;
  for (const tir::PrimFunc& f : funcs) {
    if (!f.defined()) value_error("build: an undefined PrimFunc among the functions");
    std::string name = func_name(f);
    if (!names.insert(name).second) value_error("build: two functions are named '", name, "'");
    BuildOptions own = options;
    own.vectorize = options.vectorize && target_of(f, target).is_host_kind();
    lowered.push_back(run_tir_pipeline(f, own));
  }
  return generate(lowered, target);
}

Module build(const te::Schedule& schedule, const std::vector<te::LowerArg>& args, const Target& target,
             const std::string& name, const BuildOptions& options) {
  check_generators({std::make_pair(target, std::vector<tir::PrimFunc>{})});  // before the work of lowering
  BuildOptions own = options;
  own.vectorize = options.vectorize && target.is_host_kind();
  return generate({lower(schedule, args, name, own)}, target);
}

Module build(const te::Schedule& schedule, const std::vector<te::Tensor>& args, const Target& target,
             const std::string& name, const BuildOptions& options) {
  return build(schedule, std::vector<te::LowerArg>(args.begin(), args.end()), target, name, options);
}

}  // namespace anvil::pipeline
