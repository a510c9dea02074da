// Each schedule primitive, on shapes that the factors divide and shapes they do not; results
// checked by running the lowered function in the reference TIR interpreter against a naive
// double reference (seed kSeed, tolerance 1e-5 relative + 1e-5 absolute).
#include <gtest/gtest.h>

#include <functional>

#include "anvil/te/reduction.h"
#include "anvil/te/te_test_util.h"

namespace anvil::te {
namespace {

using namespace anvil::te::testing;

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// B = A * 2 (intermediate), C = B + 1 on an (n, m) grid; `sched` schedules it; returns the text.
std::string run_two_stage(int n, int m, const std::function<void(Schedule&, Tensor&, Tensor&)>& sched) {
  Tensor A = placeholder({n, m}, DataType::float32(), "A");
  Tensor B = compute(
      {n, m}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
  Tensor C = compute(
      {n, m}, [&](Var i, Var j) { return B(i, j) + 1.0f; }, "C");
  Schedule s = create_schedule({C});
  sched(s, B, C);
  tir::PrimFunc f = lower(s, {A, C}, "two_stage");
  HostTensor a({n, m}), c({n, m}, -7.0f);
  fill_random(a, kSeed);
  run(f, {a.ptr(), c.ptr()});
  std::vector<double> want(a.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = double(a[i]) * 2.0 + 1.0;
  expect_close(c, want);
  return tir::to_string(f);
}

// C = A x B (m x k times k x n), scheduled by `sched`.
std::string run_matmul(int m, int n, int kk,
                       const std::function<void(Schedule&, Tensor&, Tensor&, Tensor&, IterVar&)>& sched) {
  Tensor A = placeholder({m, kk}, DataType::float32(), "A");
  Tensor B = placeholder({kk, n}, DataType::float32(), "B");
  IterVar k = reduce_axis(0, kk, "k");
  Tensor C = compute(
      {m, n}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  sched(s, A, B, C, k);
  tir::PrimFunc f = lower(s, {A, B, C}, "matmul");
  HostTensor a({m, kk}), b({kk, n}), c({m, n}, 99.0f);
  fill_random(a, kSeed);
  fill_random(b, kSeed + 1);
  run(f, {a.ptr(), b.ptr(), c.ptr()});
  std::vector<double> want(static_cast<size_t>(m * n), 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < kk; ++p) want[static_cast<size_t>(i * n + j)] += double(a.at({i, p})) * b.at({p, j});
  expect_close(c, want);
  return tir::to_string(f);
}

TEST(TePrimitives, SplitByFactorGuardsOnlyWhenTheFactorDoesNotDivide) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) { s[C].split(C.axis(1), 4); };
  std::string even = run_two_stage(3, 8, sched);
  EXPECT_TRUE(has(even, "for j.outer in range(0, 2):")) << even;
  EXPECT_FALSE(has(even, "if ")) << even;
  std::string odd = run_two_stage(3, 10, sched);
  EXPECT_TRUE(has(odd, "for j.outer in range(0, 3):")) << odd;
  EXPECT_TRUE(has(odd, "if j.outer * 4 + j.inner < 10:")) << odd;
}

TEST(TePrimitives, SplitByNparts) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    s[C].split_nparts(C.axis(0), 3);
  };
  std::string even = run_two_stage(9, 2, sched);
  EXPECT_TRUE(has(even, "for i.inner in range(0, 3):")) << even;
  std::string odd = run_two_stage(7, 2, sched);
  EXPECT_TRUE(has(odd, "if ")) << odd;
}

TEST(TePrimitives, FuseThenSplit) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    IterVar f = s[C].fuse(C.axis(0), C.axis(1));
    s[C].split(f, 8);
  };
  run_two_stage(4, 6, sched);  // 24 = 3 * 8
  std::string odd = run_two_stage(5, 3, sched);
  EXPECT_TRUE(has(odd, "i.j.fused.outer")) << odd;
}

