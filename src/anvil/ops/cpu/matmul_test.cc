// Matmul: the compute definition under a default schedule and the x86 schedule, built for the
// llvm target (JIT) through pipeline::build and compared with a naive double reference on fresh
// random inputs (fixed, printed seed). Tolerance: |c - ref| <= 1e-4 * (1 + sum_k |a_ik * b_kj|),
// well above float32 rounding of K-term sums for the K used here (<= 300).
#include "anvil/ops/cpu/matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>

#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"

namespace anvil::ops {
namespace {

constexpr uint32_t kSeed = 20261130;

float* f32(Tensor& t) { return static_cast<float*>(t.data()); }

Tensor random_matrix(int64_t rows, int64_t cols, std::mt19937& rng) {
  std::vector<int64_t> shape = {rows, cols};
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < rows * cols; ++i) f32(t)[i] = dist(rng);
  return t;
}

Tensor filled_matrix(int64_t rows, int64_t cols, float value) {
  std::vector<int64_t> shape = {rows, cols};
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  for (int64_t i = 0; i < rows * cols; ++i) f32(t)[i] = value;
  return t;
}

// Runs C = A·B through `m[name]` and checks every element against the double reference.
void check_matmul(Module& m, const std::string& name, int64_t M, int64_t N, int64_t K, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << name << " M=" << M << " N=" << N << " K=" << K << " seed=" << seed);
  std::mt19937 rng(seed);
  Tensor a = random_matrix(M, K, rng), b = random_matrix(K, N, rng);
  Tensor c = filled_matrix(M, N, NAN);  // every element must be written
  m[name](a, b, c);
  int bad = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        double p = double(f32(a)[i * K + k]) * f32(b)[k * N + j];
        ref += p;
        mag += std::fabs(p);
      }
      double got = f32(c)[i * N + j];
      if (!(std::fabs(got - ref) <= 1e-4 * (1 + mag)) && ++bad <= 5)
        ADD_FAILURE() << "C[" << i << ", " << j << "] = " << got << ", want " << ref;
    }
  }
  EXPECT_EQ(bad, 0) << "mismatching elements";
}

class Matmul : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    std::printf("matmul seed %u\n", kSeed);
  }
};

TEST_F(Matmul, ComputeDefinitionWithDefaultScheduleMatchesReference) {
  te::Tensor A = te::placeholder({13, 7}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({7, 5}, DataType::float32(), "B");
  te::Tensor C = matmul(A, B);
  te::Schedule s = te::create_schedule({C});
  Module m = pipeline::build(s, {A, B, C}, Target::parse("llvm"), "matmul_default");
  check_matmul(m, "matmul_default", 13, 5, 7, kSeed);
}

TEST_F(Matmul, ComputeDefinitionRejectsMismatchedShapes) {
  te::Tensor A = te::placeholder({4, 3}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({5, 2}, DataType::float32(), "B");
  EXPECT_THROW(matmul(A, B), Error);
  te::Tensor V = te::placeholder({4}, DataType::float32(), "V");
  EXPECT_THROW(matmul(V, B), Error);
}

TEST_F(Matmul, X86ScheduleOnSizesThatDivideTheTiles) {
  Target target = Target::parse("llvm -num-cores=2");
  uint32_t seed = kSeed;
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{64, 64, 64}, {128, 96, 33}, {256, 256, 256}}) {
    MatmulX86 mm = matmul_x86(M, N, K, target);
    Module m = pipeline::build(mm.schedule, {mm.A, mm.B, mm.C}, target, "matmul");
    check_matmul(m, "matmul", M, N, K, ++seed);
  }
}

TEST_F(Matmul, X86ScheduleOnSizesThatDoNotDivideTheTiles) {
  Target target = Target::parse("llvm -num-cores=2");
  uint32_t seed = kSeed + 100;
  for (auto [M, N, K] :
       {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 45, 19}, {37, 33, 5}, {100, 70, 300}, {9, 31, 2}}) {
    MatmulX86 mm = matmul_x86(M, N, K, target);
    Module m = pipeline::build(mm.schedule, {mm.A, mm.B, mm.C}, target, "matmul");
    check_matmul(m, "matmul", M, N, K, ++seed);
  }
}

