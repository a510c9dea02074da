// Helpers for the ONNX frontend's tests: a temporary directory, small ModelProtos built in C++,
// and seeded random bytes (the seed is printed, so a failure can be replayed).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/frontend/onnx/proto.h"
#include "anvil/runtime/test_util.h"

namespace anvil::frontend::onnx::testing {

// The message (and kind) of the anvil::Error a call throws; a test failure when it throws nothing.
using ::anvil::testing::error_of;

inline std::mt19937& rng() {
  static std::mt19937 gen([] {
    unsigned seed = 20261202;
    std::cout << "[ seed ] " << seed << std::endl;
    return seed;
  }());
  return gen;
}

// n random bytes, never all zero.
inline std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  std::uniform_int_distribution<int> dist(0, 255);
  for (char& c : out) c = static_cast<char>(dist(rng()));
  if (n) out[0] = static_cast<char>(out[0] | 1);
  return out;
}

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "anvil_onnx_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline void set_tensor_type(ValueInfoProto* info, const std::string& name, int32_t elem_type,
                            const std::vector<std::string>& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (d == "?") continue;
    if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) != 0))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
}

// y = Relu(x + w): x float32 [N, 3], w a float32 [3] initializer, opset ai.onnx 17.
inline ModelProto small_model() {
  ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("anvil-test");
  model.set_producer_version("1.0");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  GraphProto* g = model.mutable_graph();
  g->set_name("small");
  set_tensor_type(g->add_input(), "x", TensorProto::FLOAT, {"N", "3"});
  set_tensor_type(g->add_output(), "y", TensorProto::FLOAT, {"N", "3"});
  TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(TensorProto::FLOAT);
  w->add_dims(3);
  for (float v : {0.5f, -1.25f, 2.0f}) w->add_float_data(v);
  NodeProto* add = g->add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("s");
  NodeProto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->add_input("s");
  relu->add_output("y");
  return model;
}

inline std::string serialize(const ModelProto& model) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw std::runtime_error("SerializeToString failed");
  return bytes;
}

// A one-graph ModelProto under construction: opset of the default domain, inputs, outputs,
// nodes. The tests' own Model structs derive from it and add the initializer helpers they use.
struct ModelBuilder {
  ModelProto proto;
  GraphProto* g;
  explicit ModelBuilder(int64_t opset, const std::string& graph_name = "test") {
    proto.set_ir_version(8);
    auto* o = proto.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = proto.mutable_graph();
    g->set_name(graph_name);
  }
  void input(const std::string& name, int32_t elem, const std::vector<std::string>& dims) {
    set_tensor_type(g->add_input(), name, elem, dims);
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
    NodeProto* n = g->add_node();
    n->set_op_type(op);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
};

}  // namespace anvil::frontend::onnx::testing
