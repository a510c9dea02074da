// The C++ side of the kernel ABI: the thread-local error a kernel reports through error_set, and
// the conversion of Values to and from AnvilValue cells.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/value.h"

namespace anvil {

// Takes (and clears) the message and kind the current thread's last kernel set.
std::string take_kernel_error(int32_t* kind);

// Fills `cells` for a call; strings, bytes, shapes and functions are borrowed from `args`, whose
// lifetime must cover the call. `scratch` holds the byte-array and shape structs.
struct AbiArgs {
  std::vector<AnvilValue> cells;
  std::vector<AnvilByteArray> byte_arrays;
  std::vector<AnvilShape> shapes;
};
void to_abi_args(std::span<const Value> args, AbiArgs* out);
// A kernel's POD return value as a Value; TypeError for kinds a kernel may not return.
Value from_abi_return(const AnvilValue& ret);

}  // namespace anvil