TEST(TePrimitives, ReorderSwapsTheLoops) {
  std::string text = run_two_stage(3, 5, [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    s[C].reorder(C.axis(1), C.axis(0));
  });
  EXPECT_LT(text.rfind("in range(0, 5):"), text.rfind("in range(0, 3):")) << text;  // C's loops come last
}

TEST(TePrimitives, TileOnDividingAndNonDividingShapes) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    s[C].tile(C.axis(0), C.axis(1), 4, 3);
  };
  std::string even = run_two_stage(8, 9, sched);
  EXPECT_FALSE(has(even, "if ")) << even;
  std::string odd = run_two_stage(10, 7, sched);
  EXPECT_TRUE(has(odd, "if ")) << odd;
  EXPECT_LT(odd.find("j.outer in"), odd.find("i.inner in")) << odd;
}

TEST(TePrimitives, VectorizeParallelUnrollSetTheLoopKinds) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    auto [jo, ji] = s[C].split(C.axis(1), 4);
    s[C].vectorize(ji);
    s[C].parallel(C.axis(0));
    s[C].unroll(jo);
  };
  std::string even = run_two_stage(3, 8, sched);
  EXPECT_TRUE(has(even, "for j.inner in range(0, 4) vectorized:")) << even;
  EXPECT_TRUE(has(even, "in range(0, 3) parallel:")) << even;
  EXPECT_TRUE(has(even, "for j.outer in range(0, 2) unrolled:")) << even;
  run_two_stage(3, 7, sched);
}

TEST(TePrimitives, BindToGpuThreads) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    IterVar f = s[C].fuse(C.axis(0), C.axis(1));
    auto [bx, tx] = s[C].split(f, 32);
    s[C].bind(bx, "blockIdx.x");
    s[C].bind(tx, "threadIdx.x");
    s[B].compute_inline();
  };
  std::string text = run_two_stage(5, 13, sched);
  EXPECT_TRUE(has(text, "thread(\"blockIdx.x\")")) << text;
  EXPECT_TRUE(has(text, "thread(\"threadIdx.x\")")) << text;
}

TEST(TePrimitives, PragmaBecomesALoopAnnotation) {
  std::string text = run_two_stage(2, 3, [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    s[C].pragma(C.axis(0), "unroll_explicit", 0);
  });
  EXPECT_TRUE(has(text, "pragma_unroll_explicit")) << text;
}

TEST(TePrimitives, ComputeAtRealisesTheRegionInsideTheLoop) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    auto [jo, ji] = s[C].split(C.axis(1), 4);
    s[B].compute_at(s[C], jo);
  };
  std::string even = run_two_stage(3, 8, sched);
  EXPECT_TRUE(has(even, "allocate(float32, [1, 4]")) << even;
  std::string odd = run_two_stage(3, 10, sched);  // the last block is clamped to 2 columns
  EXPECT_TRUE(has(odd, "allocate(")) << odd;
}

TEST(TePrimitives, ComputeAtInnermostAndRoot) {
  run_two_stage(4, 5, [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    s[B].compute_at(s[C], C.axis(1));
  });
  std::string text = run_two_stage(
      4, 5, [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) { s[B].compute_root(); });
  EXPECT_TRUE(has(text, "allocate(float32, [4, 5]")) << text;
}

TEST(TePrimitives, ComputeInlineSubstitutesTheBody) {
  std::string text = run_two_stage(
      3, 4, [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) { s[B].compute_inline(); });
  EXPECT_FALSE(has(text, "allocate")) << text;
  EXPECT_TRUE(has(text, "C[i, j] = A[i, j] * 2.0f + 1.0f")) << text;
}

TEST(TePrimitives, StorageAlignPadsTheRowStride) {
  std::string text = run_two_stage(4, 6, [](Schedule& s, [[maybe_unused]] Tensor& B, [[maybe_unused]] Tensor& C) {
    s[B].storage_align(B.axis(0), 8, 1);
  });
  EXPECT_TRUE(has(text, "allocate(float32, [36]")) << text;  // 4 rows of stride 9
  EXPECT_TRUE(has(text, "buffer_dim_align")) << text;
}

