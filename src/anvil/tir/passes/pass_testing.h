// Test helpers for the pass tests (not part of the library). Every pass test checks that what
// it gives a pass and what the pass returns are well formed (tir/verify.h): wrap both in
// verified(), e.g. `PrimFunc g = verified(simplify(verified(f)));`. expect_same_results runs a
// PrimFunc before and after a pass through the reference interpreter on the same random inputs,
// compares every buffer, and verifies both functions too.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "anvil/runtime/tensor.h"
#include "anvil/tir/interpreter.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/verify.h"

namespace anvil::tir::passes::testing {

// Fails the test (non-fatally) with the verifier's findings and the printed function unless `f`
// is well formed; returns `f`.
inline const PrimFunc& verified(const PrimFunc& f) {
  std::vector<std::string> errors = well_formed_errors(f);
  std::string lines;
  for (const std::string& e : errors) lines += "  " + e + "\n";
  EXPECT_TRUE(errors.empty()) << "not well formed:\n" << lines << to_string(f);
  return f;
}

// The same for a statement (a pass's Stmt overload): checked as the body of a function taking
// `params`, the buffers it uses without defining them.
inline const Stmt& verified(const Stmt& s, const std::vector<FuncParam>& params) {
  verified(make_prim_func("stmt", params, s));
  return s;
}

// Every param of before/after is a float32 buffer; shapes[k] is the shape of param k.
inline void expect_same_results(const PrimFunc& before, const PrimFunc& after,
                                const std::vector<std::vector<int64_t>>& shapes, uint32_t seed) {
  verified(before);
  verified(after);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<Tensor> a, b;
  for (const auto& shape : shapes) {
    Tensor x = Tensor::empty(shape, DataType::float32()), y = Tensor::empty(shape, DataType::float32());
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    auto* px = static_cast<float*>(x.data());
    for (int64_t k = 0; k < n; ++k) px[k] = dist(rng);
    if (n > 0) std::memcpy(y.data(), x.data(), static_cast<size_t>(n) * sizeof(float));
    a.push_back(std::move(x));
    b.push_back(std::move(y));
  }
  std::vector<InterpArg> args_a, args_b;
  for (auto& t : a) args_a.emplace_back(t.dl());
  for (auto& t : b) args_b.emplace_back(t.dl());
  run_prim_func(before, args_a);
  run_prim_func(after, args_b);
  for (size_t p = 0; p < shapes.size(); ++p) {
    int64_t n = 1;
    for (int64_t d : shapes[p]) n *= d;
    auto* pa = static_cast<float*>(a[p].data());
    auto* pb = static_cast<float*>(b[p].data());
    for (int64_t k = 0; k < n; ++k)
      ASSERT_EQ(pa[k], pb[k]) << "param " << p << " element " << k << " (seed " << seed << ")\nbefore:\n"
                              << to_string(before) << "after:\n" << to_string(after);
  }
}

}  // namespace anvil::tir::passes::testing
