// Matrix multiplication for CPUs: the compute definition (C = A·B, a sum over k) and Anvil's
// hand-written x86 schedule for it, laid out like a BLIS/GotoBLAS GEMM: B packed into nr-wide
// panels, A into mr-row panels, an mr x nr register tile of FMA accumulators, k blocks that keep
// the B slice of a tile in L1 and the packed B block in L2, row blocks in parallel.
//
//   MatmulX86 mm = matmul_x86(1024, 1024, 1024, Target::parse("llvm"));
//   Module m = pipeline::build(mm.schedule, {mm.A, mm.B, mm.C}, target, "matmul");
//   m["matmul"](a, b, c);                       // float32, row-major A[M,K], B[K,N], C[M,N]
//
// Sizes that do not divide the tiles are handled (guards on the edge tiles; B's last panel is
// padded by repeating its last column, A's last panel by repeating its last row; their products
// are never stored).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops {

// C[i, j] = sum_k A[i, k] * B[k, j]; A is [M, K], B is [K, N] (same dtype). ValueError for
// operands that are not matrices or whose inner dimensions differ (when both are constants).
te::Tensor matmul(const te::Tensor& A, const te::Tensor& B, const std::string& name = "C");

// Tile sizes of the x86 schedule.
struct MatmulX86Params {
  int vector_lanes = 16;  // float32 lanes of the widest vector the target has (16: AVX-512)
  int mr = 8;             // register tile rows (unrolled), the A panel height
  int nr = 32;            // register tile columns (nr / vector_lanes vectors), the B panel width
  int mc = 16;            // rows per parallel task (a multiple of mr)
  int num_threads = 0;    // -num-cores of the target, 0: the runtime's pool
  // k block: 0 = the register tile runs over all of K in a local accumulator tile (small K);
  // kc > 0 = the tile accumulates into C, kc steps of k at a time: the kc x nr slice of a B
  // panel stays in L1 across a task's tiles, and A is packed per (row block, k block).
  int kc = 0;
  // Columns per B block (a multiple of nr; kc > 0 only): the kc x nc block of B is packed once
  // per k block, by all threads, and stays in L2 while every row block passes over it.
  int nc = 0;
  std::string str() const;
};

// Defaults for a target of kind "llvm": the vector width from -mattr / -mcpu (the host's
// features for "llvm" and -mcpu=native), the register tile sized to fill the vector register
// file (AVX-512: 8 x 32 = 16 zmm accumulators; AVX2: 6 x 16 = 12 ymm; otherwise 4 x 4·lanes);
// K > 128: kc = 128, nc = N (rounded up to nr) up to 2048 columns (a 1 MiB B block), and mc
// the smallest multiple of mr >= 16 that leaves at most 64 row blocks (each a pool task, so a
// slowed-down thread's blocks are taken over: see codegen/parallel_tasks.h). K <= 128: one k block, mc <= 64
// with at least two row blocks per thread where M allows.
MatmulX86Params matmul_x86_params(int64_t M, int64_t N, int64_t K, const Target& target);

struct MatmulX86 {
  te::Tensor A, B;      // placeholders [M, K], [K, N]
  te::Tensor packed_B;  // [ceil(N / nr), K, nr]
  te::Tensor packed_A;  // [ceil(M / mr), K, mr] when kc > 0 (packed per row block and k block)
  te::Tensor C;         // [M, N]
  te::Schedule schedule;
  MatmulX86Params params;
};

// float32 matmul with the packed compute definition and its x86 schedule. Sizes must be
// positive.
MatmulX86 matmul_x86(int64_t M, int64_t N, int64_t K, const Target& target);
MatmulX86 matmul_x86(int64_t M, int64_t N, int64_t K, const MatmulX86Params& params);

// The same compute on given operands, for the strategy table (graph ops nn.dense / matmul):
// A is a [M, K] tensor whose M may be symbolic (the edge panels then clamp their rows to
// M - 1); B is read through b_at(k, j) (nn.dense: weight(j, k)) and only by the packing stage,
// so any layout costs one pass over B. N and K must be static. The schedule is not made:
// schedule_matmul_x86 does it on the schedule of the caller, finding the stages by name.
MatmulX86 matmul_x86_compute(const te::Tensor& A, const std::function<ir::PrimExpr(ir::PrimExpr, ir::PrimExpr)>& b_at,
                             int64_t N, int64_t K, const MatmulX86Params& params, const std::string& name = "C");
// The same compute with B already in panels: `panels` is [ceil(N / nr), K, nr] (nr =
// params.nr), e.g. a constant packed at compile time (graph nn.dense_pack_weight), so no
// stage packs B. schedule_matmul_x86 leaves a placeholder packed_B alone.
MatmulX86 matmul_x86_compute_on_panels(const te::Tensor& A, const te::Tensor& panels, int64_t N,
                                       const MatmulX86Params& params, const std::string& name = "C");

void schedule_matmul_x86(te::Schedule& s, const MatmulX86& mm);

// A matmul of a few static rows (1..8, a batch-1/8 dense layer) on B panels: a GEMV-like
// product that streams each K x nr panel once, contiguously, with all rows of A in registers
// broadcast against it: C[0:M, panel] += A[0:M, k] * panels[p, k, 0:nr] over all of K in a
// local accumulator tile; `group` adjacent panels per tile (more independent FMA chains when
// M is small) and the tiles in parallel. mm.C must be [M, N] from matmul_x86_compute_on_panels
// with params.kc == 0 (no A packing); group must divide the panel count.
void schedule_matmul_x86_few_rows(te::Schedule& s, const MatmulX86& mm, int group);

// Panels per tile for schedule_matmul_x86_few_rows: about 8 accumulator vectors for 1..4 rows
// (a divisor of `panels`), 1 panel beyond.
int few_rows_panel_group(int64_t rows, int64_t panels, int nr, int lanes);

}  // namespace anvil::ops
