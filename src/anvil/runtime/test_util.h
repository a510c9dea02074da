// Shared helpers for runtime unit tests: seeded random tensors (the seed is printed so a failure
// can be replayed).
#pragma once

#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "anvil/runtime/tensor.h"

namespace anvil::testing {

inline std::mt19937& rng() {
  static std::mt19937 gen([] {
    unsigned seed = 20261129;
    std::cout << "[ seed ] " << seed << std::endl;
    return seed;
  }());
  return gen;
}

// A CPU float32 tensor of uniform values in [-1, 1) (never all zeros).
inline Tensor random_float_tensor(std::initializer_list<int64_t> shape) {
  Tensor t = Tensor::empty(shape, DataType::float32());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng());
  return t;
}

}  // namespace anvil::testing
