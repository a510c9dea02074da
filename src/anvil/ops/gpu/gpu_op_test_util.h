// Test fixture for the gpu family's operator tests (ops_gpu_test.cc, ops_gpu_nn_test.cc): a graph
// call (lower_call) or a fused group written as graph text (lower_fused) lowered for target
// "vulkan", built by pipeline::build and run on the first Vulkan device (lavapipe in CI) from
// host tensors, the results back as doubles. Skips, saying why, without a device; fails under
// CI=true (ANVIL_SKIP_WITHOUT_VULKAN).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "anvil/graph/attrs.h"
#include "anvil/graph/parser.h"
#include "anvil/ops/op_test_util.h"
#include "anvil/runtime/device/vulkan/vulkan_test_util.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/registry.h"

namespace anvil::ops::gpu_testing {

using graph::AttrValue;
using graph::Attrs;
using graph::Type;
using ir::DataType;
using testing::numel;
using testing::random_values;

inline constexpr uint32_t kSeed = 20261207;

class GpuOps : public ::testing::Test {
 protected:
  void SetUp() override {
    register_runtime_functions();
    ANVIL_SKIP_WITHOUT_VULKAN();
    std::cout << "[ seed ] " << kSeed << "\n";
  }

  // With ANVIL_VULKAN_ENABLE_VALIDATION_LAYERS=1 the layers check every dispatch.
  void TearDown() override {
    if (vulkan::num_devices() > 0) {
      EXPECT_EQ(Registry::get("vulkan.validation_error_count")().as_int(), 0);
    }
  }

  struct GpuKernel {
    Module module;
    LoweredCall lowered;
    Type out_type;
  };

  GpuKernel build(const std::string& op, const std::vector<Type>& types, const Attrs& attrs = {}) {
    graph::BlockBuilder b;
    std::vector<graph::Expr> args;
    for (size_t i = 0; i < types.size(); ++i) args.push_back(b.add_param("a" + std::to_string(i), types[i]));
    graph::Expr call = b.call(op, args, attrs);
    GpuKernel k;
    k.out_type = call.type();
    Target t = Target::parse("vulkan");
    k.lowered = lower_call(*call.as<graph::CallNode>(), t, "kernel");
    EXPECT_NE(k.lowered.implementation.find(".gpu"), std::string::npos) << k.lowered.implementation;
    k.module = pipeline::build(std::vector<tir::PrimFunc>{k.lowered.func}, t);
    return k;
  }

  // Host tensors in, results back on the host (as doubles).
  std::vector<std::vector<double>> run(GpuKernel& k, const std::vector<Tensor>& inputs,
                                       const std::vector<std::vector<int64_t>>& out_shapes,
                                       const std::map<std::string, int64_t>& dims = {}) {
    Device dev = Device::vulkan(0);
    std::vector<Type> outs = k.out_type.is_tuple() ? k.out_type.fields() : std::vector<Type>{k.out_type};
    std::vector<Value> args;
    for (const Tensor& t : inputs) {
      Tensor d = Tensor::empty(t.shape(), t.dtype(), dev);
      d.copy_from_bytes(t.data(), t.nbytes());
      args.emplace_back(d);
    }
    std::vector<Tensor> results;
    for (size_t i = 0; i < outs.size(); ++i) {
      Tensor d = Tensor::empty(std::span<const int64_t>(out_shapes[i]), outs[i].dtype(), dev);
      results.push_back(d);
      args.emplace_back(d);
    }
    for (const ir::Var& v : k.lowered.shape_vars) {
      auto it = dims.find(v->name());
      if (it == dims.end()) ADD_FAILURE() << "no value for shape var " << v->name();
      args.emplace_back(static_cast<int32_t>(it == dims.end() ? 0 : it->second));
    }
    k.module["kernel"].call(Args(args.data(), args.size()));
    DeviceAPI::get(dev)->sync(dev, nullptr);
    std::vector<std::vector<double>> values;
    for (const Tensor& d : results) {
      Tensor h = Tensor::empty(d.shape(), d.dtype());
      d.copy_to_bytes(h.data(), h.nbytes());
      values.push_back(testing::values_of(h));
    }
    return values;
  }

  static void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol,
                          const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " at " << i;
  }

  // A fused group written as graph text (@g, static shapes) through lower_fused for vulkan.
  GpuKernel build_group(const std::string& text) {
    graph::IRModule m = graph::parse_module(text);
    const graph::Function& g = m.function("g");
    std::vector<graph::Expr> args(g.params().begin(), g.params().end());
    graph::Expr call = graph::Call::make(graph::kCallFused, args, {{"func", graph::AttrValue("g")}}, g.result().type());
    GpuKernel k;
    k.out_type = g.result().type();
    Target t = Target::parse("vulkan");
    k.lowered = lower_fused(g, *call.as<graph::CallNode>(), t, "kernel");
    k.module = pipeline::build(std::vector<tir::PrimFunc>{k.lowered.func}, t);
    return k;
  }

  std::mt19937 rng{kSeed};
};

}  // namespace anvil::ops::gpu_testing