TEST(TePrimitives, SplitReductionAxisWithAndWithoutRemainder) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& A, [[maybe_unused]] Tensor& B, Tensor& C, IterVar& k) {
    auto [ko, ki] = s[C].split(k, 4);
    s[C].reorder(ko, C.axis(0), C.axis(1), ki);
  };
  std::string even = run_matmul(3, 5, 8, sched);
  EXPECT_TRUE(has(even, "i.init")) << even;  // init nest over the loops inside the reduction
  std::string odd = run_matmul(3, 5, 7, sched);
  EXPECT_TRUE(has(odd, "if k.outer * 4 + k.inner < 7:")) << odd;
}

TEST(TePrimitives, TiledMatmulWithNonDividingTiles) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& A, [[maybe_unused]] Tensor& B, Tensor& C, IterVar& k) {
    auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 4, 4);
    auto [ko, ki] = s[C].split(k, 3);
    s[C].reorder(io, jo, ko, ii, ki, ji);
    s[C].vectorize(ji);
    s[C].parallel(io);
  };
  run_matmul(8, 8, 9, sched);
  run_matmul(10, 7, 5, sched);
}

TEST(TePrimitives, CacheReadIntoSharedAtTheReductionLoop) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& A, [[maybe_unused]] Tensor& B, Tensor& C, IterVar& k) {
    Tensor AS = s.cache_read(A, "shared", {C});
    Tensor BL = s.cache_read(B, "local", {C});
    auto [ko, ki] = s[C].split(k, 4);
    s[AS].compute_at(s[C], ko);
    s[BL].compute_at(s[C], ki);
    s[AS].storage_align(AS.axis(0), 4, 1);
  };
  std::string text = run_matmul(6, 5, 8, sched);
  EXPECT_TRUE(has(text, "\"shared\"")) << text;
  EXPECT_TRUE(has(text, "\"local\"")) << text;
  run_matmul(6, 5, 10, sched);
}

TEST(TePrimitives, CacheWriteAccumulatesLocallyThenCopies) {
  auto sched = [](Schedule& s, [[maybe_unused]] Tensor& A, [[maybe_unused]] Tensor& B, Tensor& C, IterVar& k) {
    Tensor CL = s.cache_write(C, "local");
    auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 2, 4);
    s[CL].compute_at(s[C], jo);
    s[CL].reorder(k, CL.axis(0), CL.axis(1));
    s[CL].vectorize(CL.axis(1));
  };
  std::string text = run_matmul(4, 8, 6, sched);
  EXPECT_TRUE(has(text, "allocate(float32, [2, 4], \"local\")")) << text;
  run_matmul(5, 6, 3, sched);
}

TEST(TePrimitives, ComputeAtCoversAStencilHalo) {
  // C(i) = B(i) + B(i + 1) + B(i + 2): each block of 4 outputs needs 6 values of B.
  for (int n : {14, 11, 3}) {
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    Tensor A = placeholder({n}, DataType::float32(), "A");
    Tensor B = compute(
        {n}, [&](Var i) { return A(i) * 2.0f; }, "B");
    Tensor C = compute(
        {n - 2}, [&](Var i) { return B(i) + B(i + 1) + B(i + 2); }, "C");
    Schedule s = create_schedule({C});
    auto [io, ii] = s[C].split(C.axis(0), 4);
    s[B].compute_at(s[C], io);
    tir::PrimFunc f = lower(s, {A, C}, "stencil");
    std::string text = tir::to_string(f);
    if (n == 14) {
      EXPECT_TRUE(has(text, "allocate(float32, [6]")) << text;
    }
    HostTensor a({n}), c({n - 2});
    fill_random(a, kSeed);
    run(f, {a.ptr(), c.ptr()});
    std::vector<double> want(static_cast<size_t>(n - 2));
    for (int i = 0; i < n - 2; ++i) want[i] = 2.0 * (double(a[i]) + a[i + 1] + a[i + 2]);
    expect_close(c, want);
  }
}

}  // namespace
}  // namespace anvil::te
