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
  // %a has two uses and %c is also the result: neither joins a consumer's group (so the sum has
  // no prologue). The calls after the sum, of its type, are its epilogue. A lone fusible call
  // stays a call.
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
    def @fused_sum_negative_tanh(%p0: Tensor[(n, 4), float32]) -> Tensor[(n,), float32] {
      %t0: Tensor[(n,), float32] = sum(%p0, axes=[1], keepdims=0)
      %t1: Tensor[(n,), float32] = negative(%t0)
      %t2: Tensor[(n,), float32] = tanh(%t1)
      return %t2
    }
    def @main(%x: Tensor[(n, 4), float32]) -> Tuple[Tensor[(n, 4), float32], Tensor[(n,), float32]] {
      %a: Tensor[(n, 4), float32] = relu(%x)
      %c: Tensor[(n, 4), float32] = call_fused(%a, func="fused_exp_add")
      %f: Tensor[(n,), float32] = call_fused(%c, func="fused_sum_negative_tanh")
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

TEST(GraphFuseOps, ConvAnchorsItsBiasActivationAndResidualAdd) {
  // nn.conv2d is an anchor: the bias add, clip and residual add after it are its epilogue (one
  // group). It adopts nothing before it: the relu feeding it stays a call of its own.
  expect_pass(fuse, R"(
    def @main(%x: Tensor[(n, 2, 4, 4), float32]) -> Tensor[(n, 2, 4, 4), float32] {
      %r: Tensor[(n, 2, 4, 4), float32] = relu(%x)
      %c: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%r, const[0])
      %b: Tensor[(n, 2, 4, 4), float32] = add(%c, const[1])
      %k: Tensor[(n, 2, 4, 4), float32] = clip(%b, max=6.0, min=0.0)
      %s: Tensor[(n, 2, 4, 4), float32] = add(%k, %x)
      return %s
    }
    const[0]: Tensor[(2, 2, 1, 1), float32] = [1.0, 2.0, 3.0, 4.0]
    const[1]: Tensor[(2, 1, 1), float32] = [0.5, -0.5]
  )",
              R"(
    def @fused_nn_conv2d_add_clip_add(%p0: Tensor[(n, 2, 4, 4), float32], %p1: Tensor[(2, 2, 1, 1), float32],
                                      %p2: Tensor[(2, 1, 1), float32],
                                      %p3: Tensor[(n, 2, 4, 4), float32]) -> Tensor[(n, 2, 4, 4), float32] {
      %t0: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%p0, %p1)
      %t1: Tensor[(n, 2, 4, 4), float32] = add(%t0, %p2)
      %t2: Tensor[(n, 2, 4, 4), float32] = clip(%t1, max=6.0, min=0.0)
      %t3: Tensor[(n, 2, 4, 4), float32] = add(%t2, %p3)
      return %t3
    }
    def @main(%x: Tensor[(n, 2, 4, 4), float32]) -> Tensor[(n, 2, 4, 4), float32] {
      %r: Tensor[(n, 2, 4, 4), float32] = relu(%x)
      %s: Tensor[(n, 2, 4, 4), float32] = call_fused(%r, const[0], const[1], %x, func="fused_nn_conv2d_add_clip_add")
      return %s
    }
    const[0]: Tensor[(2, 2, 1, 1), float32] = [1.0, 2.0, 3.0, 4.0]
    const[1]: Tensor[(2, 1, 1), float32] = [0.5, -0.5]
  )");
}

