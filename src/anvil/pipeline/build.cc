// lower and build: the order of the TIR passes (run_tir_pipeline) and the choice of code generator.
#include "anvil/pipeline/build.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>

#include "anvil/base/error.h"
#include "anvil/codegen/c/codegen_c.h"
#include "anvil/codegen/llvm/codegen_llvm.h"
#include "anvil/te/lower.h"
#include "anvil/tir/passes/loop_partition.h"
#include "anvil/tir/passes/lower_parallel.h"
#include "anvil/tir/passes/remove_no_op.h"
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

tir::PrimFunc run_stages(tir::PrimFunc f, const StageHook& after) {
  namespace p = tir::passes;
  // The standard order (DESIGN.md §1): clean up what lowering produced, peel the guards of
  // non-dividing splits so the main part of each loop has no condition, expand unrolled and
  // vectorized loops, flatten n-d buffer accesses, drop dead code, and give parallel loops the
  // form the code generators outline.
  f = after("simplify", p::simplify(f));
  f = after("loop_partition", p::loop_partition(f));
  f = after("simplify (after loop_partition)", p::simplify(f));
  f = after("unroll", p::unroll(f));
  f = after("vectorize", p::vectorize(f));
  f = after("storage_flatten", p::storage_flatten(f));
  f = after("simplify (after storage_flatten)", p::simplify(f));
  f = after("remove_no_op", p::remove_no_op(f));
  f = after("lower_parallel", p::lower_parallel(f));
  return f;
}

std::string func_name(const tir::PrimFunc& f) { return f->str_attr(tir::attr::kGlobalSymbol).value_or("main"); }

void check_target(const Target& target) {
  if (target.kind() != TargetKind::kLLVM && target.kind() != TargetKind::kC)
    value_error("build: target '", target.str(), "' is not supported here (use 'llvm' or 'c')");
}

// The code generator of the target, on functions that went through run_tir_pipeline.
Module generate(const std::vector<tir::PrimFunc>& lowered, const Target& target) {
  check_target(target);
  if (target.kind() == TargetKind::kLLVM) return codegen::build_llvm(lowered, target);
  return codegen::build_c(lowered, target);
}

}  // namespace

tir::PrimFunc run_tir_pipeline(const tir::PrimFunc& f, const BuildOptions& options) {
  StageHook after(options);
  return run_stages(after("input", f), after);
}

tir::PrimFunc lower(const te::Schedule& schedule, const std::vector<te::LowerArg>& args, const std::string& name,
                    const BuildOptions& options) {
  StageHook after(options);
  return run_stages(after("te::lower", te::lower(schedule, args, name)), after);
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
    lowered.push_back(run_tir_pipeline(f, options));
  }
  return generate(lowered, target);
}

Module build(const te::Schedule& schedule, const std::vector<te::LowerArg>& args, const Target& target,
             const std::string& name, const BuildOptions& options) {
  check_target(target);  // before the work of lowering
  return generate({lower(schedule, args, name, options)}, target);
}

Module build(const te::Schedule& schedule, const std::vector<te::Tensor>& args, const Target& target,
             const std::string& name, const BuildOptions& options) {
  return build(schedule, std::vector<te::LowerArg>(args.begin(), args.end()), target, name, options);
}

}  // namespace anvil::pipeline
