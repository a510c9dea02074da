// Test helpers for lowered graph modules: tensor-expression kernels laid out as ops::lower_call
// lays them out (inputs, outputs, then the symbolic dims as int32 scalars), call_tir Calls and
// bindings written by hand, seeded random inputs (the seed is printed once).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "anvil/graph/function.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/runtime/test_util.h"
#include "anvil/te/lower.h"

namespace anvil::pipeline::testing {

using graph::Expr;
using graph::Type;
using ir::PrimExpr;

inline constexpr uint32_t kSeed = 20261202;
inline const DataType f32 = DataType::float32();

inline std::mt19937& rng() {
  static std::mt19937 gen([] {
    std::printf("pipeline test seed %u\n", kSeed);
    return kSeed;
  }());
  return gen;
}

inline Tensor random(std::vector<int64_t> shape) { return anvil::testing::random_f32(shape, rng()); }
inline Type ts(const std::vector<int64_t>& shape) { return Type::tensor(shape, f32); }
inline const float* f(const Tensor& t) { return static_cast<const float*>(t.data()); }

// An elementwise kernel out[i] = fn(in_0[i], ...) over `shape`, parameters (inputs, out, shape_vars).
inline tir::PrimFunc kernel(const std::string& name, const std::vector<PrimExpr>& shape, int num_inputs,
                     const std::function<PrimExpr(const std::vector<PrimExpr>&)>& fn,
                     const std::vector<ir::Var>& shape_vars = {}) {
  std::vector<te::Tensor> ins;
  for (int k = 0; k < num_inputs; ++k) ins.push_back(te::placeholder(shape, f32, "in" + std::to_string(k)));
  te::Tensor out = te::compute(shape, [&](const std::vector<ir::Var>& i) {
    std::vector<PrimExpr> idx(i.begin(), i.end()), vals;
    for (const te::Tensor& t : ins) vals.push_back(t(idx));
    return fn(vals);
  });
  std::vector<te::LowerArg> args(ins.begin(), ins.end());
  args.emplace_back(out);
  for (const ir::Var& v : shape_vars) args.emplace_back(v);
  return te::lower(te::create_schedule({out}), args, name);
}

inline Expr call_tir(const std::string& func, std::vector<Expr> args, Type out, graph::AttrValue::Strings shape_vars = {}) {
  return graph::Call::make(graph::kCallTIR, std::move(args),
                           {{"func", func}, {"shape_vars", graph::AttrValue::strings(std::move(shape_vars))}}, out);
}

inline graph::Var let(std::vector<graph::Binding>& bindings, const std::string& name, Expr value) {
  graph::Var v = graph::Var::make(name, value.type());
  bindings.push_back({v, value});
  return v;
}

inline PrimExpr relu(const PrimExpr& x) { return ir::max(x, ir::make_zero(x.dtype())); }

// x -> t1 = x + c -> t2 = relu(t1) -> t3 = t2 * x -> t4 = t3 + t3 (returned), over `shape`.
inline graph::IRModule chain_module(const std::vector<PrimExpr>& shape, const std::vector<ir::Var>& vars, Tensor c) {
  graph::IRModule mod;
  graph::AttrValue::Strings names;
  for (const ir::Var& v : vars) names.push_back(v->name());
  Type t = Type::tensor(shape, f32);
  mod.prim_funcs["add"] = kernel("add", shape, 2, [](auto& v) { return v[0] + v[1]; }, vars);
  mod.prim_funcs["relu"] = kernel("relu", shape, 1, [](auto& v) { return relu(v[0]); }, vars);
  mod.prim_funcs["mul"] = kernel("mul", shape, 2, [](auto& v) { return v[0] * v[1]; }, vars);
  graph::Var x = graph::Var::make("x", t);
  std::vector<graph::Binding> b;
  Expr cst = c.defined() ? graph::Constant::make(c) : Expr(x);
  graph::Var t1 = let(b, "t1", call_tir("add", {x, cst}, t, names));
  graph::Var t2 = let(b, "t2", call_tir("relu", {t1}, t, names));
  graph::Var t3 = let(b, "t3", call_tir("mul", {t2, x}, t, names));
  graph::Var t4 = let(b, "t4", call_tir("add", {t3, t3}, t, names));
  mod.functions["main"] = graph::Function::make({x}, b, t4);
  return mod;
}

inline void expect_chain(const Tensor& x, const Tensor* c, const Tensor& out) {
  ASSERT_EQ(out.shape(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    double t1 = double(f(x)[i]) + (c ? f(*c)[i] : f(x)[i]);
    double want = 2 * std::max(t1, 0.0) * f(x)[i];
    ASSERT_NEAR(f(out)[i], want, 1e-5) << "at " << i << " (seed " << kSeed << ")";
  }
}

}  // namespace anvil::pipeline::testing
