// Shared helpers for unit tests: seeded random tensors (the seed is printed so a failure can be
// replayed), and the message of the anvil::Error a call throws.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "anvil/base/error.h"
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

// A CPU float32 tensor of uniform values in [lo, hi) drawn from rng.
inline Tensor random_f32(const std::vector<int64_t>& shape, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  std::uniform_real_distribution<float> dist(lo, hi);
  auto* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

// The message of the anvil::Error that fn throws (its kind into *kind when given); a test
// failure and "" when it throws nothing.
inline std::string error_of(const std::function<void()>& fn, ErrorKind* kind = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace anvil::testing