TEST_F(Matmul, X86ScheduleWithNarrowerVectors) {
  // AVX2-sized tiles (6 x 16, 8 lanes) and a 4-lane fallback, on the host's instruction set.
  uint32_t seed = kSeed + 200;
  for (MatmulX86Params p : {MatmulX86Params{8, 6, 16, 12, 2}, MatmulX86Params{4, 4, 16, 8, 1}}) {
    SCOPED_TRACE(p.str());
    for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{48, 64, 17}, {29, 41, 23}}) {
      MatmulX86 mm = matmul_x86(M, N, K, p);
      Module m = pipeline::build(mm.schedule, {mm.A, mm.B, mm.C}, Target::parse("llvm"), "matmul");
      check_matmul(m, "matmul", M, N, K, ++seed);
    }
  }
}

TEST_F(Matmul, X86ScheduleWithKBlocksThatDoAndDoNotDivideK) {
  // C accumulates in place over k blocks (the last one guarded when kc does not divide K), A and
  // B packed per block; B blocks of nc columns that do and do not divide N, row blocks that do
  // and do not divide M. The host's tile (8 x 32 with AVX-512, 6 x 16 with AVX2) sets the units:
  // nc is a multiple of both nr, mc a number of mr-row panels.
  uint32_t seed = kSeed + 300;
  for (auto [kc, nc, mc_panels] : {std::tuple<int, int, int>{64, 64, 2}, {100, 32, 3}, {64, 96, 1}}) {
    MatmulX86Params p = matmul_x86_params(64, 64, 64, Target::parse("llvm -num-cores=2"));
    p.kc = kc, p.nc = nc, p.mc = mc_panels * p.mr;
    SCOPED_TRACE(p.str());
    for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{64, 64, 256}, {37, 45, 300}, {8, 32, 65}, {3, 100, 129}}) {
      MatmulX86 mm = matmul_x86(M, N, K, p);
      Module m = pipeline::build(mm.schedule, {mm.A, mm.B, mm.C}, Target::parse("llvm -num-cores=2"), "matmul");
      check_matmul(m, "matmul", M, N, K, ++seed);
    }
  }
  MatmulX86Params p = matmul_x86_params(64, 64, 256, Target::parse("llvm"));
  p.nc = 40;  // not a multiple of nr
  EXPECT_THROW(matmul_x86(64, 64, 256, p), Error);
}

TEST_F(Matmul, X86ParamsFollowTheTargetVectorWidth) {
  EXPECT_EQ(matmul_x86_params(1024, 1024, 1024, Target::parse("llvm -mcpu=x86-64-v4")).vector_lanes, 16);
  EXPECT_EQ(matmul_x86_params(1024, 1024, 1024, Target::parse("llvm -mcpu=x86-64-v4 -mattr=-avx512f")).vector_lanes, 8);
  EXPECT_EQ(matmul_x86_params(1024, 1024, 1024, Target::parse("llvm -mcpu=haswell")).vector_lanes, 8);
  MatmulX86Params p = matmul_x86_params(1024, 1024, 1024, Target::parse("llvm -mcpu=x86-64-v4 -num-cores=2"));
  EXPECT_EQ(p.mr, 8);
  EXPECT_EQ(p.nr, 32);
  EXPECT_EQ(p.num_threads, 2);
  EXPECT_EQ(p.kc, 128);
  EXPECT_EQ(p.nc, 1024);
  EXPECT_EQ(p.mc, 16);  // 64 row blocks
  Target avx512 = Target::parse("llvm -mcpu=x86-64-v4 -num-cores=4");
  MatmulX86Params big = matmul_x86_params(4096, 3000, 4096, avx512);
  EXPECT_EQ(big.mc, 64);    // 4096 rows in 64 blocks
  EXPECT_EQ(big.nc, 2048);  // a 128 x 2048 block of B: 1 MiB
  EXPECT_EQ(matmul_x86_params(2048, 100, 2048, avx512).nc, 128);  // N rounded up to nr
  EXPECT_EQ(matmul_x86_params(5, 64, 256, avx512).mc, 8);         // M rounded up to mr
  MatmulX86Params avx2 = matmul_x86_params(1024, 1024, 1024, Target::parse("llvm -mcpu=haswell"));
  EXPECT_EQ(avx2.mc % avx2.mr, 0);
  EXPECT_GE(avx2.mc, 16);
  // K <= 128: one k block, row blocks of at most 64 with two per thread where M allows.
  EXPECT_EQ(matmul_x86_params(256, 256, 128, avx512).kc, 0);
  EXPECT_EQ(matmul_x86_params(256, 256, 128, avx512).mc, 32);
  EXPECT_EQ(matmul_x86_params(4, 256, 64, avx512).mc, 8);
  EXPECT_THROW(matmul_x86(0, 4, 4, p), Error);
}

