// Graph IR verifier: each rule reported with the function and binding it concerns.
#include "anvil/graph/verify.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/parser.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::graph {
namespace {

Type f32(std::vector<PrimExpr> shape) { return Type::tensor(std::move(shape), DataType::float32()); }

std::string joined(const std::vector<std::string>& errors) {
  std::string s;
  for (const auto& e : errors) s += e + "\n";
  return s;
}

IRModule module_of(Function f) {
  IRModule m;
  m.functions["main"] = std::move(f);
  return m;
}

TEST(GraphVerify, ParsedAndBuiltModulesAreWellFormed) {
  IRModule m = parse_module(R"(
    def @main(%x: Tensor[(n, 4), float32]) -> Tuple[Tensor[(n, 4), float32], Shape[2]] {
      %y: Tensor[(n, 4), float32] = relu(%x)
      %s: Shape[2] = shape_of(%y)
      %t: Tuple[Tensor[(n, 4), float32], Shape[2]] = (%y, %s)
      return %t
    }
  )");
  EXPECT_EQ(joined(well_formed_errors(m)), "");
  EXPECT_NO_THROW(check_well_formed(m, "parse"));
}

TEST(GraphVerify, ScopingRulesAreReportedPerBinding) {
  ir::Var n = ir::size_var("n");
  Var x = Var::make("x", f32({n, 4}));
  Var y = Var::make("y", f32({n, 4}));
  Var later = Var::make("later", f32({n, 4}));
  Expr relu_later = Call::make("relu", {later}, {}, f32({n, 4}));
  Function f = Function::make({x}, {{y, relu_later}, {later, Call::make("relu", {x}, {}, f32({n, 4}))}, {y, x}}, y);
  std::string e = joined(well_formed_errors(module_of(f)));
  EXPECT_NE(e.find("@main, binding 0 (%y): %later is used but is not a parameter or an earlier binding"), std::string::npos) << e;
  EXPECT_NE(e.find("@main, binding 2 (%y): %y is bound twice"), std::string::npos) << e;
}

TEST(GraphVerify, CallsAreCheckedAgainstTheOperatorTable) {
  ir::Var n = ir::size_var("n");
  Var x = Var::make("x", f32({n, 4}));
  Expr wrong_type = Call::make("relu", {x}, {}, f32({n, 5}));
  Expr bad_arity = Call::make("relu", {x, x}, {}, f32({n, 4}));
  Expr unknown = Call::make("no_such_op", {x}, {}, f32({n, 4}));
  Expr tir = Call::make(kCallTIR, {x}, {{"func", "fused_relu"}}, f32({n, 4}));
  Var a = Var::make("a", f32({n, 5})), b = Var::make("b", f32({n, 4})), c = Var::make("c", f32({n, 4}));
  Var d = Var::make("d", f32({n, 4})), g = Var::make("g", f32({n, 3}));
  Function f = Function::make({x}, {{a, wrong_type}, {b, bad_arity}, {c, unknown}, {d, tir}, {g, x}}, d);
  std::string e = joined(well_formed_errors(module_of(f)));
  EXPECT_NE(e.find("binding 0 (%a): the call of relu is typed Tensor[(n, 5), float32] but its operator infers "
                   "Tensor[(n, 4), float32]"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("binding 1 (%b): the call of relu does not type-check: relu: expected 1 arguments but got 2"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("binding 2 (%c): call of 'no_such_op', not a registered operator"), std::string::npos) << e;
  EXPECT_NE(e.find("binding 3 (%d): call_tir of 'fused_relu', not a PrimFunc of the module"), std::string::npos) << e;
  EXPECT_NE(e.find("binding 4 (%g): the var is typed Tensor[(n, 3), float32] but its value has type Tensor[(n, 4), "
                   "float32]"),
            std::string::npos)
      << e;
}

TEST(GraphVerify, DataDependentCallsAreCheckedStructurally) {
  // nonzero/dynamic_slice are typed with fresh dims by the importer: the verifier checks rank,
  // dtype and that the data-dependent dims are Vars, the others the input's.
  ir::Var n = ir::size_var("n"), k = ir::size_var("k"), s = ir::size_var("s");
  Var x = Var::make("x", f32({n, 4}));
  Var idx = Var::make("idx", Type::tensor(std::vector<int64_t>{1}, DataType::int64()));
  Type nz_type = Type::tensor({ir::int_imm(2), k}, DataType::int64());
  Var good_nz = Var::make("good_nz", nz_type), bad_nz = Var::make("bad_nz", Type::tensor(std::vector<int64_t>{2, 3}, DataType::int64()));
  Var good_sl = Var::make("good_sl", f32({n, s})), bad_sl = Var::make("bad_sl", f32({s, s}));
  Attrs axis1{{"axes", AttrValue::ints({1})}};
  Function f = Function::make(
      {x, idx},
      {{good_nz, Call::make(kNonZero, {x}, {}, nz_type)},
       {bad_nz, Call::make(kNonZero, {x}, {}, bad_nz.type())},
       {good_sl, Call::make(kDynamicSlice, {x, idx, idx, idx}, axis1, f32({n, s}))},
       {bad_sl, Call::make(kDynamicSlice, {x, idx, idx, idx}, axis1, f32({s, s}))}},
      good_sl);
  std::string e = joined(well_formed_errors(module_of(f)));
  EXPECT_EQ(e.find("binding 0"), std::string::npos) << e;
  EXPECT_NE(e.find("binding 1 (%bad_nz): nonzero of a rank-2 tensor must be typed Tensor[(2, n), int64] with n a Var"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("binding 2"), std::string::npos) << e;
  EXPECT_NE(e.find("binding 3 (%bad_sl): dynamic_slice: dim 0 must be the input's"), std::string::npos) << e;
}

TEST(GraphVerify, UnknownRankIsAllowedOnlyStraightAfterImport) {
  Var x = Var::make("x", Type::tensor_any_rank(DataType::float32()));
  Function f = Function::make({x}, {}, x);
  EXPECT_TRUE(well_formed_errors(module_of(f), VerifyOptions{true}).empty());
  std::string e = joined(well_formed_errors(module_of(f)));
  EXPECT_NE(e.find("@main, parameters: %x has type Tensor[?, float32]: a tensor of unknown rank after import"),
            std::string::npos)
      << e;
}

TEST(GraphVerify, CheckWellFormedThrowsAnInternalErrorNamingTheStage) {
  ir::Var n = ir::size_var("n");
  Var x = Var::make("x", f32({n, 4}));
  Var y = Var::make("y", f32({n, 4}));
  Function f = Function::make({x}, {}, y);
  try {
    check_well_formed(module_of(f), "fold_constant");
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(err.what()).find("graph IR after fold_constant is not well formed:\n  @main, result: %y is used"),
              std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace anvil::graph
