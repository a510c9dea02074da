// Test helpers for operator kernels: build one graph call through ops::lower_call and
// pipeline::build for "llvm", run it on tensors of any element type filled from doubles, with
// the values of the symbolic dims as the trailing int32 arguments, and read results back as
// doubles for comparison with naive references.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "anvil/graph/builder.h"
#include "anvil/ir/float16.h"
#include "anvil/ops/lower_call.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"

namespace anvil::ops::testing {

inline double get(const Tensor& t, int64_t i) {
  const void* p = t.data();
  DataType d = t.dtype();
  if (d.is_bool()) return static_cast<const uint8_t*>(p)[i] != 0;
  if (d == DataType::float16()) return ir::half_bits_to_double(static_cast<const uint16_t*>(p)[i]);
  if (d == DataType::bfloat16()) return ir::bfloat16_bits_to_double(static_cast<const uint16_t*>(p)[i]);
  if (d == DataType::float32()) return static_cast<const float*>(p)[i];
  if (d == DataType::float64()) return static_cast<const double*>(p)[i];
  if (d == DataType::int8()) return static_cast<const int8_t*>(p)[i];
  if (d == DataType::int16()) return static_cast<const int16_t*>(p)[i];
  if (d == DataType::int32()) return static_cast<const int32_t*>(p)[i];
  if (d == DataType::int64()) return static_cast<double>(static_cast<const int64_t*>(p)[i]);
  if (d == DataType::uint8()) return static_cast<const uint8_t*>(p)[i];
  if (d == DataType::uint16()) return static_cast<const uint16_t*>(p)[i];
  if (d == DataType::uint32()) return static_cast<const uint32_t*>(p)[i];
  if (d == DataType::uint64()) return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
  ADD_FAILURE() << "unsupported dtype " << d;
  return 0;
}

inline void set(Tensor& t, int64_t i, double v) {
  void* p = t.data();
  DataType d = t.dtype();
  if (d.is_bool()) static_cast<uint8_t*>(p)[i] = v != 0;
  else if (d == DataType::float16()) static_cast<uint16_t*>(p)[i] = ir::double_to_half_bits(v);
  else if (d == DataType::bfloat16()) static_cast<uint16_t*>(p)[i] = ir::double_to_bfloat16_bits(v);
  else if (d == DataType::float32()) static_cast<float*>(p)[i] = static_cast<float>(v);
  else if (d == DataType::float64()) static_cast<double*>(p)[i] = v;
  else if (d == DataType::int8()) static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
  else if (d == DataType::int16()) static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v);
  else if (d == DataType::int32()) static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
  else if (d == DataType::int64()) static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v);
  else if (d == DataType::uint8()) static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v);
  else if (d == DataType::uint16()) static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v);
  else if (d == DataType::uint32()) static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v);
  else if (d == DataType::uint64()) static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v);
  else ADD_FAILURE() << "unsupported dtype " << d;
}

inline Tensor make_tensor(const std::vector<int64_t>& shape, DataType dtype, const std::vector<double>& values) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), dtype);
  for (int64_t i = 0; i < t.numel(); ++i) set(t, i, values[static_cast<size_t>(i)]);
  return t;
}

inline std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = get(t, i);
  return v;
}

// Uniform doubles in [lo, hi), rounded to integers when `integral`.
inline std::vector<double> random_values(int64_t n, std::mt19937& rng, double lo, double hi, bool integral = false) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = integral ? std::floor(dist(rng)) : dist(rng);
  return v;
}

inline int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A kernel of one call: graph arguments typed by `types` (dims may be symbolic Vars).
struct Kernel {
  Module module;
  std::string name;
  LoweredCall lowered;
  graph::Type out_type;
};

inline Kernel build_kernel(const std::string& op, const std::vector<graph::Type>& types, const graph::Attrs& attrs = {},
                           const std::string& name = "kernel") {
  register_runtime_functions();
  graph::BlockBuilder b;
  std::vector<graph::Expr> args;
  for (size_t i = 0; i < types.size(); ++i) args.push_back(b.add_param("a" + std::to_string(i), types[i]));
  graph::Expr call = b.call(op, args, attrs);
  Kernel k;
  k.name = name;
  k.out_type = call.type();
  k.lowered = lower_call(*call.as<graph::CallNode>(), Target::parse("llvm"), name);
  k.module = pipeline::build(std::vector<tir::PrimFunc>{k.lowered.func}, Target::parse("llvm"));
  return k;
}

// Runs the kernel: inputs, then freshly allocated outputs of `out_shapes` (filled with a
// sentinel so unwritten elements show), then the shape-var values by name.
inline std::vector<Tensor> run_kernel(Kernel& k, const std::vector<Tensor>& inputs,
                                      const std::vector<std::vector<int64_t>>& out_shapes,
                                      const std::map<std::string, int64_t>& dims = {}) {
  std::vector<graph::Type> outs = k.out_type.is_tuple() ? k.out_type.fields() : std::vector<graph::Type>{k.out_type};
  std::vector<Value> args;
  for (const Tensor& t : inputs) args.emplace_back(t);
  std::vector<Tensor> results;
  for (size_t i = 0; i < outs.size(); ++i) {
    Tensor t = Tensor::empty(std::span<const int64_t>(out_shapes[i]), outs[i].dtype());
    std::memset(t.data(), 0x7f, t.nbytes());
    results.push_back(t);
    args.emplace_back(t);
  }
  for (const ir::Var& v : k.lowered.shape_vars) {
    auto it = dims.find(v->name());
    if (it == dims.end()) ADD_FAILURE() << "no value for shape var " << v->name();
    args.emplace_back(static_cast<int32_t>(it == dims.end() ? 0 : it->second));
  }
  k.module[k.name].call(Args(args.data(), args.size()));
  return results;
}

// numpy broadcasting of concrete shapes, and the flat index of `in` read at output flat index i.
inline std::vector<int64_t> broadcast(const std::vector<std::vector<int64_t>>& shapes) {
  size_t n = 0;
  for (const auto& s : shapes) n = std::max(n, s.size());
  std::vector<int64_t> out(n, 1);
  for (const auto& s : shapes)
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[n - s.size() + k];
      if (s[k] != 1) o = s[k];
    }
  return out;
}

inline int64_t broadcast_source(const std::vector<int64_t>& out, const std::vector<int64_t>& in, int64_t flat) {
  int64_t src = 0, stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    int64_t coord = flat % out[k];
    flat /= out[k];
    size_t off = out.size() - in.size();
    if (k >= off) {
      int64_t d = in[k - off];
      src += (d == 1 ? 0 : coord) * stride;
      stride *= d;
    }
  }
  return src;
}

}  // namespace anvil::ops::testing
