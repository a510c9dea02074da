// The workgroup barrier of the tensor IR: an AttrStmt with key "workgroup_barrier" (value 0, no
// node) meaning "run the body, then every invocation of the workgroup waits until all have
// arrived, and their workgroup-memory writes are visible to each other" (CUDA's __syncthreads()
// after the body). TIR has no barrier intrinsic; an attribute around the statements before the
// barrier survives remove_no_op and simplify (the body does work) and needs no new node kind.
// The SPIR-V code generator emits OpControlBarrier(Workgroup, Workgroup,
// AcquireRelease | WorkgroupMemory) after the body. The CPU back ends (C, LLVM) and the TIR
// interpreter do not run thread-bound loops and reject it with NotImplementedError.
//
//   Stmt s = seq({fill_shared, workgroup_barrier_after(other_fill), read_shared});
// (Its own header, not tir::attr in stmt.h, so the change stays out of a header that most of the
// compiler includes.)
#pragma once

#include <string_view>

#include "anvil/tir/stmt.h"

namespace anvil::tir {

inline constexpr std::string_view kWorkgroupBarrierAttr = "workgroup_barrier";

// `body`, then a workgroup barrier.
inline Stmt workgroup_barrier_after(Stmt body) {
  return attr_stmt(std::string(kWorkgroupBarrierAttr), PrimExpr(), 0, std::move(body));
}

inline bool is_workgroup_barrier(const AttrStmtNode* op) { return op->key() == kWorkgroupBarrierAttr; }

}  // namespace anvil::tir
