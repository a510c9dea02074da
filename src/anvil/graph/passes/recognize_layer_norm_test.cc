// recognize_layer_norm: golden text in, text out — the spelled-out layer norm (power or
// multiply square, with and without gamma/beta, operands in either order) becomes nn.layer_norm;
// graphs that only look alike (a value used outside the pattern, a mean over a leading axis)
// stay. That the rewritten graph computes what the original did is checked end to end against
// ONNX Runtime by tests/python/test_onnx_nn.py::test_spelled_out_layer_norm_becomes_one_kernel.
#include "anvil/graph/passes/recognize_layer_norm.h"

#include <gtest/gtest.h>

#include "anvil/graph/passes/pass_testing.h"

namespace anvil::graph::passes {
namespace {

using testing::expect_pass;

IRModule recognize(const IRModule& m) { return recognize_layer_norm(m); }

const char* kHeader = "def @main(%x: Tensor[(n, 3, 4), float32]) -> Tensor[(n, 3, 4), float32] {\n";

// The torch.onnx form: mean, subtract, power 2, mean, add eps, sqrt, divide, then gamma and beta.
const char* kTorchForm = R"(
      %m: Tensor[(n, 3, 1), float32] = mean(%x, axes=[-1], keepdims=1)
      %d: Tensor[(n, 3, 4), float32] = subtract(%x, %m)
      %p: Tensor[(n, 3, 4), float32] = power(%d, const[0])
      %v: Tensor[(n, 3, 1), float32] = mean(%p, axes=[-1], keepdims=1)
      %e: Tensor[(n, 3, 1), float32] = add(%v, const[1])
      %s: Tensor[(n, 3, 1), float32] = sqrt(%e)
      %q: Tensor[(n, 3, 4), float32] = divide(%d, %s)
      %g: Tensor[(n, 3, 4), float32] = multiply(%q, const[2])
      %y: Tensor[(n, 3, 4), float32] = add(%g, const[3])
)";
const char* kConstants = R"(
    const[0]: Tensor[(), float32] = 2.0
    const[1]: Tensor[(), float32] = 0.5
    const[2]: Tensor[(4,), float32] = [1.0, 2.0, 3.0, 4.0]
    const[3]: Tensor[(4,), float32] = [0.5, 0.25, 0.0, -1.0]
)";

TEST(GraphRecognizeLayerNorm, TheTorchExportBecomesOneLayerNorm) {
  expect_pass(recognize, std::string(kHeader) + kTorchForm + "      return %y\n    }" + kConstants,
              std::string(kHeader) + R"(
      %y: Tensor[(n, 3, 4), float32] = nn.layer_norm(%x, const[0], const[1], axis=2, epsilon=0.5)
      return %y
    }
    const[0]: Tensor[(4,), float32] = [1.0, 2.0, 3.0, 4.0]
    const[1]: Tensor[(4,), float32] = [0.5, 0.25, 0.0, -1.0]
  )");
}

TEST(GraphRecognizeLayerNorm, MultiplySquareOperandsInEitherOrderAndNoAffine) {
  expect_pass(recognize, std::string(kHeader) + R"(
      %m: Tensor[(n, 1, 1), float32] = mean(%x, axes=[1, 2], keepdims=1)
      %d: Tensor[(n, 3, 4), float32] = subtract(%x, %m)
      %p: Tensor[(n, 3, 4), float32] = multiply(%d, %d)
      %v: Tensor[(n, 1, 1), float32] = mean(%p, axes=[2, -2], keepdims=1)
      %e: Tensor[(n, 1, 1), float32] = add(const[0], %v)
      %s: Tensor[(n, 1, 1), float32] = sqrt(%e)
      %q: Tensor[(n, 3, 4), float32] = divide(%d, %s)
      return %q
    }
    const[0]: Tensor[(1,), float32] = [0.001]
  )",
              std::string(kHeader) + R"(
      %q: Tensor[(n, 3, 4), float32] = nn.layer_norm(%x, const[0], axis=1, epsilon=0.0010000000474974513)
      return %q
    }
    const[0]: Tensor[(3, 4), float32] = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
  )");
}

TEST(GraphRecognizeLayerNorm, LookAlikesStay) {
  // The centred value is also an output: the pattern's intermediates must feed only the pattern.
  std::string shared = std::string(kHeader) + kTorchForm + R"(
      %t: Tuple[Tensor[(n, 3, 4), float32], Tensor[(n, 3, 4), float32]] = (%y, %d)
      return %t
    })" + kConstants;
  shared.replace(shared.find("-> Tensor[(n, 3, 4), float32]"), 29,
                 "-> Tuple[Tensor[(n, 3, 4), float32], Tensor[(n, 3, 4), float32]]");
  expect_pass(recognize, shared, shared);
  // Statistics over a leading axis are not a layer norm.
  std::string leading = std::string(kHeader) + kTorchForm + "      return %y\n    }" + kConstants;
  for (size_t at = leading.find("axes=[-1]"); at != std::string::npos; at = leading.find("axes=[-1]"))
    leading.replace(at, 9, "axes=[1]");
  for (size_t at = leading.find("(n, 3, 1)"); at != std::string::npos; at = leading.find("(n, 3, 1)"))
    leading.replace(at, 9, "(n, 1, 4)");
  expect_pass(recognize, leading, leading);
}

}  // namespace
}  // namespace anvil::graph::passes