TEST(GraphFuseOps, HardSwishReadsTheConvTwiceInsideItsGroup) {
  // conv * clip(conv + 3, 0, 6) / 6: the conv has two uses, both in the group that the multiply
  // forms (the add/clip branch adopted first), so the whole chain is one anchor group.
  expect_pass(fuse, R"(
    def @main(%x: Tensor[(n, 2, 4, 4), float32]) -> Tensor[(n, 2, 4, 4), float32] {
      %c: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%x, const[0])
      %a: Tensor[(n, 2, 4, 4), float32] = add(%c, const[1])
      %k: Tensor[(n, 2, 4, 4), float32] = clip(%a, max=6.0, min=0.0)
      %m: Tensor[(n, 2, 4, 4), float32] = multiply(%c, %k)
      %d: Tensor[(n, 2, 4, 4), float32] = divide(%m, const[2])
      return %d
    }
    const[0]: Tensor[(2, 2, 1, 1), float32] = [1.0, 2.0, 3.0, 4.0]
    const[1]: Tensor[(), float32] = 3.0
    const[2]: Tensor[(), float32] = 6.0
  )",
              R"(
    def @fused_nn_conv2d_add_clip_multiply_divide(%p0: Tensor[(n, 2, 4, 4), float32],
                                                  %p1: Tensor[(2, 2, 1, 1), float32], %p2: Tensor[(), float32],
                                                  %p3: Tensor[(), float32]) -> Tensor[(n, 2, 4, 4), float32] {
      %t0: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%p0, %p1)
      %t1: Tensor[(n, 2, 4, 4), float32] = add(%t0, %p2)
      %t2: Tensor[(n, 2, 4, 4), float32] = clip(%t1, max=6.0, min=0.0)
      %t3: Tensor[(n, 2, 4, 4), float32] = multiply(%t0, %t2)
      %t4: Tensor[(n, 2, 4, 4), float32] = divide(%t3, %p3)
      return %t4
    }
    def @main(%x: Tensor[(n, 2, 4, 4), float32]) -> Tensor[(n, 2, 4, 4), float32] {
      %d: Tensor[(n, 2, 4, 4), float32] = call_fused(%x, const[0], const[1], const[2],
                                                     func="fused_nn_conv2d_add_clip_multiply_divide")
      return %d
    }
    const[0]: Tensor[(2, 2, 1, 1), float32] = [1.0, 2.0, 3.0, 4.0]
    const[1]: Tensor[(), float32] = 3.0
    const[2]: Tensor[(), float32] = 6.0
  )");
}

TEST(GraphFuseOps, AnAnchorGroupHasOneAnchorAndOnlyEpiloguesOfItsType) {
  // add(%a, %b) of two dense results adopts the first only. The broadcast to (3, n, 3) does not
  // have the anchor's type: it stays out. The matmul is also a result of the function, so the
  // relu after it cannot take it.
  expect_pass(fuse, R"(
    def @main(%x: Tensor[(n, 2), float32], %y: Tensor[(3, n, 3), float32])
        -> Tuple[Tensor[(3, n, 3), float32], Tensor[(n, 3), float32], Tensor[(n, 3), float32]] {
      %a: Tensor[(n, 3), float32] = nn.dense(%x, const[0])
      %b: Tensor[(n, 3), float32] = nn.dense(%x, const[0])
      %s: Tensor[(n, 3), float32] = add(%a, %b)
      %u: Tensor[(3, n, 3), float32] = add(%s, %y)
      %m: Tensor[(n, 3), float32] = matmul(%x, const[1])
      %v: Tensor[(n, 3), float32] = relu(%m)
      %r: Tuple[Tensor[(3, n, 3), float32], Tensor[(n, 3), float32], Tensor[(n, 3), float32]] = (%u, %v, %m)
      return %r
    }
    const[0]: Tensor[(3, 2), float32] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    const[1]: Tensor[(2, 3), float32] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
  )",
              R"(
    def @fused_nn_dense_add(%p0: Tensor[(n, 2), float32], %p1: Tensor[(3, 2), float32],
                            %p2: Tensor[(n, 3), float32]) -> Tensor[(n, 3), float32] {
      %t0: Tensor[(n, 3), float32] = nn.dense(%p0, %p1)
      %t1: Tensor[(n, 3), float32] = add(%t0, %p2)
      return %t1
    }
    def @main(%x: Tensor[(n, 2), float32], %y: Tensor[(3, n, 3), float32])
        -> Tuple[Tensor[(3, n, 3), float32], Tensor[(n, 3), float32], Tensor[(n, 3), float32]] {
      %b: Tensor[(n, 3), float32] = nn.dense(%x, const[0])
      %s: Tensor[(n, 3), float32] = call_fused(%x, const[0], %b, func="fused_nn_dense_add")
      %u: Tensor[(3, n, 3), float32] = add(%s, %y)
      %m: Tensor[(n, 3), float32] = matmul(%x, const[1])
      %v: Tensor[(n, 3), float32] = relu(%m)
      %r: Tuple[Tensor[(3, n, 3), float32], Tensor[(n, 3), float32], Tensor[(n, 3), float32]] = (%u, %v, %m)
      return %r
    }
    const[0]: Tensor[(3, 2), float32] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    const[1]: Tensor[(2, 3), float32] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
  )");
}

