// Reference interpreter: executes a PrimFunc on host memory by walking the tree, so tests can
// run lowered IR against numpy before (and alongside) the code generators. Slow and simple;
// expression semantics are the evaluator's ("anvil/ir/eval.h").
//
//   run_prim_func(f, {A.dl(), B.dl(), int64_t{n}});   // one argument per param, in order
//
// Arguments: a DLTensor* (CPU memory) for each buffer param, int64_t or double for scalar
// params. Binding a buffer param checks dtype and rank and binds the buffer's symbolic shape,
// stride and offset vars from the tensor (a constant that disagrees is a ValueError); a buffer
// without strides needs a compact tensor. Every load and store is bounds-checked against the
// memory it points into (IndexError naming the buffer and the indices). Allocate gives zeroed
// host memory. All loop kinds run serially in order (thread-bound loops included: there are no
// barriers in the IR yet). Supported element types: bool, int/uint 8-64, float16, bfloat16,
// float32/64 (16-bit floats are widened exactly on load and rounded to nearest even on store;
// their arithmetic rounds after every operation, as in eval.h).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <span>
#include <variant>

#include "anvil/tir/prim_func.h"

namespace anvil::tir {

using InterpArg = std::variant<DLTensor*, int64_t, double>;

void run_prim_func(const PrimFunc& f, std::span<const InterpArg> args);
inline void run_prim_func(const PrimFunc& f, std::initializer_list<InterpArg> args) {
  run_prim_func(f, std::span<const InterpArg>(args.begin(), args.size()));
}

}  // namespace anvil::tir
