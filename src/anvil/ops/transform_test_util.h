// Shared by the transform kernel tests: random inputs, running one graph call lowered through
// ops::lower_call and built for llvm, and element-by-element comparison with a reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>

#include "anvil/graph/builder.h"
#include "anvil/ops/lower_call.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"

namespace anvil::ops::transform_test {

using graph::AttrValue;
using graph::Attrs;
using graph::Expr;
using graph::Type;
using Idx = std::vector<int64_t>;

inline constexpr uint32_t kSeed = 20261202;
inline const DataType kF32 = DataType::float32();
inline const DataType kI64 = DataType::int64();

inline int64_t numel(const Idx& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline Tensor random_f32(const Idx& shape, std::mt19937& rng) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), kF32);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < numel(shape); ++i) static_cast<float*>(t.data())[i] = dist(rng);
  return t;
}

inline Tensor ints(const Idx& shape, const std::vector<int64_t>& values) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), kI64);
  for (size_t i = 0; i < values.size(); ++i) static_cast<int64_t*>(t.data())[i] = values[i];
  return t;
}

// Element at a multi-index (row-major).
inline double at(const Tensor& t, const Idx& idx) {
  int64_t lin = 0;
  for (size_t k = 0; k < idx.size(); ++k) lin = lin * t.shape()[k] + idx[k];
  if (t.dtype() == kI64) return static_cast<double>(static_cast<const int64_t*>(t.data())[lin]);
  return static_cast<const float*>(t.data())[lin];
}

inline graph::Var param(const std::string& name, std::vector<ir::PrimExpr> shape, DataType dt = kF32) {
  return graph::Var::make(name, Type::tensor(std::move(shape), dt));
}

// Lowers and builds the call, runs it on `inputs` (shape vars by name), returns the outputs.
inline std::vector<Tensor> run(const Expr& e, const std::vector<Tensor>& inputs, const std::vector<Idx>& out_shapes,
                        const std::map<std::string, int64_t>& vars = {}) {
  const auto* call = e.as<graph::CallNode>();
  LoweredCall lc = lower_call(*call, Target::parse("llvm"), "kernel");
  Module m = pipeline::build({lc.func}, Target::parse("llvm"));
  std::vector<Type> types = call->type().is_tuple() ? call->type().fields() : std::vector<Type>{call->type()};
  std::vector<Value> args(inputs.begin(), inputs.end());
  std::vector<Tensor> outs;
  for (size_t i = 0; i < out_shapes.size(); ++i) {
    outs.push_back(Tensor::empty(std::span<const int64_t>(out_shapes[i]), types[i].dtype()));
    if (types[i].dtype() == kF32)
      for (int64_t k = 0; k < numel(out_shapes[i]); ++k) static_cast<float*>(outs.back().data())[k] = NAN;
    args.emplace_back(outs.back());
  }
  for (const ir::Var& v : lc.shape_vars) args.emplace_back(vars.at(v->name()));
  m["kernel"].call(args);
  return outs;
}

// Every element of `out` equals ref(index) exactly (transforms move elements, they compute nothing).
inline void expect_elements(const Tensor& out, const std::function<double(const Idx&)>& ref, double tol = 0) {
  Idx idx(out.shape().size(), 0);
  int bad = 0;
  for (int64_t lin = 0; lin < numel(out.shape()); ++lin) {
    double want = ref(idx), got = at(out, idx);
    if (!(std::fabs(got - want) <= tol) && ++bad <= 5) {
      std::string s;
      for (int64_t v : idx) s += std::to_string(v) + " ";
      ADD_FAILURE() << "out[" << s << "] = " << got << ", want " << want;
    }
    for (int k = static_cast<int>(idx.size()) - 1; k >= 0; --k) {
      if (++idx[k] < out.shape()[k]) break;
      idx[k] = 0;
    }
  }
  EXPECT_EQ(bad, 0) << "mismatching elements";
}

inline Idx unravel(int64_t lin, const Idx& shape) {
  Idx idx(shape.size());
  for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) idx[k] = lin % shape[k], lin /= shape[k];
  return idx;
}
inline int64_t ravel(const Idx& idx, const Idx& shape) {
  int64_t lin = 0;
  for (size_t k = 0; k < idx.size(); ++k) lin = lin * shape[k] + idx[k];
  return lin;
}

}  // namespace anvil::ops::transform_test