TEST(GraphFuseOps, ReductionTakesItsPrologueAndEpilogue) {
  // RMS: sqrt(mean(d * d) + eps). %d has two uses (both of the multiply) and stays out; the
  // multiply is the mean's prologue, the add and sqrt of the mean's type its epilogue.
  expect_pass(fuse, R"(
    def @main(%x: Tensor[(n, 8), float32], %m: Tensor[(n, 1), float32],
              %eps: Tensor[(), float32]) -> Tensor[(n, 1), float32] {
      %d: Tensor[(n, 8), float32] = subtract(%x, %m)
      %q: Tensor[(n, 8), float32] = multiply(%d, %d)
      %v: Tensor[(n, 1), float32] = mean(%q, axes=[1], keepdims=1)
      %a: Tensor[(n, 1), float32] = add(%v, %eps)
      %r: Tensor[(n, 1), float32] = sqrt(%a)
      return %r
    }
  )",
              R"(
    def @fused_multiply_mean_add_sqrt(%p0: Tensor[(n, 8), float32],
                                      %p1: Tensor[(), float32]) -> Tensor[(n, 1), float32] {
      %t0: Tensor[(n, 8), float32] = multiply(%p0, %p0)
      %t1: Tensor[(n, 1), float32] = mean(%t0, axes=[1], keepdims=1)
      %t2: Tensor[(n, 1), float32] = add(%t1, %p1)
      %t3: Tensor[(n, 1), float32] = sqrt(%t2)
      return %t3
    }
    def @main(%x: Tensor[(n, 8), float32], %m: Tensor[(n, 1), float32],
              %eps: Tensor[(), float32]) -> Tensor[(n, 1), float32] {
      %d: Tensor[(n, 8), float32] = subtract(%x, %m)
      %r: Tensor[(n, 1), float32] = call_fused(%d, %eps, func="fused_multiply_mean_add_sqrt")
      return %r
    }
  )");
}

TEST(GraphFuseOps, ReductionPrologueTreeWithoutEpilogue) {
  // log(sum(exp(x - m))): the broadcast subtract and the exp are the sum's prologue; the sum's
  // value is read by a consumer of another type, which does not adopt it.
  expect_pass(fuse, R"(
    def @main(%x: Tensor[(n, 8), float32], %m: Tensor[(n, 1), float32]) -> Tensor[(n, 8), float32] {
      %d: Tensor[(n, 8), float32] = subtract(%x, %m)
      %e: Tensor[(n, 8), float32] = exp(%d)
      %s: Tensor[(n, 1), float32] = sum(%e, axes=[1], keepdims=1)
      %y: Tensor[(n, 8), float32] = divide(%x, %s)
      return %y
    }
  )",
              R"(
    def @fused_subtract_exp_sum(%p0: Tensor[(n, 8), float32],
                                %p1: Tensor[(n, 1), float32]) -> Tensor[(n, 1), float32] {
      %t0: Tensor[(n, 8), float32] = subtract(%p0, %p1)
      %t1: Tensor[(n, 8), float32] = exp(%t0)
      %t2: Tensor[(n, 1), float32] = sum(%t1, axes=[1], keepdims=1)
      return %t2
    }
    def @main(%x: Tensor[(n, 8), float32], %m: Tensor[(n, 1), float32]) -> Tensor[(n, 8), float32] {
      %s: Tensor[(n, 1), float32] = call_fused(%x, %m, func="fused_subtract_exp_sum")
      %y: Tensor[(n, 8), float32] = divide(%x, %s)
      return %y
    }
  )");
}

TEST(GraphFuseOps, ScalarReductionTakesItsEpilogue) {
  // ReduceMean over every axis to a 0-d value, then sqrt(. + eps) * gain, all 0-d: one group with
  // the square as prologue. The divide reads the 0-d mean at another type (n, 8): not an epilogue.
  expect_pass(fuse, R"(
    def @main(%x: Tensor[(n, 8), float32], %eps: Tensor[(), float32],
              %gain: Tensor[(), float32]) -> Tuple[Tensor[(), float32], Tensor[(n, 8), float32]] {
      %q: Tensor[(n, 8), float32] = multiply(%x, %x)
      %v: Tensor[(), float32] = mean(%q, keepdims=0)
      %a: Tensor[(), float32] = add(%v, %eps)
      %s: Tensor[(), float32] = sqrt(%a)
      %y: Tensor[(), float32] = multiply(%s, %gain)
      %m: Tensor[(), float32] = max(%x, keepdims=0)
      %d: Tensor[(n, 8), float32] = divide(%x, %m)
      %r: Tuple[Tensor[(), float32], Tensor[(n, 8), float32]] = (%y, %d)
      return %r
    }
  )",
              R"(
    def @fused_multiply_mean_add_sqrt_multiply(%p0: Tensor[(n, 8), float32], %p1: Tensor[(), float32],
                                               %p2: Tensor[(), float32]) -> Tensor[(), float32] {
      %t0: Tensor[(n, 8), float32] = multiply(%p0, %p0)
      %t1: Tensor[(), float32] = mean(%t0, keepdims=0)
      %t2: Tensor[(), float32] = add(%t1, %p1)
      %t3: Tensor[(), float32] = sqrt(%t2)
      %t4: Tensor[(), float32] = multiply(%t3, %p2)
      return %t4
    }
    def @main(%x: Tensor[(n, 8), float32], %eps: Tensor[(), float32],
              %gain: Tensor[(), float32]) -> Tuple[Tensor[(), float32], Tensor[(n, 8), float32]] {
      %y: Tensor[(), float32] = call_fused(%x, %eps, %gain, func="fused_multiply_mean_add_sqrt_multiply")
      %m: Tensor[(), float32] = max(%x, keepdims=0)
      %d: Tensor[(n, 8), float32] = divide(%x, %m)
      %r: Tuple[Tensor[(), float32], Tensor[(n, 8), float32]] = (%y, %d)
      return %r
    }
  )");
}

