// Test helpers for te/ tests: float32 host tensors behind a DLTensor, filled from a fixed seed,
// and running a lowered PrimFunc (checked well formed) through the reference TIR interpreter.
#pragma once

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "anvil/te/lower.h"
#include "anvil/tir/interpreter.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/verify.h"

namespace anvil::te::testing {

// A compact float32 host tensor.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  DLTensor dl{};

  explicit HostTensor(std::vector<int64_t> s, float fill = 0.0f) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(static_cast<size_t>(n), fill);
    dl.data = data.data();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = DLDataType{kDLFloat, 32, 1};
    dl.shape = shape.data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
  }
  HostTensor(const HostTensor&) = delete;
  DLTensor* ptr() { return &dl; }
  size_t size() const { return data.size(); }
  float& operator[](size_t i) { return data[i]; }
  float operator[](size_t i) const { return data[i]; }
  // Row-major element access.
  float& at(std::initializer_list<int64_t> idx) {
    int64_t flat = 0, d = 0;
    for (int64_t i : idx) flat = flat * shape[static_cast<size_t>(d++)] + i;
    return data[static_cast<size_t>(flat)];
  }
};

// Fixed seed, printed so a failure can be reproduced.
inline constexpr uint32_t kSeed = 20261130;

inline void fill_random(HostTensor& t, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& x : t.data) x = dist(rng);
}

// |got - want| <= atol + rtol * |want| everywhere (float32 results against a double reference).
inline void expect_close(const HostTensor& got, const std::vector<double>& want, double rtol = 1e-5,
                         double atol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got[i], w = want[i];
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      if (++bad <= 5) ADD_FAILURE() << "element " << i << ": got " << g << ", want " << w << " (seed " << kSeed << ")";
    }
  }
  EXPECT_EQ(bad, 0) << "mismatching elements (seed " << kSeed << ")";
}

// Checks the function is well formed (tir/verify.h), then runs it in the interpreter.
inline void run(const tir::PrimFunc& f, std::initializer_list<tir::InterpArg> args) {
  std::vector<std::string> problems = tir::well_formed_errors(f);
  for (const std::string& p : problems) ADD_FAILURE() << "ill-formed lowering: " << p << "\n" << tir::to_string(f);
  tir::run_prim_func(f, args);
}

}  // namespace anvil::te::testing
