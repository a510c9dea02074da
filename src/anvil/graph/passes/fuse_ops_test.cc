// fuse_ops: golden text.
#include "anvil/graph/passes/fuse_ops.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/passes/pass_testing.h"

namespace anvil::graph::passes {
namespace {

using testing::expect_pass;

IRModule fuse(const IRModule& m) { return fuse_ops(m); }

TEST(GraphFuseOps, HardSwishChainBecomesOneGroup) {
  // PP-OCRv4's HardSwish: x * clip(x + 3, 0, 6) / 6, four calls. %x feeds the group twice and is
  // one parameter; the constants are parameters too (a kernel reads them as arguments).
  expect_pass(fuse, R"(
    def @main(%x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
      %a: Tensor[(n, 4), float32] = add(%x, const[0])
      %b: Tensor[(n, 4), float32] = clip(%a, max=6.0, min=0.0)
      %c: Tensor[(n, 4), float32] = multiply(%x, %b)
      %d: Tensor[(n, 4), float32] = divide(%c, const[1])
      return %d
    }
    const[0]: Tensor[(), float32] = 3.0
    const[1]: Tensor[(), float32] = 6.0
  )",
              R"(
    def @fused_add_clip_multiply_divide(%p0: Tensor[(n, 4), float32], %p1: Tensor[(), float32],
                                        %p2: Tensor[(), float32]) -> Tensor[(n, 4), float32] {
      %t0: Tensor[(n, 4), float32] = add(%p0, %p1)
      %t1: Tensor[(n, 4), float32] = clip(%t0, max=6.0, min=0.0)
      %t2: Tensor[(n, 4), float32] = multiply(%p0, %t1)
      %t3: Tensor[(n, 4), float32] = divide(%t2, %p2)
      return %t3
    }
    def @main(%x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
      %d: Tensor[(n, 4), float32] = call_fused(%x, const[0], const[1], func="fused_add_clip_multiply_divide")
      return %d
    }
    const[0]: Tensor[(), float32] = 3.0
    const[1]: Tensor[(), float32] = 6.0
  )");
}

TEST(GraphFuseOps, GroupsStopAtSharedValuesReductionsAndTheResult) {
  // %a has two uses and %c is also the result: neither joins a consumer's group. The reduction
  // is not fused; the calls after it form their own group. A lone fusible call stays a call.
  expect_pass(fuse, R"(
    def @main(%x: Tensor[(n, 4), float32]) -> Tuple[Tensor[(n, 4), float32], Tensor[(n,), float32]] {
      %a: Tensor[(n, 4), float32] = relu(%x)
      %b: Tensor[(n, 4), float32] = exp(%a)
      %c: Tensor[(n, 4), float32] = add(%a, %b)
      %s: Tensor[(n,), float32] = sum(%c, axes=[1], keepdims=0)
      %e: Tensor[(n,), float32] = negative(%s)
      %f: Tensor[(n,), float32] = tanh(%e)
      %r: Tuple[Tensor[(n, 4), float32], Tensor[(n,), float32]] = (%c, %f)
      return %r
    }
  )",
              R"(
    def @fused_exp_add(%p0: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
      %t0: Tensor[(n, 4), float32] = exp(%p0)
      %t1: Tensor[(n, 4), float32] = add(%p0, %t0)
      return %t1
    }
    def @fused_negative_tanh(%p0: Tensor[(n,), float32]) -> Tensor[(n,), float32] {
      %t0: Tensor[(n,), float32] = negative(%p0)
      %t1: Tensor[(n,), float32] = tanh(%t0)
      return %t1
    }
    def @main(%x: Tensor[(n, 4), float32]) -> Tuple[Tensor[(n, 4), float32], Tensor[(n,), float32]] {
      %a: Tensor[(n, 4), float32] = relu(%x)
      %c: Tensor[(n, 4), float32] = call_fused(%a, func="fused_exp_add")
      %s: Tensor[(n,), float32] = sum(%c, axes=[1], keepdims=0)
      %f: Tensor[(n,), float32] = call_fused(%s, func="fused_negative_tanh")
      %r: Tuple[Tensor[(n, 4), float32], Tensor[(n,), float32]] = (%c, %f)
      return %r
    }
  )");
}

TEST(GraphFuseOps, BranchesJoinIntoOneTreeAndThePredicateNarrows) {
  // Two single-use branches meet in %c: one tree of three calls. With a predicate refusing
  // `exp`, only the relu/add pair fuses.
  const char* before = R"(
    def @main(%x: Tensor[(n, 4), float32], %y: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] {
      %a: Tensor[(n, 4), float32] = relu(%x)
      %b: Tensor[(4,), float32] = exp(%y)
      %c: Tensor[(n, 4), float32] = add(%a, %b)
      return %c
    }
  )";
  expect_pass(fuse, before, R"(
    def @fused_relu_exp_add(%p0: Tensor[(n, 4), float32], %p1: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] {
      %t0: Tensor[(n, 4), float32] = relu(%p0)
      %t1: Tensor[(4,), float32] = exp(%p1)
      %t2: Tensor[(n, 4), float32] = add(%t0, %t1)
      return %t2
    }
    def @main(%x: Tensor[(n, 4), float32], %y: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] {
      %c: Tensor[(n, 4), float32] = call_fused(%x, %y, func="fused_relu_exp_add")
      return %c
    }
  )");
  auto no_exp = [](const IRModule& m) { return fuse_ops(m, [](const CallNode& c) { return c.op() != "exp"; }); };
  expect_pass(no_exp, before, R"(
    def @fused_relu_add(%p0: Tensor[(n, 4), float32], %p1: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] {
      %t0: Tensor[(n, 4), float32] = relu(%p0)
      %t1: Tensor[(n, 4), float32] = add(%t0, %p1)
      return %t1
    }
    def @main(%x: Tensor[(n, 4), float32], %y: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] {
      %b: Tensor[(4,), float32] = exp(%y)
      %c: Tensor[(n, 4), float32] = call_fused(%x, %b, func="fused_relu_add")
      return %c
    }
  )");
}

TEST(GraphFuseOps, CallFusedTypeIsCheckedAgainstItsCallee) {
  IRModule m = fuse_ops(parse_module(R"(
    def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %a: Tensor[(2,), float32] = relu(%x)
      %b: Tensor[(2,), float32] = exp(%a)
      return %b
    }
  )"));
  EXPECT_TRUE(well_formed_errors(m).empty());
  m.functions.erase("fused_relu_exp");
  ASSERT_EQ(well_formed_errors(m).size(), 1u);
  EXPECT_NE(well_formed_errors(m)[0].find("not a function of the module"), std::string::npos);
  // Inference cannot type it (the callee is not visible to it).
  std::vector<Expr> args{Var::make("x", Type::tensor(std::vector<int64_t>{2}, DataType::float32()))};
  EXPECT_THROW(infer_call_type(kCallFused, args, {{"func", "f"}}), Error);
}

}  // namespace
}  // namespace anvil::graph::passes