TEST(GraphFuseOps, ReductionLimits) {
  // Softmax's exp has two uses (the sum and the divide): it is nobody's prologue. A 0-d sum takes
  // its prologue and its epilogue like any reduction. A reduction is not a prologue of another
  // reduction, and an anchor group is not a reduction's prologue.
  expect_pass(fuse, R"(
    def @main(%x: Tensor[(n, 8), float32], %w: Tensor[(8, 8), float32]) -> Tuple[Tensor[(n, 8), float32], Tensor[(), float32], Tensor[(n,), int64], Tensor[(n,), float32]] {
      %e: Tensor[(n, 8), float32] = exp(%x)
      %s: Tensor[(n, 1), float32] = sum(%e, axes=[1], keepdims=1)
      %y: Tensor[(n, 8), float32] = divide(%e, %s)
      %a: Tensor[(n, 8), float32] = abs(%x)
      %t: Tensor[(), float32] = sum(%a, keepdims=0)
      %z: Tensor[(), float32] = negative(%t)
      %mx: Tensor[(n, 1), float32] = max(%x, axes=[1], keepdims=1)
      %am: Tensor[(n,), int64] = argmax(%mx, axis=1, keepdims=0)
      %g: Tensor[(n, 8), float32] = matmul(%x, %w)
      %h: Tensor[(n, 8), float32] = relu(%g)
      %mn: Tensor[(n,), float32] = min(%h, axes=[1], keepdims=0)
      %r: Tuple[Tensor[(n, 8), float32], Tensor[(), float32], Tensor[(n,), int64], Tensor[(n,), float32]] = (%y, %z, %am, %mn)
      return %r
    }
  )",
              R"(
    def @fused_abs_sum_negative(%p0: Tensor[(n, 8), float32]) -> Tensor[(), float32] {
      %t0: Tensor[(n, 8), float32] = abs(%p0)
      %t1: Tensor[(), float32] = sum(%t0, keepdims=0)
      %t2: Tensor[(), float32] = negative(%t1)
      return %t2
    }
    def @fused_matmul_relu(%p0: Tensor[(n, 8), float32], %p1: Tensor[(8, 8), float32]) -> Tensor[(n, 8), float32] {
      %t0: Tensor[(n, 8), float32] = matmul(%p0, %p1)
      %t1: Tensor[(n, 8), float32] = relu(%t0)
      return %t1
    }
    def @main(%x: Tensor[(n, 8), float32], %w: Tensor[(8, 8), float32]) -> Tuple[Tensor[(n, 8), float32], Tensor[(), float32], Tensor[(n,), int64], Tensor[(n,), float32]] {
      %e: Tensor[(n, 8), float32] = exp(%x)
      %s: Tensor[(n, 1), float32] = sum(%e, axes=[1], keepdims=1)
      %y: Tensor[(n, 8), float32] = divide(%e, %s)
      %z: Tensor[(), float32] = call_fused(%x, func="fused_abs_sum_negative")
      %mx: Tensor[(n, 1), float32] = max(%x, axes=[1], keepdims=1)
      %am: Tensor[(n,), int64] = argmax(%mx, axis=1, keepdims=0)
      %h: Tensor[(n, 8), float32] = call_fused(%x, %w, func="fused_matmul_relu")
      %mn: Tensor[(n,), float32] = min(%h, axes=[1], keepdims=0)
      %r: Tuple[Tensor[(n, 8), float32], Tensor[(), float32], Tensor[(n,), int64], Tensor[(n,), float32]] = (%y, %z, %am, %mn)
      return %r
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
