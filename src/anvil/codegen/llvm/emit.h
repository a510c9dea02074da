// Machine code out of an llvm::Module: relocatable object bytes, assembly text, IR text.
// The module is cloned before code generation (which rewrites IR), so it stays as it was and can
// be emitted again in another form.
#pragma once

#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace anvil::codegen {

// An ELF/Mach-O/COFF relocatable object for tm's triple (what `cc -c` would produce); link it
// into a shared library with the system compiler (pipeline/export_library does). RuntimeError
// if the target cannot emit objects.
std::string emit_object(const llvm::Module& module, llvm::TargetMachine& tm);
// The same code as assembly text.
std::string emit_assembly(const llvm::Module& module, llvm::TargetMachine& tm);
// The module's textual IR (.ll).
std::string module_to_ir_text(const llvm::Module& module);

}  // namespace anvil::codegen
