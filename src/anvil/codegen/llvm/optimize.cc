// Target preparation and the new-pass-manager pipeline.
#include "anvil/codegen/llvm/optimize.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "anvil/base/error.h"

namespace anvil::codegen {

void prepare_module_for_target(llvm::Module& module, llvm::TargetMachine& tm) {
  module.setTargetTriple(tm.getTargetTriple().str());
  module.setDataLayout(tm.createDataLayout());
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    if (!f.hasFnAttribute("target-cpu")) f.addFnAttr("target-cpu", tm.getTargetCPU());
    if (!f.hasFnAttribute("target-features") && !tm.getTargetFeatureString().empty())
      f.addFnAttr("target-features", tm.getTargetFeatureString());
  }
  std::string message;
  llvm::raw_string_ostream os(message);
  if (llvm::verifyModule(module, &os)) {
    os.flush();
    ANVIL_ICHECK(false, "LLVM module '", module.getName().str(), "' is not valid IR: ", message);
  }
}

void optimize_module(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::ModulePassManager passes;
  switch (tm.getOptLevel()) {
    case llvm::CodeGenOpt::None: passes = builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0); break;
    case llvm::CodeGenOpt::Less: passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1); break;
    case llvm::CodeGenOpt::Default: passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2); break;
    case llvm::CodeGenOpt::Aggressive: passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3); break;
  }
  passes.run(module, mam);
}

}  // namespace anvil::codegen
