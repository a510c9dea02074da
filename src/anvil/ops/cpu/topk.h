// topk (graph op; ONNX TopK) as one pass per row with a heap: a hand-written kernel.
#pragma once

#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/ir/buffer.h"
#include "anvil/target/target.h"
#include "anvil/tir/stmt.h"

namespace anvil::ops {

// values/indices of the k elements along attrs axis that come first in the output order: larger
// (largest=1) or smaller values first, equal values by lower index (ONNX's rule), so the
// result is exact and always sorted. Per row (each position of the other axes, in parallel),
// a binary heap of k (value, index) pairs in local buffers, the pair that comes last at its
// root: the first k elements are heapified, each later one that beats the root replaces it and
// sifts down, then the heap is sorted in place (heapsort). O(n + m log k + k log k) for m
// replacements (few on typical data), O(n log k) at worst; any k <= n, constant or symbolic.
// On a contiguous row (the innermost axis) blocks of the target's vector width x 8 elements are
// first reduced to their best element with vector max/min, and a block is searched element by
// element only when that beats the root. Along a non-last axis with a constant inner extent and
// k <= 64, a vector of consecutive inner positions is carried together (one heap each): per
// axis index one contiguous vector load is compared with the roots, and only the positions
// whose element beats their root sift; the remaining inner positions go row by row (strided).
tir::Stmt topk_kernel(const graph::CallNode& call, const std::vector<ir::Buffer>& inputs,
                      const std::vector<ir::Buffer>& outputs, const Target& target);

}  // namespace anvil::ops
