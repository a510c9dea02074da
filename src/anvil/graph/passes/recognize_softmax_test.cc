// recognize_softmax: golden text in, text out — the spelled-out softmax with and without the max
// subtraction becomes nn.softmax; look-alikes (the exp also used elsewhere, a sum over two axes,
// a max over another axis) stay or keep their own max. Numerics against ONNX Runtime:
// tests/python/test_onnx_nn.py::test_spelled_out_softmax_becomes_one_op.
#include "anvil/graph/passes/recognize_softmax.h"

#include <gtest/gtest.h>

#include "anvil/graph/passes/pass_testing.h"

namespace anvil::graph::passes {
namespace {

using testing::expect_pass;

IRModule recognize(const IRModule& m) { return recognize_softmax(m); }

const char* kHeader = "def @main(%x: Tensor[(n, 4, 8), float32]) -> Tensor[(n, 4, 8), float32] {\n";

TEST(GraphRecognizeSoftmax, MaxSubtractedFormBecomesSoftmax) {
  expect_pass(recognize, std::string(kHeader) + R"(
      %m: Tensor[(n, 4, 1), float32] = max(%x, axes=[-1], keepdims=1)
      %d: Tensor[(n, 4, 8), float32] = subtract(%x, %m)
      %e: Tensor[(n, 4, 8), float32] = exp(%d)
      %s: Tensor[(n, 4, 1), float32] = sum(%e, axes=[-1], keepdims=1)
      %y: Tensor[(n, 4, 8), float32] = divide(%e, %s)
      return %y
    }
  )",
              std::string(kHeader) + R"(
      %y: Tensor[(n, 4, 8), float32] = nn.softmax(%x, axis=2)
      return %y
    }
  )");
}

TEST(GraphRecognizeSoftmax, PlainExpOverAnotherAxis) {
  expect_pass(recognize, std::string(kHeader) + R"(
      %e: Tensor[(n, 4, 8), float32] = exp(%x)
      %s: Tensor[(n, 1, 8), float32] = sum(%e, axes=[1], keepdims=1)
      %y: Tensor[(n, 4, 8), float32] = divide(%e, %s)
      return %y
    }
  )",
              std::string(kHeader) + R"(
      %y: Tensor[(n, 4, 8), float32] = nn.softmax(%x, axis=1)
      return %y
    }
  )");
}

TEST(GraphRecognizeSoftmax, LookAlikesStay) {
  // The exp is also an output.
  const std::string shared =
      "def @main(%x: Tensor[(n, 4, 8), float32]) -> Tuple[Tensor[(n, 4, 8), float32], Tensor[(n, 4, 8), float32]] {\n" +
      std::string(R"(
      %e: Tensor[(n, 4, 8), float32] = exp(%x)
      %s: Tensor[(n, 4, 1), float32] = sum(%e, axes=[-1], keepdims=1)
      %y: Tensor[(n, 4, 8), float32] = divide(%e, %s)
      %t: Tuple[Tensor[(n, 4, 8), float32], Tensor[(n, 4, 8), float32]] = (%y, %e)
      return %t
    }
  )");
  expect_pass(recognize, shared, shared);
  // A sum over two axes is not a softmax.
  const std::string two = std::string(kHeader) + R"(
      %e: Tensor[(n, 4, 8), float32] = exp(%x)
      %s: Tensor[(n, 1, 1), float32] = sum(%e, axes=[1, 2], keepdims=1)
      %y: Tensor[(n, 4, 8), float32] = divide(%e, %s)
      return %y
    }
  )";
  expect_pass(recognize, two, two);
  // A max over another axis than the sum's: the subtraction stays in front of the softmax.
  expect_pass(recognize, std::string(kHeader) + R"(
      %m: Tensor[(n, 1, 8), float32] = max(%x, axes=[1], keepdims=1)
      %d: Tensor[(n, 4, 8), float32] = subtract(%x, %m)
      %e: Tensor[(n, 4, 8), float32] = exp(%d)
      %s: Tensor[(n, 4, 1), float32] = sum(%e, axes=[2], keepdims=1)
      %y: Tensor[(n, 4, 8), float32] = divide(%e, %s)
      return %y
    }
  )",
              std::string(kHeader) + R"(
      %m: Tensor[(n, 1, 8), float32] = max(%x, axes=[1], keepdims=1)
      %d: Tensor[(n, 4, 8), float32] = subtract(%x, %m)
      %y: Tensor[(n, 4, 8), float32] = nn.softmax(%d, axis=2)
      return %y
    }
  )");
}

}  // namespace
}  // namespace anvil::graph::passes
