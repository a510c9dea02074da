// The importer's state while it walks one graph (internal to importer.cc and
// import_context_impl.cc): the builder, every ONNX value by name with its expression and known
// values, and the ImportContext a converter sees for one node.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/import_context.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/graph/builder.h"

namespace anvil::frontend::onnx {

// Known values come from integer constants of at most this many elements (shape-like tensors).
inline constexpr int64_t kMaxKnownElements = 64;

struct ImportedValue {
  // Undefined for a value that has only known values: a converter may leave the expression to
  // input(), which materialises it on first use as an int64 tensor of known_shape (a Constant,
  // or shape_to_tensor of a ShapeExpr, reshaped when not 1-d, when a value is symbolic).
  graph::Expr expr;
  std::optional<std::vector<ir::PrimExpr>> known;
  // The tensor shape of the known values (as many elements as `known`).
  std::vector<int64_t> known_shape;
  // Set when a converter produced no expression for this output: the reason names the node.
  std::optional<std::string> missing;
};

struct ImportState {
  graph::BlockBuilder builder;
  std::unordered_map<std::string, ImportedValue> values;
  int opset = 0;  // ai.onnx; 0 when the model imports only other domains (its nodes then fail)
  const ModelProto* model = nullptr;
  std::filesystem::path base_dir;
  // The module's functions other than main (If branches, Loop bodies: control_flow.h), shared
  // by the states of nested subgraphs.
  std::map<std::string, graph::Function>* functions = nullptr;
};

// The elements of an int64/int32 tensor of at most kMaxKnownElements elements, as int32
// immediates (int64 where a value does not fit int32, e.g. Slice's INT64_MAX ends); nullopt for
// other tensors.
std::optional<std::vector<ir::PrimExpr>> known_values_of(const Tensor& t);

// The tensor of a value whose known values are all constants: the dtype and shape of its
// expression when it has a static one of as many elements, else int64 of known_shape. nullopt
// when a value is symbolic or the expression's type does not fit.
std::optional<Tensor> tensor_of_known(const ImportedValue& v);

// The value as a tensor expression: a Constant when its known values are all constants, its
// expression, or (known values only, symbolic) shape_to_tensor of them, bound in state.builder
// (names `binding_name`) and kept in v.expr. Errors do not name the node (callers add it).
graph::Expr materialize(ImportState& state, ImportedValue& v, const std::string& binding_name);

// A name for the printer and parser: ONNX names are any string ("input.1", "onnx::Gemm_0",
// "batch*2"); characters outside [A-Za-z0-9_] become '_', a leading digit gets a '_' in front,
// "" becomes `fallback`.
std::string sanitize_name(const std::string& name, const std::string& fallback = "v");

// "node 'conv1' (Conv, opset 13)" or "node 3 (Conv, opset 13)" for an unnamed node; the opset
// is that of the node's domain in `model` ("(com.microsoft.Attention, opset 1)").
std::string node_label(const NodeProto& node, int index, const ModelProto& model);

// The ImportContext of one node.
class NodeContext final : public ImportContext {
 public:
  NodeContext(ImportState& state, const NodeProto& node, int index);

  const NodeProto& node() const override { return node_; }
  int opset() const override { return state_.opset; }
  graph::BlockBuilder& builder() override { return state_.builder; }

  int num_inputs() const override { return node_.input_size(); }
  bool has_input(int i) const override;
  graph::Expr input(int i) override;
  std::optional<Tensor> constant_input(int i) const override;
  std::optional<std::vector<ir::PrimExpr>> known_values(int i) const override;
  std::vector<int64_t> const_ints(int i, const std::string& what) const override;
  int num_outputs() const override { return node_.output_size(); }

  bool has_attr(const std::string& name) const override;
  int64_t attr_int(const std::string& name, std::optional<int64_t> fallback) const override;
  double attr_float(const std::string& name, std::optional<double> fallback) const override;
  std::string attr_string(const std::string& name, std::optional<std::string> fallback) const override;
  std::vector<int64_t> attr_ints(const std::string& name, std::optional<std::vector<int64_t>> fallback) const override;
  std::vector<double> attr_floats(const std::string& name, std::optional<std::vector<double>> fallback) const override;
  std::vector<std::string> attr_strings(const std::string& name) const override;
  Tensor attr_tensor(const std::string& name) const override;
  std::vector<std::string> attr_names() const override;

  graph::Expr emit(const std::string& op, std::vector<graph::Expr> args, graph::Attrs attrs) override;
  graph::Expr constant(const Tensor& value) override;
  void set_known_values(int output, std::vector<ir::PrimExpr> values,
                        std::optional<std::vector<int64_t>> shape = std::nullopt) override;
  std::optional<std::vector<int64_t>> known_shape(int i) const override;

  [[noreturn]] void unsupported(const std::string& what) const override;
  [[noreturn]] void bad_model(const std::string& what) const override;

  // "onnx: node 'x' (Op, opset n)": every message about this node starts with it.
  const std::string& prefix() const { return prefix_; }
  // Runs the converter and records its outputs in the state (errors re-thrown with prefix()).
  void convert(const Converter& converter);
  // The state the node imports into and its index in its graph (specialize.h imports the node
  // again into branch functions of its own).
  ImportState& state() { return state_; }
  int index() const { return index_; }

 private:
  // The value of input i (bad_model when absent; the node order guarantees it was imported).
  const ImportedValue& value(int i) const;
  const AttributeProto* find_attr(const std::string& name) const;
  // The attribute, checked to be of `kind` (bad_model otherwise); nullptr when absent.
  const AttributeProto* attr_of_kind(const std::string& name, int kind) const;

  ImportState& state_;
  const NodeProto& node_;
  int index_;
  std::string prefix_;
  std::string binding_name_;  // the bindings a node emits are named after its first output
  std::vector<std::optional<std::vector<ir::PrimExpr>>> output_known_;
  std::vector<std::optional<std::vector<int64_t>>> output_known_shape_;
};

}  // namespace anvil::frontend::onnx
