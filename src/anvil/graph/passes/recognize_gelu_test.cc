// recognize_gelu: golden text in, text out — torch.onnx's exact GELU (divide or multiply scale,
// the 0.5 on either product) and the tanh approximation (power or multiplied cube) become one
// gelu call; a GELU-like chain with a wrong constant or a shared intermediate stays. Numerics:
// tests/python/test_onnx_nn.py::test_spelled_out_gelu_becomes_one_op (against ONNX Runtime).
#include "anvil/graph/passes/recognize_gelu.h"

#include <gtest/gtest.h>

#include "anvil/graph/passes/pass_testing.h"

namespace anvil::graph::passes {
namespace {

using testing::expect_pass;

IRModule recognize(const IRModule& m) { return recognize_gelu(m); }

const char* kHeader = "def @main(%x: Tensor[(n, 8), float32]) -> Tensor[(n, 8), float32] {\n";
const std::string kGelu = std::string(kHeader) + R"(
      %y: Tensor[(n, 8), float32] = gelu(%x, approximate="none")
      return %y
    }
  )";

TEST(GraphRecognizeGelu, TorchExactFormBecomesGelu) {
  expect_pass(recognize, std::string(kHeader) + R"(
      %d: Tensor[(n, 8), float32] = divide(%x, const[0])
      %e: Tensor[(n, 8), float32] = erf(%d)
      %a: Tensor[(n, 8), float32] = add(%e, const[1])
      %m: Tensor[(n, 8), float32] = multiply(%x, %a)
      %y: Tensor[(n, 8), float32] = multiply(%m, const[2])
      return %y
    }
    const[0]: Tensor[(), float32] = 1.4142135381698608
    const[1]: Tensor[(), float32] = 1.0
    const[2]: Tensor[(), float32] = 0.5
  )", kGelu);
}

TEST(GraphRecognizeGelu, HalfFirstAndAMultipliedScale) {
  expect_pass(recognize, std::string(kHeader) + R"(
      %h: Tensor[(n, 8), float32] = multiply(const[2], %x)
      %d: Tensor[(n, 8), float32] = multiply(%x, const[0])
      %e: Tensor[(n, 8), float32] = erf(%d)
      %a: Tensor[(n, 8), float32] = add(const[1], %e)
      %y: Tensor[(n, 8), float32] = multiply(%a, %h)
      return %y
    }
    const[0]: Tensor[(), float32] = 0.7071067690849304
    const[1]: Tensor[(), float32] = 1.0
    const[2]: Tensor[(), float32] = 0.5
  )", kGelu);
}

TEST(GraphRecognizeGelu, TanhApproximationWithPowerOrMultipliedCube) {
  const std::string after = std::string(kHeader) + R"(
      %y: Tensor[(n, 8), float32] = gelu(%x, approximate="tanh")
      return %y
    }
  )";
  const std::string body = R"(
      %k: Tensor[(n, 8), float32] = multiply(%c, const[1])
      %s: Tensor[(n, 8), float32] = add(%x, %k)
      %t0: Tensor[(n, 8), float32] = multiply(%s, const[2])
      %t: Tensor[(n, 8), float32] = tanh(%t0)
      %a: Tensor[(n, 8), float32] = add(%t, const[3])
      %h: Tensor[(n, 8), float32] = multiply(%x, const[4])
      %y: Tensor[(n, 8), float32] = multiply(%h, %a)
      return %y
    }
    const[0]: Tensor[(), float32] = 3.0
    const[1]: Tensor[(), float32] = 0.044714998453855515
    const[2]: Tensor[(), float32] = 0.7978845834732056
    const[3]: Tensor[(), float32] = 1.0
    const[4]: Tensor[(), float32] = 0.5
  )";
  expect_pass(recognize, std::string(kHeader) + "      %c: Tensor[(n, 8), float32] = power(%x, const[0])\n" + body, after);
  std::string multiplied = std::string(kHeader) + R"(
      %q: Tensor[(n, 8), float32] = multiply(%x, %x)
      %c: Tensor[(n, 8), float32] = multiply(%q, %x)
)" + body;
  multiplied.replace(multiplied.find("    const[0]: Tensor[(), float32] = 3.0\n"), 40, "");
  for (int k = 1; k <= 4; ++k) {  // the constants renumber from 0 without const[0]
    std::string from = "const[" + std::to_string(k) + "]", to = "const[" + std::to_string(k - 1) + "]";
    for (size_t at = multiplied.find(from); at != std::string::npos; at = multiplied.find(from)) multiplied.replace(at, from.size(), to);
  }
  expect_pass(recognize, multiplied, after);
}

TEST(GraphRecognizeGelu, LookAlikesStay) {
  // 0.6 is not 0.5.
  const std::string wrong = std::string(kHeader) + R"(
      %d: Tensor[(n, 8), float32] = divide(%x, const[0])
      %e: Tensor[(n, 8), float32] = erf(%d)
      %a: Tensor[(n, 8), float32] = add(%e, const[1])
      %m: Tensor[(n, 8), float32] = multiply(%x, %a)
      %y: Tensor[(n, 8), float32] = multiply(%m, const[2])
      return %y
    }
    const[0]: Tensor[(), float32] = 1.4142135381698608
    const[1]: Tensor[(), float32] = 1.0
    const[2]: Tensor[(), float32] = 0.6000000238418579
  )";
  expect_pass(recognize, wrong, wrong);
  // erf(x / sqrt 2) is also an output.
  const std::string shared = std::string(kHeader).replace(std::string(kHeader).find("-> Tensor[(n, 8), float32]"), 26,
                                                            "-> Tuple[Tensor[(n, 8), float32], Tensor[(n, 8), float32]]") + R"(
      %d: Tensor[(n, 8), float32] = divide(%x, const[0])
      %e: Tensor[(n, 8), float32] = erf(%d)
      %a: Tensor[(n, 8), float32] = add(%e, const[1])
      %m: Tensor[(n, 8), float32] = multiply(%x, %a)
      %y: Tensor[(n, 8), float32] = multiply(%m, const[2])
      %r: Tuple[Tensor[(n, 8), float32], Tensor[(n, 8), float32]] = (%y, %e)
      return %r
    }
    const[0]: Tensor[(), float32] = 1.4142135381698608
    const[1]: Tensor[(), float32] = 1.0
    const[2]: Tensor[(), float32] = 0.5
  )";
  expect_pass(recognize, shared, shared);
}

}  // namespace
}  // namespace anvil::graph::passes
