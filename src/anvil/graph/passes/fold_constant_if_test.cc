// fold_constant of graph `if`: a constant condition inlines the taken branch (its bindings folded
// in turn, nested ifs too); branches no call reaches leave the module; other ifs stay. Also the
// text form of if/loop (and check, the guard before specialised ifs) round-trips and the verifier
// checks their callees.
#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/graph/passes/fold_constant.h"
#include "anvil/graph/passes/pass_testing.h"

namespace anvil::graph::passes {
namespace {

using testing::expect_pass;
using testing::printed;

IRModule fold(const IRModule& m) { return fold_constant(m); }

TEST(GraphFoldConstantIf, AConstantConditionInlinesTheTakenBranch) {
  expect_pass(fold, R"(
    def @then_f(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %b: Tensor[(2,), float32] = add(%a, %a)
      return %b
    }
    def @else_f(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %b: Tensor[(2,), float32] = multiply(%a, %a)
      return %b
    }
    def @main(%x: Tensor[(2,), float32], %c: Tensor[(), bool]) -> Tensor[(2,), float32] {
      %y: Tensor[(2,), float32] = if(const[0], %x, then_func="then_f", else_func="else_f")
      %z: Tensor[(2,), float32] = if(%c, %y, then_func="then_f", else_func="else_f")
      return %z
    }
    const[0]: Tensor[(), bool] = False
  )", R"(
    def @else_f(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %b: Tensor[(2,), float32] = multiply(%a, %a)
      return %b
    }
    def @main(%x: Tensor[(2,), float32], %c: Tensor[(), bool]) -> Tensor[(2,), float32] {
      %b: Tensor[(2,), float32] = multiply(%x, %x)
      %z: Tensor[(2,), float32] = if(%c, %b, then_func="then_f", else_func="else_f")
      return %z
    }
    def @then_f(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %b: Tensor[(2,), float32] = add(%a, %a)
      return %b
    }
  )");
}

TEST(GraphFoldConstantIf, NestedConstantIfsFoldAwayAndTheirBranchesGo) {
  expect_pass(fold, R"(
    def @inner_then(%a: Tensor[(2,), float32]) -> Tuple[Tensor[(2,), float32], Tensor[(2,), float32]] {
      %b: Tensor[(2,), float32] = negative(%a)
      return (%b, %a)
    }
    def @inner_else(%a: Tensor[(2,), float32]) -> Tuple[Tensor[(2,), float32], Tensor[(2,), float32]] {
      return (%a, %a)
    }
    def @outer_then(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %t: Tuple[Tensor[(2,), float32], Tensor[(2,), float32]] = if(const[0], %a, then_func="inner_then", else_func="inner_else")
      %p: Tensor[(2,), float32] = %t.0
      %q: Tensor[(2,), float32] = %t.1
      %s: Tensor[(2,), float32] = subtract(%p, %q)
      return %s
    }
    def @outer_else(%a: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      return %a
    }
    def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %y: Tensor[(2,), float32] = if(const[0], %x, then_func="outer_then", else_func="outer_else")
      return %y
    }
    const[0]: Tensor[(), bool] = True
  )", R"(
    def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %b: Tensor[(2,), float32] = negative(%x)
      %s: Tensor[(2,), float32] = subtract(%b, %x)
      return %s
    }
  )");
}

TEST(GraphControlFlow, IfAndLoopPrintParseAndVerify) {
  const char* text = R"(
    def @body(%i: Tensor[(), int64], %c: Tensor[(), bool], %y: Tensor[(3,), float32], %x: Tensor[(3,), float32]) -> Tuple[Tensor[(), bool], Tensor[(3,), float32], Tensor[(3,), float32]] {
      %z: Tensor[(3,), float32] = add(%y, %x)
      return (%c, %z, %z)
    }
    def @main(%m: Tensor[(), int64], %c: Tensor[(), bool], %x: Tensor[(3,), float32]) -> Tuple[Tensor[(3,), float32], Tensor[(k, 3), float32]] {
      %l: Tuple[Tensor[(3,), float32], Tensor[(k, 3), float32]] = loop(%m, %c, %x, %x, body="body", num_carried=1)
      return %l
    }
  )";
  IRModule m = testing::verified(parse_module(text));
  EXPECT_EQ(printed(parse_module(printed(m))), printed(m));
  // A loop of a function that is not in the module, and an if whose branch returns another type.
  IRModule bad = m;
  bad.functions.erase("body");
  EXPECT_FALSE(well_formed_errors(bad).empty());
  IRModule bad_if = parse_module(R"(
    def @f(%a: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
      return %a
    }
    def @main(%c: Tensor[(), bool], %x: Tensor[(3,), float32]) -> Tensor[(3,), int32] {
      %y: Tensor[(3,), int32] = if(%c, %x, then_func="f", else_func="f")
      return %y
    }
  )");
  std::vector<std::string> errors = well_formed_errors(bad_if);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("a branch returns"), std::string::npos) << errors[0];
}

TEST(GraphControlFlow, CheckIsTypedAsItsFirstArgumentAndRoundTrips) {
  IRModule m = testing::verified(parse_module(R"(
    def @main(%a: Tensor[(2,), int32], %ok: Tensor[(), bool]) -> Tensor[(2,), int32] {
      %c: Tensor[(2,), int32] = check(%a, %ok, message="axes: not one of the compiled sets")
      return %c
    }
  )"));
  EXPECT_EQ(printed(parse_module(printed(m))), printed(m));
  // ok must be bool, and the message is required (the parser infers the type).
  auto parse_error = [](const char* body) {
    try {
      parse_module(body);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  EXPECT_NE(parse_error(R"(
    def @main(%a: Tensor[(2,), int32]) -> Tensor[(2,), int32] {
      %c: Tensor[(2,), int32] = check(%a, %a, message="m")
      return %c
    }
  )").find("check: argument 1 (ok) must be a bool tensor"), std::string::npos);
  EXPECT_NE(parse_error(R"(
    def @main(%a: Tensor[(2,), int32], %ok: Tensor[(), bool]) -> Tensor[(2,), int32] {
      %c: Tensor[(2,), int32] = check(%a, %ok)
      return %c
    }
  )").find("message"), std::string::npos);
}

}  // namespace
}  // namespace anvil::graph::passes
