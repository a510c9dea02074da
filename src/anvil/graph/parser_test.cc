// Graph IR parser: print(parse(print(m))) == print(m) for built modules, and the errors.
#include "anvil/graph/parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/printer.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::graph {
namespace {

const PrintOptions kAll{-1, false};

Tensor random_f32(const std::vector<int64_t>& shape, std::mt19937& rng) {
  Tensor t = Tensor::empty(shape, DataType::float32());
  std::uniform_real_distribution<float> dist(-2, 2);
  auto* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

void expect_round_trip(const IRModule& m) {
  std::string text = to_string(m, kAll);
  IRModule back = parse_module(text);
  EXPECT_EQ(to_string(back, kAll), text);
}

// A conv net over a symbolic batch, with constants of several dtypes, tuples, shapes and attrs.
IRModule conv_module(uint32_t seed) {
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  ir::Var n = ir::size_var("n");
  BlockBuilder b;
  Var x = b.add_param("x", Type::tensor({n, 3, 9, 9}, DataType::float32()));
  Expr w = Constant::make(random_f32({4, 3, 3, 3}, rng));
  Expr c = b.emit_call("nn.conv2d", {x, w}, {{"strides", AttrValue::ints({2, 2})}, {"padding", AttrValue::ints({1, 1, 1, 1})}},
                       "conv");
  Expr r = b.emit_call("relu", {c}, {}, "r");
  Expr s = b.emit_call("add", {r, Constant::make(random_f32({1, 4, 1, 1}, rng))}, {}, "biased");
  Expr m = b.emit_call("nn.softmax", {s}, {{"axis", AttrValue(-1)}}, "sm");
  Expr flat = b.emit_call("reshape", {m, ShapeExpr::make({n, ir::int_imm(100)})}, {}, "flat");
  Expr parts = b.emit_call("split", {flat}, {{"axis", AttrValue(1)}, {"indices", AttrValue::ints({30})}}, "parts");
  Expr shp = b.emit_call("shape_of", {x}, {}, "shp");
  Expr st = b.emit_call("shape_to_tensor", {shp}, {}, "st");
  Tensor idx = Tensor::empty({4}, DataType::int64());
  for (int64_t i = 0; i < 4; ++i) static_cast<int64_t*>(idx.data())[i] = (i - 2) * (int64_t{1} << 40) - 7;
  Expr sum = b.emit_call("add", {st, Constant::make(idx)}, {}, "sum");
  Expr out = b.emit(Tuple::make({TupleGetItem::make(parts, 1), sum, Tuple::make({x})}), "out");
  IRModule mod;
  mod.functions["main"] = b.finish(out);
  return mod;
}

TEST(GraphParser, RoundTripsABuiltModuleWithConstantsAndSymbolicDims) {
  IRModule m = conv_module(11);
  std::string text = to_string(m, kAll);
  EXPECT_NE(text.find("Tensor[(n, 4, 5, 5), float32] = nn.conv2d(%x, const[0], padding=[1, 1, 1, 1], strides=[2, 2])"),
            std::string::npos)
      << text;
  expect_round_trip(m);
}

TEST(GraphParser, OneSymbolicNameIsOneSizeVarAcrossTheModule) {
  IRModule m = parse_module(R"(
    def @f(%a: Tensor[(n, (n + 1) // 2), float32]) -> Tensor[(n, (n + 1) // 2), float32] {
      return %a
    }
    def @g(%a: Tensor[(select(n < 4 and not m == 2, n, 4), max(n - -1, 0) % 3, int32(int64(7))), int8]) -> Shape[1] {
      %s: Shape[1] = shape(truncdiv(m, 2) * (n - (m - 1)))
      return %s
    }
    def @main(%x: Tensor[(n * 2, min(n, 4) - 1), float16], %y: Tensor[(n * 2, 1), float16]) -> Tensor[(n * 2, min(n, 4) - 1), float16] {
      %z: Tensor[(n * 2, min(n, 4) - 1), float16] = multiply(%x, %y)
      return %z
    }
  )");
  const auto* a = m.function("f").params()[0].type().dim(0).as<ir::VarNode>();
  const auto* mul = m.main().params()[0].type().dim(0).as<ir::MulNode>();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->a().get(), a);
  EXPECT_EQ(to_string(m.main().params()[0].type()), "Tensor[(n * 2, min(n, 4) - 1), float16]");
  expect_round_trip(m);
}

// A run-time shape value's type names its fresh Vars, and later types use the same Vars.
TEST(GraphParser, ShapeTypesWithValuesRoundTripAndShareTheirVars) {
  IRModule m = parse_module(R"(
    def @main(%x: Tensor[(6,), float32], %t: Tensor[(2,), int64]) -> Tensor[(a, b), float32] {
      %s: Shape[(a, b)] = reshape_target(%x, %t, allowzero=0)
      %y: Tensor[(a, b), float32] = reshape(%x, %s)
      return %y
    }
  )");
  const Binding& s = m.main().bindings()[0];
  ASSERT_NE(s.var.type().shape_values(), nullptr);
  EXPECT_EQ(to_string(s.var.type()), "Shape[(a, b)]");
  EXPECT_EQ((*s.var.type().shape_values())[0].get(), m.main().bindings()[1].var.type().dim(0).get());
  EXPECT_FALSE(type_equal(s.var.type(), Type::shape(2)));
  EXPECT_EQ(to_string(Type::shape({ir::int_imm(3)})), "Shape[(3,)]");
  expect_round_trip(m);
}

TEST(GraphParser, ReadsEveryConstantDtypeAndScalars) {
  const char* text =
      "def @main() -> Tuple[Tensor[(), float32], Tensor[(3,), bool], Tensor[(2,), float16], Tensor[(2, 1), uint8], "
      "Tensor[(1,), int8], Tensor[(0,), int32], Tensor[(2,), float64]] {\n"
      "  return (const[0], const[1], const[2], const[3], const[4], const[5], const[6])\n"
      "}\n"
      "const[0]: Tensor[(), float32] = -0.25\n"
      "const[1]: Tensor[(3,), bool] = [True, False, True]\n"
      "const[2]: Tensor[(2,), float16] = [1.5, -inf]\n"
      "const[3]: Tensor[(2, 1), uint8] = [0, 255]\n"
      "const[4]: Tensor[(1,), int8] = [-128]\n"
      "const[5]: Tensor[(0,), int32] = []\n"
      "const[6]: Tensor[(2,), float64] = [0.1, 1e+300]\n";
  IRModule m = parse_module(text);
  EXPECT_EQ(to_string(m, kAll), text);
}

TEST(GraphParser, AttributesOfEveryKindReadBack) {
  const char* text =
      "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), int32] {\n"
      "  %a: Tensor[(2, 3), float32] = clip(%x, max=6.0, min=0.0)\n"
      "  %b: Tensor[(2, 3), float32] = gelu(%a, approximate=\"tanh\")\n"
      "  %c: Tensor[(2, 3), int32] = cast(%b, dtype=int32)\n"
      "  return %c\n"
      "}\n";
  EXPECT_EQ(to_string(parse_module(text), kAll), text);
}

void expect_parse_error(const std::string& text, const std::string& message, ErrorKind kind = ErrorKind::kValue) {
  try {
    parse_module(text);
    ADD_FAILURE() << "parsed: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(GraphParser, ErrorsNameTheLineColumnAndWhatWasExpected) {
  expect_parse_error("def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n  return %y\n}\n",
                     "line 2:10: %y is not a parameter or an earlier binding");
  expect_parse_error("def @main(%x: Tensor[(2,), float32] -> Tensor[(2,), float32] {}",
                     "line 1:37: expected ')', got '-> Tensor[(2,), float32");
  expect_parse_error("def @main(%x: Tensor[(2,), flot32]) -> Object {}", "line 1:28: expected a dtype");
  expect_parse_error("def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {\n  %y: Tensor[(2,), float32] = "
                     "no_such(%x)\n  return %y\n}",
                     "line 2:31: unknown graph operator 'no_such'");
  expect_parse_error("def @main() -> Object {\n  return const[0]\n}\n", "const[0] is not listed");
  expect_parse_error("const[0]: Tensor[(2,), float32] = <2 values, fnv1a 0x1>\n", "const[0] is elided");
  expect_parse_error("const[0]: Tensor[(2,), float32] = [1.0]\n", "expected ','");
  expect_parse_error("const[0]: Tensor[(1,), uint8] = [256]\n", "256 does not fit uint8");
  expect_parse_error("def @main() -> Object {\n  return (\n}", "line 3:1: expected an expression");
  expect_parse_error("def @main() -> Object {", "this '{' is never closed");
  expect_parse_error("wat", "line 1:1: expected 'def @name(...)' or 'const[i]: ...', got 'wat'");
  expect_parse_error("def @main(%x: Tensor[(2,), float32], %x: Tensor[(2,), float32]) -> Object {\n  return %x\n}",
                     "line 1:38: %x is bound twice");
  std::string deep = "def @main() -> ";
  for (int i = 0; i < 5000; ++i) deep += "Tuple[";
  expect_parse_error(deep + " {}", "expressions nest deeper than 256 levels");
  expect_parse_error("const[0]: Tensor[(100000, 100000), float32] = [1.0]\n", "declares 10000000000 values but the text is shorter");
  // A comparison is not a dimension (fuzz_graph_parser: the type node leaked when this threw).
  expect_parse_error("def @main(%x: Tensor[(n >= 2, 3), float32]) -> Object {\n  return %x\n}",
                     "has dtype bool, expected an integer");
}

TEST(GraphParser, APrintedTypeThatDiffersFromTheInferredOneIsAnError) {
  expect_parse_error("def @main(%x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {\n"
                     "  %y: Tensor[(n, 5), float32] = relu(%x)\n  return %y\n}\n",
                     "line 2:3: %y is declared Tensor[(n, 5), float32] but its value has type Tensor[(n, 4), float32]");
  expect_parse_error("def @main(%x: Tensor[(n, 4), float32]) -> Tensor[(n, 3), float32] {\n  return %x\n}\n",
                     "line 1:43: @main is declared to return Tensor[(n, 3), float32] but returns Tensor[(n, 4), float32]");
  // Type inference errors keep their kind and gain the position.
  expect_parse_error("def @main(%x: Tensor[(2, 4), float32], %y: Tensor[(3, 4), float32]) -> Object {\n"
                     "  %z: Tensor[(2, 4), float32] = add(%x, %y)\n  return %z\n}\n",
                     "graph parse: line 2:33: add: ", ErrorKind::kValue);
}

TEST(GraphParser, CommentsAndTupleProjectionsChain) {
  IRModule m = parse_module(R"(
    # a comment before
    def @main(%x: Tensor[(6,), float32]) -> Tensor[(2,), float32] {
      %p: Tuple[Tensor[(2,), float32], Tensor[(4,), float32]] = split(%x, axis=0, indices=[2])  # trailing
      %q: Tuple[Tuple[Tensor[(2,), float32], Tensor[(4,), float32]]] = (%p,)
      return %q.0.0
    }
  )");
  EXPECT_EQ(to_string(m.main().result().type()), "Tensor[(2,), float32]");
}

// What the fuzz target checks, on seeded random edits of a valid text: every edit either fails
// with an anvil::Error or parses to a text that prints and parses back to itself.
TEST(GraphParser, RandomEditsFailCleanlyOrReachAFixedPoint) {
  const std::string base = to_string(conv_module(5), kAll);
  uint32_t seed = 977;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  const std::string alphabet = "()[],%:=.-+*/ 0123456789acnx\"#{}";
  int parsed = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::string text = base;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text.erase(at, 1 + rng() % 4); break;
        case 1: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default: text[at] = alphabet[rng() % alphabet.size()]; break;
      }
    }
    std::string printed;
    try {
      printed = to_string(parse_module(text), kAll);
    } catch (const Error&) {
      continue;
    }
    ++parsed;
    EXPECT_EQ(to_string(parse_module(printed), kAll), printed) << "edited text:\n" << text;
  }
  std::printf("%d of 1500 edited texts parsed\n", parsed);
  EXPECT_GT(parsed, 10);  // some edits (inside constants, names) keep the text valid
}

}  // namespace
}  // namespace anvil::graph
