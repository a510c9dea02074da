// vm_codegen on hand-written lowered modules: call_tir bindings of tensor-expression kernels
// (written here the way ops::lower_call lays them out: inputs, outputs, then the symbolic dims as
// int32 scalars), built for llvm and run on the VM against naive references — static shapes,
// a symbolic batch (one executable, several sizes), a derived dimension n * 2, tuples, constants,
// reshape views, parameter checks with named errors, and the memory plan's reuse.
// Inputs: uniform [-1, 1) from kSeed (printed).
#include "anvil/pipeline/vm_codegen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>

#include "anvil/ir/expr_ops.h"
#include "anvil/pipeline/build.h"
#include "anvil/pipeline/lowered_test_util.h"
#include "anvil/runtime/memory/allocator.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/test_util.h"
#include "anvil/runtime/vm/vm.h"
#include "anvil/te/lower.h"

namespace anvil::pipeline {
namespace {

using graph::Expr;
using graph::Type;
using ir::PrimExpr;
using namespace pipeline::testing;

// vm_codegen, the kernels built for llvm and imported, a VM on the CPU.
struct Compiled {
  VmCodegenResult result;
  vm::VirtualMachine vm;
};
Compiled run_codegen(const graph::IRModule& mod, VmCodegenOptions options = {}) {
  register_runtime_functions();
  Compiled c;
  c.result = vm_codegen(mod, options);
  std::vector<tir::PrimFunc> funcs;
  for (const auto& [name, fn] : mod.prim_funcs) funcs.push_back(fn);
  c.result.exec.as_module().import_module(build(funcs, Target::parse("llvm")));
  c.vm = vm::VirtualMachine::create(c.result.exec.as_module());
  return c;
}

TEST(VmCodegen, StaticChainWithConstantAndReuse) {
  Tensor c = random({8, 16});
  graph::IRModule mod = chain_module({8, 16}, {}, c);
  Compiled run = run_codegen(mod);
  Tensor x = random({8, 16});
  expect_chain(x, &c, run.vm["main"](x).as_tensor());
  // Four 512-byte intermediates, the last one returned: two storages alternate.
  const MemoryPlan& plan = run.result.memory_plan;
  EXPECT_EQ(plan.unplanned_bytes, 4 * 512);
  EXPECT_EQ(plan.num_storages, 2);
  EXPECT_EQ(plan.planned_bytes, 2 * 512);
  EXPECT_LT(plan.planned_bytes, plan.unplanned_bytes);
  EXPECT_EQ(plan.num_dynamic_tensors, 0);
  EXPECT_FALSE(read_output_names(run.result.exec).has_value());
  std::optional<MemoryPlan> stored = read_memory_plan(run.result.exec);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->to_json(), plan.to_json());
  // No shape heap for a static program.
  EXPECT_EQ(run.result.exec->as_text().find("alloc_shape_heap"), std::string::npos) << run.result.exec->as_text();
  // The returned tensor is not overwritten by a second run.
  Tensor first = run.vm["main"](x).as_tensor();
  Tensor x2 = random({8, 16});
  run.vm["main"](x2);
  expect_chain(x, &c, first);
}

TEST(VmCodegen, WithoutPlanningEveryOutputHasItsStorage) {
  graph::IRModule mod = chain_module({8, 16}, {}, Tensor());
  VmCodegenOptions options;
  options.plan_memory = false;
  Compiled run = run_codegen(mod, options);
  Tensor x = random({8, 16});
  expect_chain(x, nullptr, run.vm["main"](x).as_tensor());
  EXPECT_EQ(run.result.memory_plan.num_storages, 4);
  EXPECT_EQ(run.result.memory_plan.planned_bytes, 4 * 512);
}

TEST(VmCodegen, SymbolicBatchOneExecutableManySizes) {
  ir::Var n = ir::size_var("n");
  graph::IRModule mod = chain_module({n, 5}, {n}, Tensor());
  Compiled run = run_codegen(mod);
  for (int64_t batch : {1, 3, 37}) {
    Tensor x = random({batch, 5});
    expect_chain(x, nullptr, run.vm["main"](x).as_tensor());
  }
  // Four (n, 5) outputs, the last returned: two storages of n * 20 bytes alternate.
  const MemoryPlan& plan = run.result.memory_plan;
  EXPECT_EQ(plan.num_dynamic_tensors, 4);
  EXPECT_EQ(plan.num_symbolic_storages, 2);
  EXPECT_EQ(plan.symbolic_planned_bytes_at_1, 2 * 20);
  EXPECT_EQ(plan.symbolic_unplanned_bytes_at_1, 4 * 20);
  EXPECT_NE(run.result.exec->as_text().find("alloc_shape_heap"), std::string::npos);
  // A rank or a fixed dimension that does not match names the input.
  std::string e = anvil::testing::error_of([&] { run.vm["main"](random({3, 6})); });
  EXPECT_NE(e.find("main: input 'x'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 5 but got 6"), std::string::npos) << e;
  e = anvil::testing::error_of([&] { run.vm["main"](random({3})); });
  EXPECT_NE(e.find("main: input 'x'"), std::string::npos) << e;
  EXPECT_NE(e.find("2-d"), std::string::npos) << e;
}

// Symbolic-size tensors take at most two blocks at any call in a chain of four: planned into two
// alternating storages, or (without planning) freed after their last use by clearing registers.
class SymbolicMemory : public ::testing::TestWithParam<bool> {};

TEST_P(SymbolicMemory, ChainOfFourHoldsTwoIntermediates) {
  ir::Var n = ir::size_var("n");
  VmCodegenOptions options;
  options.plan_memory = GetParam();
  Compiled run = run_codegen(chain_module({n, 5}, {n}, Tensor()), options);
  Allocator* allocator = run.vm->allocator(0);
  Tensor x = random({1000, 5});
  run.vm["main"](x);  // warm up: the pool holds the blocks afterwards
  size_t base = allocator->bytes_in_use(), peak = base;
  run.vm->set_instrument([&](const vm::CallEvent& e) {
    if (!e.before) peak = std::max(peak, allocator->bytes_in_use());
  });
  Value out = run.vm["main"](x);
  run.vm->set_instrument(nullptr);
  expect_chain(x, nullptr, out.as_tensor());
  size_t one = 1000 * 5 * sizeof(float);
  EXPECT_GE(peak - base, 2 * one);
  EXPECT_LT(peak - base, 3 * one + 4096) << "peak " << peak - base << " bytes for " << one << "-byte tensors";
}

INSTANTIATE_TEST_SUITE_P(PlannedAndNot, SymbolicMemory, ::testing::Bool());

TEST(VmCodegen, DtypeErrorNamesTheInputAndInputNamesAreUsed) {
  graph::IRModule mod = chain_module({4}, {}, Tensor());
  mod.attrs["input_names"] = graph::AttrValue::strings({"input.1"});
  mod.attrs["output_names"] = graph::AttrValue::strings({"probs"});
  Compiled run = run_codegen(mod);
  EXPECT_EQ(read_output_names(run.result.exec), (std::vector<std::string>{"probs"}));
  const vm::FuncInfo& info = run.result.exec->func_table[run.result.exec->find_function("main")];
  EXPECT_EQ(info.param_names, std::vector<std::string>{"input.1"});
  Tensor bad = Tensor::empty({4}, DataType::int64());
  std::string e = anvil::testing::error_of([&] { run.vm["main"](bad); });
  EXPECT_NE(e.find("main: input 'input.1'"), std::string::npos) << e;
  EXPECT_NE(e.find("float32"), std::string::npos) << e;
  EXPECT_NE(e.find("int64"), std::string::npos) << e;
  mod.attrs["input_names"] = graph::AttrValue::strings({"a", "b"});
  EXPECT_THROW(vm_codegen(mod), Error);
}

// Two inputs sharing n; a kernel whose output has the derived length n * 2 (out[i] = x[i % n] *
// (i < n ? 1 : -1)); the heap computes n * 2 and the kernel gets n as a scalar.
TEST(VmCodegen, DerivedDimensionAndSharedSymbol) {
  ir::Var n = ir::size_var("n");
  graph::IRModule mod;
  te::Tensor in = te::placeholder({n}, f32, "in");
  te::Tensor out = te::compute({n * 2}, [&](ir::Var i) {
    return in(ir::floormod(i, n)) * ir::select(i < n, ir::make_const(f32, 1), ir::make_const(f32, -1));
  });
  mod.prim_funcs["mirror"] = te::lower(te::create_schedule({out}), {in, out, n}, "mirror");
  mod.prim_funcs["add"] = kernel("add", {n}, 2, [](auto& v) { return v[0] + v[1]; }, {n});
  graph::Var x = graph::Var::make("x", Type::tensor({n}, f32)), y = graph::Var::make("y", Type::tensor({n}, f32));
  std::vector<graph::Binding> b;
  graph::Var s = let(b, "s", call_tir("add", {x, y}, Type::tensor({n}, f32), {"n"}));
  graph::Var m = let(b, "m", call_tir("mirror", {s}, Type::tensor({n * 2}, f32), {"n"}));
  mod.functions["main"] = graph::Function::make({x, y}, b, m);
  Compiled run = run_codegen(mod);
  for (int64_t len : {1, 7}) {
    Tensor xv = random({len}), yv = random({len});
    Tensor r = run.vm["main"](xv, yv).as_tensor();
    ASSERT_EQ(r.shape(), (std::vector<int64_t>{2 * len}));
    for (int64_t i = 0; i < 2 * len; ++i) {
      double v = double(f(xv)[i % len]) + f(yv)[i % len];
      ASSERT_NEAR(f(r)[i], i < len ? v : -v, 1e-6) << i;
    }
  }
  std::string e = anvil::testing::error_of([&] { run.vm["main"](random({3}), random({4})); });
  EXPECT_NE(e.find("main: input 'y'"), std::string::npos) << e;
}

// A kernel with two outputs, tuple_getitem of its tuple, and a tuple result.
TEST(VmCodegen, TuplesInAndOut) {
  graph::IRModule mod;
  te::Tensor in = te::placeholder({6}, f32, "in");
  te::Tensor o1 = te::compute({6}, [&](ir::Var i) { return in(i) + 1.0f; }, "o1");
  te::Tensor o2 = te::compute({6}, [&](ir::Var i) { return in(i) * 2.0f; }, "o2");
  mod.prim_funcs["two"] = te::lower(te::create_schedule({o1, o2}), {in, o1, o2}, "two");
  mod.prim_funcs["mul"] = kernel("mul", {6}, 2, [](auto& v) { return v[0] * v[1]; });
  Type t = ts({6});
  graph::Var x = graph::Var::make("x", t);
  std::vector<graph::Binding> b;
  graph::Var pair = let(b, "pair", call_tir("two", {x}, Type::tuple({t, t})));
  graph::Var a = let(b, "a", graph::TupleGetItem::make(pair, 0));
  graph::Var c = let(b, "c", graph::TupleGetItem::make(pair, 1));
  graph::Var p = let(b, "p", call_tir("mul", {a, c}, t));
  mod.functions["main"] = graph::Function::make({x}, b, graph::Tuple::make({p, a}));
  Compiled run = run_codegen(mod);
  Tensor xv = random({6});
  Value result = run.vm["main"](xv);
  const std::vector<Value>& out = result.as_array();
  ASSERT_EQ(out.size(), 2u);
  for (int i = 0; i < 6; ++i) {
    double v = f(xv)[i];
    EXPECT_NEAR(f(out[0].as_tensor())[i], (v + 1) * (v * 2), 1e-5);
    EXPECT_NEAR(f(out[1].as_tensor())[i], v + 1, 1e-6);
  }
}

// reshape is a view: the planner keeps the storage of its source alive while the view is read.
TEST(VmCodegen, ReshapeViewsAndShapeOf) {
  ir::Var n = ir::size_var("n");
  graph::IRModule mod;
  mod.prim_funcs["neg"] = kernel("neg", {2, 8}, 1, [](auto& v) { return -v[0]; });
  mod.prim_funcs["relu"] = kernel("relu", {16}, 1, [](auto& v) { return relu(v[0]); });
  mod.prim_funcs["add"] = kernel("add", {16}, 2, [](auto& v) { return v[0] + v[1]; });
  graph::Var x = graph::Var::make("x", ts({2, 8}));
  std::vector<graph::Binding> b;
  graph::Var t1 = let(b, "t1", call_tir("neg", {x}, ts({2, 8})));
  Expr target = graph::ShapeExpr::make({16});
  graph::Var v = let(b, "v", graph::Call::make("reshape", {t1, target}, {}, ts({16})));
  graph::Var r = let(b, "r", call_tir("relu", {v}, ts({16})));
  graph::Var s = let(b, "s", call_tir("add", {r, v}, ts({16})));
  graph::Var shp = let(b, "shp", graph::Call::make("shape_of", {s}, {}, Type::shape(1)));
  mod.functions["main"] = graph::Function::make({x}, b, graph::Tuple::make({s, shp}));
  Compiled run = run_codegen(mod);
  Tensor xv = random({2, 8});
  Value result = run.vm["main"](xv);
  const std::vector<Value>& out = result.as_array();
  Tensor sv = out[0].as_tensor();
  ASSERT_EQ(sv.shape(), (std::vector<int64_t>{16}));
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(f(sv)[i], std::max(-f(xv)[i], 0.0f) - f(xv)[i], 1e-6) << i;
  EXPECT_EQ(out[1].as_shape(), (std::vector<int64_t>{16}));
  // t1 (seen through v) is read by s: r cannot take its storage.
  EXPECT_EQ(run.result.memory_plan.num_storages, 3);
}

TEST(VmCodegen, UnloweredOperatorAndUnboundDimensionAreErrors) {
  graph::IRModule mod;
  Type t = ts({4});
  graph::Var x = graph::Var::make("x", t);
  std::vector<graph::Binding> b;
  graph::Var y = let(b, "y", graph::Call::make("relu", {x}, {}, t));
  mod.functions["main"] = graph::Function::make({x}, b, y);
  std::string e = anvil::testing::error_of([&] { vm_codegen(mod); });
  EXPECT_NE(e.find("'relu' was not lowered"), std::string::npos) << e;

  ir::Var n = ir::size_var("n");
  graph::Var z = graph::Var::make("z", Type::tensor({n * 2}, f32));
  std::vector<graph::Binding> b2;
  graph::Var w = let(b2, "w", call_tir("k", {z}, Type::tensor({n * 2}, f32), {"n"}));
  mod.functions["main"] = graph::Function::make({z}, b2, w);
  e = anvil::testing::error_of([&] { vm_codegen(mod); });
  EXPECT_NE(e.find("'n' is not bound"), std::string::npos) << e;
}

TEST(MemoryPlan, JsonRoundTrip) {
  MemoryPlan p{100, 400, 2, 4, 1};
  std::optional<MemoryPlan> q = MemoryPlan::from_json(p.to_json());
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->to_json(), p.to_json());
  EXPECT_FALSE(MemoryPlan::from_json("{\"planned_bytes\": 1}").has_value());
  EXPECT_NE(p.to_string().find("2 storages"), std::string::npos) << p.to_string();
}

}  // namespace
}  // namespace anvil::pipeline
