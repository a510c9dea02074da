// Shared declarations of the nanobind extension `anvil._ffi`: one init function per area (each in
// its own .cc file) and the Python <-> Value conversion every area uses.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>

#include "anvil/runtime/function.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/value.h"

namespace anvil::python {

namespace nb = nanobind;

// Area initialisers, called in this order by module.cc.
void init_errors(nb::module_& m);
void init_device(nb::module_& m);
void init_tensor(nb::module_& m);
void init_dlpack(nb::module_& m);
// Tensor.__dlpack__ and __dlpack_device__ (dlpack.cc), called by init_tensor.
void def_dlpack_methods(nb::class_<Tensor>& cls);
void init_function(nb::module_& m);
void init_registry(nb::module_& m);
void init_runtime_module(nb::module_& m);
void init_vm(nb::module_& m);  // vm.cc
void init_rpc(nb::module_& m);  // rpc.cc: the RPC client (anvil._ffi.rpc)
void init_frontend(nb::module_& m);  // frontend.cc: IRModule, the ONNX importer, compile
void init_value_convert(nb::module_& m);

// Python -> Value. Throws TypeError (as anvil::Error) for objects with no Anvil equivalent.
// numpy arrays become Tensors sharing the array's memory (read-only arrays are copied).
Value to_value(nb::handle obj);
// An int from any Python integer (int, numpy integer, ...): TypeError naming `what` otherwise,
// ValueError when it does not fit in 64 bits.
int64_t to_int64(nb::handle obj, const char* what);
// Value -> Python: arrays become lists, shapes ShapeTuples, dtypes strings.
nb::object to_python(const Value& value);

// A CPU Tensor over a numpy array's memory, no copy. Read-only arrays are copied unless
// `require_writable`, which raises ValueError instead.
Tensor tensor_from_numpy(nb::handle array, bool require_writable = false);
bool is_numpy_array(nb::handle obj);
// Consumes a DLPack capsule, or calls obj.__dlpack__() first; no copy.
Tensor tensor_from_dlpack(nb::handle obj);
// Wraps a Python callable as a Function that takes the GIL when called.
Function function_from_callable(nb::handle callable, std::string name);

}  // namespace anvil::python