// The k loop of the register tile is one basic block of FMAs (AVX-512: 8 rows x 2 zmm vectors
// = 16; AVX2: 6 rows x 2 ymm vectors = 12) fed by broadcasts of A from memory, with the
// accumulators in registers: no spills in that block (the only stack accesses allowed are the
// broadcasts themselves, which read the packed A block when it lives on the stack). Only the
// assembly is inspected, so both instruction sets are checked on any x86 host.
TEST_F(Matmul, X86InnerLoopIsVectorFmasWithoutSpills) {
  struct Isa {
    const char* target;
    int fmas;
    const char* other_width;  // registers of the other vector width must not appear
  };
  for (Isa isa : {Isa{"llvm -mcpu=x86-64-v4", 16, "%ymm"}, Isa{"llvm -mcpu=haswell", 12, "%zmm"}}) {
    Target target = Target::parse(isa.target);
    for (int64_t size : {256, 1024}) {  // the local tile (K <= kc) and the k-blocked tile
      SCOPED_TRACE(::testing::Message() << isa.target << ", size " << size);
      MatmulX86 mm = matmul_x86(size, size, size, target);
      Module m = pipeline::build(mm.schedule, {mm.A, mm.B, mm.C}, target, "matmul");
      std::string asm_text = codegen::llvm_module_source(m, "asm");
      if (std::getenv("ANVIL_MATMUL_ASM")) std::cerr << asm_text << std::endl;
      // A basic block starts at a label ".LBB..." and ends at the first jump or the next label.
      bool found = false;
      size_t pos = 0;
      while ((pos = asm_text.find("\n.LBB", pos)) != std::string::npos) {
        size_t end = asm_text.find("\n.LBB", pos + 1);
        std::string block = asm_text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        block = block.substr(0, block.find("\n\tj"));
        pos += 1;
        int fmas = 0;
        for (size_t f = 0; (f = block.find("vfmadd231ps", f)) != std::string::npos; ++f) ++fmas;
        if (fmas < isa.fmas) continue;
        found = true;
        EXPECT_EQ(fmas, isa.fmas) << block;
        std::istringstream lines(block);
        for (std::string line; std::getline(lines, line);) {
          if (line.find("%rsp") != std::string::npos && line.find("vbroadcastss") == std::string::npos)
            ADD_FAILURE() << "stack access other than an A broadcast in the FMA loop:\n" << block;
        }
        EXPECT_NE(block.find("vbroadcastss"), std::string::npos) << block;
        EXPECT_EQ(block.find(isa.other_width), std::string::npos) << block;
      }
      EXPECT_TRUE(found) << "no basic block with " << isa.fmas << " FMAs";
    }
  }
}

