// storage_flatten: multi-dimensional buffer accesses -> one-dimensional accesses on the buffer's
// data var, the form code generators consume.
//
//   A[i, j] (A: shape [n, m], strides [] (compact), elem_offset e)  ->  A_flat[e + i * m + j]
//
// Every BufferLoad / BufferStore is rewritten to use a 1-D Buffer with the same data var, dtype,
// name, scope and alignment (shape [number of elements], compact, elem_offset 0); its index is
// elem_offset + sum(index_d * stride_d) with the buffer's strides, or the compact row-major ones.
// Vector accesses stay vectors: when every index is a scalar, a Ramp or a Broadcast the result is
// one Ramp (stride 1 for contiguous inner accesses), otherwise vector arithmetic. Multiplications
// by 1 and additions of 0 are left out (no other simplification). Allocate extents become one
// extent (their product); AttrStmts (storage_alignment) are kept. Already flat, compact,
// offset-free accesses come back unchanged, so running the pass twice changes nothing.
#pragma once

#include "anvil/tir/prim_func.h"

namespace anvil::tir::passes {

Stmt storage_flatten(const Stmt& body);
// The function with its body flattened; params and buffer_map are kept (callers bind the
// original n-d buffers; the flat buffers share their data vars).
PrimFunc storage_flatten(const PrimFunc& f);

}  // namespace anvil::tir::passes

namespace anvil::tir {
// Also reachable as tir::storage_flatten (callers written before the passes namespace).
using passes::storage_flatten;
}  // namespace anvil::tir
