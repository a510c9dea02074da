// Test support for the fused-group kernel tests (lower_fused_anchor_test.cc,
// lower_fused_reduce_test.cc): a group written as graph text (@g), lowered by ops::lower_fused
// and built for llvm, run on float32 inputs, compared with a double reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "anvil/graph/parser.h"
#include "anvil/ops/lower_call.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"

namespace anvil::ops::fused_testing {

using Shape = std::vector<int64_t>;
inline const DataType f32 = DataType::float32();

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct Lowered {
  Module module;
  std::string implementation;
};

// The module's @g as a call_fused of its own parameters (static shapes), lowered and built.
inline Lowered lower_group(const std::string& text) {
  register_runtime_functions();
  graph::IRModule m = graph::parse_module(text);
  const graph::Function& g = m.function("g");
  std::vector<graph::Expr> args(g.params().begin(), g.params().end());
  graph::Expr call = graph::Call::make(graph::kCallFused, args, {{"func", graph::AttrValue("g")}}, g.result().type());
  LoweredCall lc = lower_fused(g, *call.as<graph::CallNode>(), Target::parse("llvm"), "kernel");
  EXPECT_TRUE(lc.shape_vars.empty());
  return {pipeline::build(std::vector<tir::PrimFunc>{lc.func}, Target::parse("llvm")), lc.implementation};
}

// Uniform [-1, 1).
inline std::vector<float> random(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(size_t(numel(s)));
  for (float& x : v) x = d(rng);
  return v;
}

// Runs the kernel on float32 inputs; the output (float32 or int64) comes back as doubles. The
// output starts as all-ones bytes (NaN / -1), so an element the kernel does not write shows.
inline std::vector<double> run(Lowered& k, const std::vector<std::pair<Shape, std::vector<float>>>& ins,
                               const Shape& out, DataType dtype = f32) {
  std::vector<Tensor> keep;
  std::vector<Value> args;
  for (const auto& [shape, v] : ins) {
    Tensor t = Tensor::empty(std::span<const int64_t>(shape), f32);
    std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
    keep.push_back(t);
  }
  Tensor o = Tensor::empty(std::span<const int64_t>(out), dtype);
  std::memset(o.data(), 0xff, size_t(numel(out)) * (dtype.bits() / 8));
  keep.push_back(o);
  for (const Tensor& t : keep) args.emplace_back(t);
  k.module["kernel"].call(Args(args.data(), args.size()));
  std::vector<double> got;
  for (int64_t i = 0; i < numel(out); ++i)
    got.push_back(dtype == f32 ? double(static_cast<const float*>(o.data())[i])
                               : double(static_cast<const int64_t*>(o.data())[i]));
  return got;
}

// |got - want| <= tol * (1 + |want|) everywhere; the first five misses are reported with the seed.
inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what,
                         double tol, uint32_t seed) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol + tol * std::fabs(want[i])) && ++bad <= 5)
      ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << want[i] << " (seed " << seed << ")";
  EXPECT_EQ(bad, 0) << what;
}

}  // namespace anvil::ops::fused_testing
