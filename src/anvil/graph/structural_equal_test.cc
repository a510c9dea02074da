// Graph IR structural equality: names never matter; positions, values and dims do.
#include "anvil/graph/structural_equal.h"

#include <gtest/gtest.h>

#include "anvil/graph/parser.h"

namespace anvil::graph {
namespace {

const char* kBase = R"(
  def @main(%x: Tensor[(n, 2), float32], %w: Tensor[(2, 3), float32]) -> Tensor[(n, 3), float32] {
    %y: Tensor[(n, 3), float32] = matmul(%x, %w)
    %z: Tensor[(n, 3), float32] = add(%y, const[0])
    return %z
  }
  const[0]: Tensor[(3,), float32] = [0.5, -1.0, 2.0]
)";

bool equal_text(const std::string& a, const std::string& b) { return structural_equal(parse_module(a), parse_module(b)); }

TEST(GraphStructuralEqual, NamesOfVarsAndSizeVarsDoNotMatter) {
  EXPECT_TRUE(equal_text(kBase, kBase));
  EXPECT_TRUE(equal_text(kBase, R"(
    def @main(%a: Tensor[(batch, 2), float32], %b: Tensor[(2, 3), float32]) -> Tensor[(batch, 3), float32] {
      %c: Tensor[(batch, 3), float32] = matmul(%a, %b)
      %d: Tensor[(batch, 3), float32] = add(%c, const[0])
      return %d
    }
    const[0]: Tensor[(3,), float32] = [0.5, -1.0, 2.0]
  )"));
}

TEST(GraphStructuralEqual, ConstantsCompareByValue) {
  std::string other = kBase;
  other.replace(other.find("-1.0"), 4, "-1.5");
  EXPECT_FALSE(equal_text(kBase, other));
  // Two parses give two tensors: equal values are enough.
  EXPECT_TRUE(structural_equal(parse_module(kBase).main(), parse_module(kBase).main()));
}

TEST(GraphStructuralEqual, SwappedUsesAndSizeVarsThatDoNotMapOneToOneDiffer) {
  EXPECT_FALSE(equal_text(R"(
    def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %z: Tensor[(2,), float32] = subtract(%x, %y)
      return %z
    })",
                          R"(
    def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %z: Tensor[(2,), float32] = subtract(%y, %x)
      return %z
    })"));
  EXPECT_FALSE(equal_text("def @main(%x: Tensor[(n, n), float32]) -> Tensor[(n, n), float32] {\n return %x\n}",
                          "def @main(%x: Tensor[(n, m), float32]) -> Tensor[(n, m), float32] {\n return %x\n}"));
  EXPECT_FALSE(equal_text("def @main(%x: Tensor[(n, m), float32]) -> Tensor[(n, m), float32] {\n return %x\n}",
                          "def @main(%x: Tensor[(n, n), float32]) -> Tensor[(n, n), float32] {\n return %x\n}"));
  // One mapping across a module's functions: n in @f and @main is one size var on each side.
  EXPECT_FALSE(equal_text("def @f(%x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {\n return %x\n}\n"
                          "def @main(%x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {\n return %x\n}",
                          "def @f(%x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {\n return %x\n}\n"
                          "def @main(%x: Tensor[(m,), float32]) -> Tensor[(m,), float32] {\n return %x\n}"));
}

TEST(GraphStructuralEqual, AttributesAndFunctionNamesMatter) {
  const char* a = "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
                  "  %y: Tensor[(2, 3), float32] = nn.softmax(%x, axis=1)\n  return %y\n}";
  const char* b = "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
                  "  %y: Tensor[(2, 3), float32] = nn.softmax(%x, axis=-1)\n  return %y\n}";
  const char* c = "def @other(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
                  "  %y: Tensor[(2, 3), float32] = nn.softmax(%x, axis=1)\n  return %y\n}";
  EXPECT_FALSE(equal_text(a, b));
  EXPECT_FALSE(equal_text(a, c));
  EXPECT_TRUE(structural_equal(parse_module(a).main(), parse_module(c).function("other")));
}

}  // namespace
}  // namespace anvil::graph
