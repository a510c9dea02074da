// Preparing an llvm::Module for a TargetMachine and running the optimisation pipeline on it.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace anvil::codegen {

// Sets the module's triple and data layout from `tm`, and on every defined function without
// them the "target-cpu" / "target-features" attributes (so the vectorisers' cost model and the
// code generator see the same CPU). Then verifies the module: invalid IR is an InternalError
// (it is a code generator's bug) carrying LLVM's verifier message.
void prepare_module_for_target(llvm::Module& module, llvm::TargetMachine& tm);

// The new pass manager's default per-module pipeline at the TargetMachine's level
// (-opt-level: 0 = O0, 1 = O1, 2 = O2, 3 = O3), loop and SLP vectorisers on, loop unrolling on.
// Call prepare_module_for_target first.
void optimize_module(llvm::Module& module, llvm::TargetMachine& tm);

}  // namespace anvil::codegen
