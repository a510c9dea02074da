// LLVM initialisation: registers every target LLVM was built with (so any -mtriple can be
// emitted, e.g. aarch64 objects on an x86-64 machine), their assemblers and printers, once per
// process. Every entry point of codegen/llvm calls it; calling it again is free.
#pragma once

namespace anvil::codegen {

void initialize_llvm();

}  // namespace anvil::codegen
