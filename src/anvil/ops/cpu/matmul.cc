// Matmul compute definition and the hand-written x86 schedule (see matmul.h).
//
// Loop structure of matmul_x86 with k blocks (kc > 0, K > kc; mr x nr register tile):
//
//   C = 0                                             (parallel over row blocks)
//   for jc in [0, ceil(N / nc)):                      B block columns
//     for ko in [0, ceil(K / kc)):                    k block
//       parallel for p:  B_packed[p, k, 0:nr] = B[k, p*nr + 0:nr]   (kc x nc block, stays in L2)
//       parallel for ib in [0, ceil(M / mc)):         row block: one pool task each
//         A_packed[ip, k, 0:mr] = A[ip*mr + 0:mr, k]  (mc x kc, this task's rows)
//         for jo in [0, nc / nr):                     one B panel slice (kc x nr, stays in L1)
//           for it in [0, mc / mr):                   one register tile
//             for k in block:                         FMA: broadcast A_packed, nr-wide B row
//               unrolled ii < mr: C[i0 + ii, j0:j0+nr] += A_packed[.., k, ii] * B_packed[.., k, 0:nr]
//
// LLVM keeps the tile's C vectors in registers across the k loop (loads before it, stores after
// it). Packing A makes the tile's A reads contiguous (rows of A are K floats apart: at K = 1024
// the 8 rows of a tile fall in one L1 set). Row blocks are small (64 at most) so that a thread
// slowed by something else on the machine simply takes fewer of them.
//
// Without k blocks (K <= kc) the tile accumulates in a "local" cache_write stage over all of K
// and is copied to C after it; B is packed whole first, A is read in place.
#include "anvil/ops/cpu/matmul.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <thread>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/vector_width.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {

using ir::PrimExpr;
using ir::Var;

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

PrimExpr arith_ceil_div(const PrimExpr& a, int b) {
  if (auto c = ir::as_const_int(a)) return static_cast<int>(ceil_div(*c, b));
  return ir::floordiv(a + (b - 1), b);
}

// Index of element `lane` of panel `panel` (panels of `width`) into a dimension of `extent`:
// the last panel's lanes past the end repeat the last element (finite values; the products
// they feed are never stored).
PrimExpr panel_element(const Var& panel, int width, const Var& lane, int64_t extent) {
  PrimExpr index = panel * width + lane;
  return extent % width != 0 ? ir::min(index, static_cast<int>(extent - 1)) : index;
}

}  // namespace

te::Tensor matmul(const te::Tensor& A, const te::Tensor& B, const std::string& name) {
  if (A.ndim() != 2 || B.ndim() != 2)
    value_error("matmul: operands must be matrices, got ", A.name(), " with ", A.ndim(), " dimensions and ", B.name(),
                " with ", B.ndim());
  if (auto ka = ir::as_const_int(A.shape()[1]), kb = ir::as_const_int(B.shape()[0]); ka && kb && *ka != *kb)
    value_error("matmul: inner dimensions differ: ", A.name(), " is [., ", *ka, "] and ", B.name(), " is [", *kb,
                ", .]");
  te::IterVar k = te::reduce_axis(0, A.shape()[1], "k");
  return te::compute(
      {A.shape()[0], B.shape()[1]}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, name);
}

std::string MatmulX86Params::str() const {
  std::ostringstream out;
  out << "lanes=" << vector_lanes << " mr=" << mr << " nr=" << nr << " mc=" << mc << " kc=" << kc << " nc=" << nc
      << " threads=" << num_threads;
  return out.str();
}

MatmulX86Params matmul_x86_params(int64_t M, int64_t N, int64_t K, const Target& target) {
  MatmulX86Params p;
  p.vector_lanes = vector_lanes_of(target);
  if (p.vector_lanes == 16) {
    p.mr = 8, p.nr = 32;  // 16 zmm accumulators, 2 B vectors, broadcasts from memory
  } else if (p.vector_lanes == 8) {
    p.mr = 6, p.nr = 16;  // 12 ymm accumulators
  } else {
    p.mr = 4, p.nr = 4 * p.vector_lanes;
  }
  p.num_threads = static_cast<int>(target.get_int("num-cores").value_or(0));
  constexpr int64_t kKBlock = 128;  // kc x nr of B = 16 KiB at nr = 32: half of L1
  if (K > kKBlock) {
    // Measured on AVX-512 (bench/gemm_bench.cc, 1 and 2 threads, 512..2048): kc = 128 with
    // mc = 16 or 32 beat kc = 256 and mc = 64 by 5-15 %.
    p.kc = static_cast<int>(kKBlock);
    p.nc = static_cast<int>(std::min<int64_t>(ceil_div(N, p.nr), 2048 / p.nr) * p.nr);
    int64_t mc = std::max<int64_t>(16, ceil_div(M, 64));  // at most 64 row blocks
    mc = std::min<int64_t>(ceil_div(mc, p.mr) * p.mr, ceil_div(M, p.mr) * p.mr);
    p.mc = static_cast<int>(mc);
    return p;
  }
  // One k block: row blocks a multiple of mr, at most 64 rows (the A rows of a block stay in
  // L2), and at least two blocks per thread when M allows (threads: -num-cores, else the host's).
  int64_t threads = p.num_threads > 0 ? p.num_threads : std::max(1u, std::thread::hardware_concurrency());
  int64_t mc = std::max<int64_t>(p.mr, std::min<int64_t>(64, ceil_div(M, 2 * threads)) / p.mr * p.mr);
  p.mc = static_cast<int>(mc);
  p.kc = 0;
  p.nc = 0;
  return p;
}