// B given as panels [ceil(N / nr), K, nr] (a weight packed at compile time): the few-rows (GEMV-
// like) schedule for 1..8 rows and the GEMM with and without k blocks, on sizes that do and do
// not divide the panels, the panel groups and the k blocks; B is packed here on the host (the
// last panel's columns past N repeat column N - 1, as nn.dense_pack_weight does).
TEST_F(Matmul, X86ScheduleOnPrepackedPanels) {
  Target target = Target::parse("llvm -num-cores=2");
  uint32_t seed = kSeed + 400;
  auto run = [&](int64_t M, int64_t N, int64_t K, MatmulX86Params p, bool few) {
    SCOPED_TRACE(::testing::Message() << p.str() << (few ? " few rows" : " gemm"));
    const int64_t panels = (N + p.nr - 1) / p.nr;
    te::Tensor A = te::placeholder({static_cast<int>(M), static_cast<int>(K)}, DataType::float32(), "A");
    te::Tensor PB = te::placeholder({static_cast<int>(panels), static_cast<int>(K), p.nr}, DataType::float32(), "PB");
    MatmulX86 mm = matmul_x86_compute_on_panels(A, PB, N, p, "C");
    te::Schedule s = te::create_schedule({mm.C});
    if (few)
      schedule_matmul_x86_few_rows(s, mm, few_rows_panel_group(M, panels, p.nr, p.vector_lanes));
    else
      schedule_matmul_x86(s, mm);
    Module m = pipeline::build(s, {A, PB, mm.C}, target, "on_panels");
    std::mt19937 rng(++seed);
    Tensor a = random_matrix(M, K, rng), b = random_matrix(K, N, rng);
    std::vector<int64_t> pshape = {panels, K, p.nr};
    Tensor pb = Tensor::empty(std::span<const int64_t>(pshape), DataType::float32());
    for (int64_t jp = 0; jp < panels; ++jp)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t l = 0; l < p.nr; ++l) f32(pb)[(jp * K + k) * p.nr + l] = f32(b)[k * N + std::min(jp * p.nr + l, N - 1)];
    Tensor c = filled_matrix(M, N, NAN);
    m["on_panels"](a, pb, c);
    int bad = 0;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          double prod = double(f32(a)[i * K + k]) * f32(b)[k * N + j];
          ref += prod, mag += std::fabs(prod);
        }
        double got = f32(c)[i * N + j];
        if (!(std::fabs(got - ref) <= 1e-4 * (1 + mag)) && ++bad <= 5)
          ADD_FAILURE() << "M=" << M << " N=" << N << " K=" << K << ": C[" << i << ", " << j << "] = " << got << ", want " << ref;
      }
    EXPECT_EQ(bad, 0);
  };
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 128, 64}, {1, 33, 7}, {2, 96, 300}, {3, 100, 129},
                         {4, 256, 40}, {7, 45, 19}, {8, 64, 256}, {8, 1, 5}}) {
    MatmulX86Params p = matmul_x86_params(M, N, K, target);
    p.kc = 0, p.nc = 0, p.mr = p.mc = static_cast<int>(M);
    run(M, N, K, p, true);
    MatmulX86Params narrow{4, 4, 16, 4, 1};  // 4-lane panels of 16 columns
    narrow.mr = narrow.mc = static_cast<int>(M);
    run(M, N, K, narrow, true);
  }
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{64, 64, 256}, {37, 45, 300}, {9, 31, 2}, {100, 70, 129}})
    run(M, N, K, matmul_x86_params(M, N, K, target), false);
  // Panels that do not match the params' nr are rejected.
  te::Tensor A = te::placeholder({4, 8}, DataType::float32(), "A");
  te::Tensor PB = te::placeholder({3, 8, 16}, DataType::float32(), "PB");
  MatmulX86Params p = matmul_x86_params(4, 40, 8, target);
  p.nr = 32;
  EXPECT_THROW(matmul_x86_compute_on_panels(A, PB, 40, p), Error);
}

}  // namespace
}  // namespace anvil::ops
