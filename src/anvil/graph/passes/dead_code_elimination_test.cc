// dead_code_elimination: golden text.
#include "anvil/graph/passes/dead_code_elimination.h"

#include <gtest/gtest.h>

#include "anvil/graph/passes/pass_testing.h"

namespace anvil::graph::passes {
namespace {

using testing::expect_pass;

IRModule dce(const IRModule& m) { return dead_code_elimination(m); }

TEST(GraphDeadCodeElimination, DropsBindingsTheResultDoesNotReach) {
  expect_pass(dce, R"(
    def @main(%x: Tensor[(n, 4), float32], %unused: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] {
      %a: Tensor[(n, 4), float32] = relu(%x)
      %b: Tensor[(n, 4), float32] = exp(%a)        # dead, and so is what only it used
      %c: Tensor[(n, 4), float32] = tanh(%b)
      %p: Tuple[Tensor[(n, 2), float32], Tensor[(n, 2), float32]] = split(%a, axis=1, indices=[2])
      %d: Tensor[(n, 2), float32] = sigmoid(%p.1)  # live through a projection
      %e: Tensor[(n, 4), float32] = add(%a, %c)
      %f: Tensor[(n, 4), float32] = concat(%p.0, %d, axis=1)
      return %f
    }
  )",
              R"(
    def @main(%x: Tensor[(n, 4), float32], %unused: Tensor[(4,), float32]) -> Tensor[(n, 4), float32] {
      %a: Tensor[(n, 4), float32] = relu(%x)
      %p: Tuple[Tensor[(n, 2), float32], Tensor[(n, 2), float32]] = split(%a, axis=1, indices=[2])
      %d: Tensor[(n, 2), float32] = sigmoid(%p.1)
      %f: Tensor[(n, 4), float32] = concat(%p.0, %d, axis=1)
      return %f
    }
  )");
}

TEST(GraphDeadCodeElimination, ConstantsOnlyDeadCodeUsedDisappearWithIt) {
  expect_pass(dce, R"(
    def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %dead: Tensor[(2,), float32] = multiply(%x, const[0])
      %live: Tensor[(2,), float32] = add(%x, const[1])
      return %live
    }
    const[0]: Tensor[(2,), float32] = [3.5, -2.0]
    const[1]: Tensor[(2,), float32] = [0.25, 1.5]
  )",
              R"(
    def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %live: Tensor[(2,), float32] = add(%x, const[0])
      return %live
    }
    const[0]: Tensor[(2,), float32] = [0.25, 1.5]
  )");
}

TEST(GraphDeadCodeElimination, AFunctionWithNothingDeadIsReturnedAsItIs) {
  IRModule m = parse_module(R"(
    def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %y: Tensor[(2,), float32] = relu(%x)
      return %y
    }
  )");
  EXPECT_TRUE(dead_code_elimination(m).main().same_as(m.main()));
}

}  // namespace
}  // namespace anvil::graph::passes