MatmulX86 matmul_x86(int64_t M, int64_t N, int64_t K, const Target& target) {
  return matmul_x86(M, N, K, matmul_x86_params(M, N, K, target));
}

MatmulX86 matmul_x86(int64_t M, int64_t N, int64_t K, const MatmulX86Params& params) {
  if (M <= 0 || N <= 0 || K <= 0) value_error("matmul_x86: sizes must be positive, got M=", M, " N=", N, " K=", K);
  te::Tensor A = te::placeholder({static_cast<int>(M), static_cast<int>(K)}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({static_cast<int>(K), static_cast<int>(N)}, DataType::float32(), "B");
  MatmulX86 out = matmul_x86_compute(A, [&](PrimExpr k, PrimExpr j) { return B(k, j); }, N, K, params);
  out.B = B;
  out.schedule = te::create_schedule({out.C});
  schedule_matmul_x86(out.schedule, out);
  return out;
}

namespace {

void check_params(const MatmulX86Params& p, int64_t K) {
  if (p.mr <= 0 || p.nr <= 0 || p.vector_lanes <= 0 || p.nr % p.vector_lanes != 0 || p.mc <= 0 || p.mc % p.mr != 0)
    value_error("matmul_x86: bad tile sizes (", p.str(), "): nr must be a multiple of the lanes, mc of mr");
  if (p.kc > 0 && p.kc < K && (p.nc <= 0 || p.nc % p.nr != 0))
    value_error("matmul_x86: bad tile sizes (", p.str(), "): with k blocks nc must be a positive multiple of nr");
}

// C (and A_packed with k blocks) on the panels PB [ceil(N / nr), K, nr].
void product_on_panels(MatmulX86& out, const te::Tensor& A, const te::Tensor& PB, int64_t N, int64_t K,
                       const std::string& name) {
  const MatmulX86Params& p = out.params;
  const bool k_blocks = p.kc > 0 && p.kc < K;
  const PrimExpr M = A.shape()[0];
  const std::optional<int64_t> m_static = ir::as_const_int(M);
  const int ni = static_cast<int>(N), ki = static_cast<int>(K), nr = p.nr, mr = p.mr;
  te::IterVar k = te::reduce_axis(0, ki, "k");
  if (k_blocks) {
    // Panel ip holds rows [ip*mr, ip*mr + mr) column after column (clamped rows past M).
    out.packed_A = te::compute(
        {arith_ceil_div(M, mr), ki, mr},
        [&](Var ip, Var kk, Var ii) {
          PrimExpr row = m_static ? panel_element(ip, mr, ii, *m_static) : ir::min(ip * mr + ii, M - 1);
          return A(row, kk);
        },
        "A_packed");
    const te::Tensor& PA = out.packed_A;
    out.C = te::compute(
        {M, ni},
        [&](Var i, Var j) {
          return te::sum(PA(ir::floordiv(i, mr), k, ir::floormod(i, mr)) * PB(ir::floordiv(j, nr), k, ir::floormod(j, nr)),
                         {k});
        },
        name);
  } else {
    out.C = te::compute(
        {M, ni}, [&](Var i, Var j) { return te::sum(A(i, k) * PB(ir::floordiv(j, nr), k, ir::floormod(j, nr)), {k}); },
        name);
  }
}

}  // namespace

MatmulX86 matmul_x86_compute_on_panels(const te::Tensor& A, const te::Tensor& panels, int64_t N,
                                       const MatmulX86Params& params, const std::string& name) {
  if (panels.ndim() != 3) value_error("matmul_x86: B panels must be [ceil(N / nr), K, nr], got rank ", panels.ndim());
  auto np = ir::as_const_int(panels.shape()[0]), kk = ir::as_const_int(panels.shape()[1]),
       w = ir::as_const_int(panels.shape()[2]);
  if (!np || !kk || !w || *w != params.nr || N <= 0 || *np != ceil_div(N, params.nr))
    value_error("matmul_x86: B panels ", panels.name(), " do not hold N=", N, " columns in panels of nr=", params.nr);
  check_params(params, *kk);
  MatmulX86 out;
  out.params = params;
  out.A = A;
  out.packed_B = panels;
  product_on_panels(out, A, panels, N, *kk, name);
  return out;
}

MatmulX86 matmul_x86_compute(const te::Tensor& A, const std::function<PrimExpr(PrimExpr, PrimExpr)>& b_at, int64_t N,
                             int64_t K, const MatmulX86Params& params, const std::string& name) {
  const MatmulX86Params& p = params;
  if (N <= 0 || K <= 0) value_error("matmul_x86: sizes must be positive, got N=", N, " K=", K);
  check_params(p, K);
  const int ki = static_cast<int>(K), nr = p.nr;
  MatmulX86 out;
  out.params = p;
  out.A = A;
  // Panel jp holds columns [jp*nr, jp*nr + nr) row after row.
  out.packed_B = te::compute(
      {static_cast<int>(ceil_div(N, nr)), ki, nr},
      [&](Var jp, Var k, Var jj) { return b_at(k, panel_element(jp, nr, jj, N)); }, "B_packed");
  product_on_panels(out, A, out.packed_B, N, K, name);
  return out;
}

void schedule_matmul_x86(te::Schedule& s, const MatmulX86& mm) {
  const MatmulX86Params& p = mm.params;
  const te::Tensor& C = mm.C;
  const te::Tensor& PB = mm.packed_B;
  if (mm.packed_A.defined()) {
    const te::Tensor& PA = mm.packed_A;
    auto [ib, i_in] = s[C].split(C.axis(0), p.mc);
    auto [it, ii] = s[C].split(i_in, p.mr);
    auto [jc, j_in] = s[C].split(C.axis(1), p.nc);
    auto [jo, ji] = s[C].split(j_in, p.nr);
    auto [ko, kk] = s[C].split(C.reduce_axis(0), p.kc);
    s[C].reorder({jc, ko, ib, jo, it, kk, ii, ji});
    s[C].parallel(ib);
    s[C].unroll(ii);
    s[C].vectorize(ji);
    if (PB.is_compute()) {
      s[PB].compute_at(s[C], ko);  // one kc x nc block per k block, packed by all threads
      s[PB].parallel(PB.axis(0));
      s[PB].vectorize(PB.axis(2));
    }
    s[PA].compute_at(s[C], ib);  // each task packs its own rows
    s[PA].vectorize(PA.axis(2));
    return;
  }
  te::Tensor CL = s.cache_write(C, "local");
  // C: row blocks (parallel) > B panels > register tiles > copy-out of the tile.
  auto [ib, i_in] = s[C].split(C.axis(0), p.mc);
  auto [it, ii] = s[C].split(i_in, p.mr);
  auto [jo, ji] = s[C].split(C.axis(1), p.nr);
  s[C].reorder({ib, jo, it, ii, ji});
  s[C].parallel(ib);
  s[C].vectorize(ji);
  // The register tile: k outermost, then the unrolled rows, then the vector lanes.
  s[CL].compute_at(s[C], it);
  s[CL].reorder({CL.reduce_axis(0), CL.axis(0), CL.axis(1)});
  s[CL].unroll(CL.axis(0));
  s[CL].vectorize(CL.axis(1));
  // Packing: panels in parallel, nr lanes per store.
  if (!PB.is_compute()) return;
  s[PB].parallel(PB.axis(0));
  s[PB].vectorize(PB.axis(2));
}

int few_rows_panel_group(int64_t rows, int64_t panels, int nr, int lanes) {
  const int64_t per_panel = rows * std::max(1, nr / lanes);  // accumulator vectors of one panel
  int group = 1;
  for (int g : {4, 2})
    if (g * per_panel <= 8 && panels % g == 0) return g;
  return group;
}

void schedule_matmul_x86_few_rows(te::Schedule& s, const MatmulX86& mm, int group) {
  const MatmulX86Params& p = mm.params;
  const te::Tensor& C = mm.C;
  if (mm.packed_A.defined()) value_error("matmul_x86 few rows: the product must read A in place (kc = 0)");
  te::Tensor CL = s.cache_write(C, "local");
  // C: tiles of `group` panels (parallel) > panels > rows > the nr lanes (copy-out of the tile).
  auto [jt, j_in] = s[C].split(C.axis(1), group * p.nr);
  auto [jp, ji] = s[C].split(j_in, p.nr);
  s[C].reorder({jt, jp, C.axis(0), ji});
  s[C].parallel(jt);
  s[C].vectorize(ji);
  // The accumulator tile: k outermost, then the unrolled panels and rows, then the lanes; one
  // pass down each panel, every A element broadcast once per panel.
  s[CL].compute_at(s[C], jt);
  auto [cp, cl] = s[CL].split(CL.axis(1), p.nr);
  s[CL].reorder({CL.reduce_axis(0), cp, CL.axis(0), cl});
  s[CL].unroll(cp);
  s[CL].unroll(CL.axis(0));
  s[CL].vectorize(cl);
  if (mm.packed_B.is_compute()) {
    s[mm.packed_B].parallel(mm.packed_B.axis(0));
    s[mm.packed_B].vectorize(mm.packed_B.axis(2));
  }
}

}  // namespace anvil::ops
