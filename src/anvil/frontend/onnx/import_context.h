// What an ONNX operator converter sees: the node, its inputs as graph expressions, their
// values when known at import time, the attributes, the opset, and the builder to emit graph
// calls into. One converter per op_type (converters.h), written per op family in
// convert_<family>.cc.
//
//   std::vector<graph::Expr> convert_relu(ImportContext& ctx) {
//     return {ctx.emit("relu", {ctx.input(0)})};
//   }
//
// Known values: small integer tensors whose elements are known at import time, as dimension
// expressions — initializers, Constant nodes and what Shape/Gather/Concat/Unsqueeze/Slice/
// arithmetic make of them. A Reshape whose shape input is `Concat(Gather(Shape(x), 0), [-1])`
// then sees {n, -1} and emits a reshape to a ShapeExpr. Converters of ops that compute on
// integers propagate them (set_known_values); every use as a tensor gets a real expression
// (input() materialises a constant or a shape_to_tensor call).
//
// Errors: unsupported() throws NotImplementedError naming the node, its op_type and opset and
// what is missing; bad_model() throws ValueError for an invalid node (wrong input count,
// attribute of the wrong kind).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/graph/builder.h"
#include "anvil/runtime/tensor.h"

namespace onnx {
class NodeProto;
class AttributeProto;
}  // namespace onnx

namespace anvil::frontend::onnx {

class ImportContext {
 public:
  virtual ~ImportContext() = default;

  virtual const ::onnx::NodeProto& node() const = 0;
  virtual int opset() const = 0;  // the model's ai.onnx opset
  virtual graph::BlockBuilder& builder() = 0;

  // Inputs. An empty input name (an omitted optional input) or an index past the end: absent.
  virtual int num_inputs() const = 0;
  virtual bool has_input(int i) const = 0;
  // The input as an expression (absent: bad_model naming the input).
  virtual graph::Expr input(int i) = 0;
  // The input's value when it is a constant tensor (initializer, Constant, folded): nullopt otherwise.
  virtual std::optional<Tensor> constant_input(int i) const = 0;
  // The input's elements as dimension expressions when known (see above), flattened.
  virtual std::optional<std::vector<ir::PrimExpr>> known_values(int i) const = 0;
  // known_values as constant ints; unsupported("input 1 (shape) must be known at import") otherwise.
  virtual std::vector<int64_t> const_ints(int i, const std::string& what) const = 0;
  virtual int num_outputs() const = 0;  // declared outputs of the node (names may be empty)

  // Attributes (checked kinds; ValueError naming the attribute otherwise).
  virtual bool has_attr(const std::string& name) const = 0;
  virtual int64_t attr_int(const std::string& name, std::optional<int64_t> fallback = std::nullopt) const = 0;
  virtual double attr_float(const std::string& name, std::optional<double> fallback = std::nullopt) const = 0;
  virtual std::string attr_string(const std::string& name, std::optional<std::string> fallback = std::nullopt) const = 0;
  virtual std::vector<int64_t> attr_ints(const std::string& name,
                                         std::optional<std::vector<int64_t>> fallback = std::nullopt) const = 0;
  virtual std::vector<double> attr_floats(const std::string& name,
                                          std::optional<std::vector<double>> fallback = std::nullopt) const = 0;
  virtual std::vector<std::string> attr_strings(const std::string& name) const = 0;
  virtual Tensor attr_tensor(const std::string& name) const = 0;  // TensorProto attribute (Constant)
  // Every attribute the node carries, for converters that reject unknown ones.
  virtual std::vector<std::string> attr_names() const = 0;

  // Emits a call of a graph operator (type inferred; errors re-thrown naming the node).
  virtual graph::Expr emit(const std::string& op, std::vector<graph::Expr> args, graph::Attrs attrs = {}) = 0;
  // A constant expression of a tensor.
  virtual graph::Expr constant(const Tensor& value) = 0;
  // Records known values for output i. The converter returns an expression for it, or an
  // undefined Expr to leave it to input(), which materialises it on first use as an int64 tensor
  // of `shape` (default: 1-d; {} for a scalar): a Constant, or shape_to_tensor when symbolic.
  virtual void set_known_values(int output, std::vector<ir::PrimExpr> values,
                                std::optional<std::vector<int64_t>> shape = std::nullopt) = 0;
  // The tensor shape of input i's known values (without materialising it); nullopt when not known.
  virtual std::optional<std::vector<int64_t>> known_shape(int i) const = 0;

  [[noreturn]] virtual void unsupported(const std::string& what) const = 0;
  [[noreturn]] virtual void bad_model(const std::string& what) const = 0;
};

}  // namespace anvil::frontend::onnx
