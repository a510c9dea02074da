// Test kernels of the SPIR-V back end written with the TE API and GPU schedules (split + bind):
// shared by the compile tests (codegen_spirv_kernels_test.cc) and the device tests
// (codegen_spirv_run_test.cc).
#pragma once

#include <string>

#include "anvil/ir/expr_ops.h"
#include "anvil/pipeline/build.h"
#include "anvil/te/reduction.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::codegen::spirv::testing {

// C[i] = A[i] * alpha + B[i] over a symbolic n, 64 threads per workgroup.
inline tir::PrimFunc te_axpy(const std::string& name = "axpy") {
  ir::Var n = ir::size_var("n");
  ir::Var alpha("alpha", ir::DataType::float32());
  te::Tensor A = te::placeholder({n}, ir::DataType::float32(), "A");
  te::Tensor B = te::placeholder({n}, ir::DataType::float32(), "B");
  te::Tensor C = te::compute({n}, [&](ir::Var i) { return A(i) * alpha + B(i); }, "C");
  te::Schedule s = te::create_schedule({C});
  auto [bx, tx] = s[C].split(C.axis(0), 64);
  s[C].bind(bx, "blockIdx.x");
  s[C].bind(tx, "threadIdx.x");
  return pipeline::lower(s, {A, alpha, B, C}, name);
}

// C[M, N] = A[M, K] @ B[K, N], 8 x 8 threads per workgroup, a 2-d grid.
inline tir::PrimFunc te_matmul(int M, int N, int K, const std::string& name = "matmul") {
  te::Tensor A = te::placeholder({M, K}, ir::DataType::float32(), "A");
  te::Tensor B = te::placeholder({K, N}, ir::DataType::float32(), "B");
  te::IterVar k = te::reduce_axis(0, K, "k");
  te::Tensor C = te::compute({M, N}, [&](ir::Var i, ir::Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  te::Schedule s = te::create_schedule({C});
  auto [io, ii] = s[C].split(C.axis(0), 8);
  auto [jo, ji] = s[C].split(C.axis(1), 8);
  s[C].reorder({io, jo, ii, ji, k});
  s[C].bind(io, "blockIdx.y");
  s[C].bind(jo, "blockIdx.x");
  s[C].bind(ii, "threadIdx.y");
  s[C].bind(ji, "threadIdx.x");
  return pipeline::lower(s, {A, B, C}, name);
}

}  // namespace anvil::codegen::spirv::testing
