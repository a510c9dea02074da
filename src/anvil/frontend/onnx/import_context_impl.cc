// The ImportContext a converter sees (import_state.h): inputs by name from the import state,
// known values and their materialisation, attribute getters with kind checks, and errors that
// name the node.
#include <cstdint>
#include <cstring>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/graph_inputs.h"
#include "anvil/frontend/onnx/import_state.h"
#include "anvil/frontend/onnx/model_loader.h"
#include "anvil/frontend/onnx/tensor_proto.h"
#include "anvil/graph/expr.h"

namespace anvil::frontend::onnx {
namespace {

bool all_constant(const std::vector<ir::PrimExpr>& values) {
  for (const ir::PrimExpr& v : values)
    if (!ir::as_const_int(v)) return false;
  return true;
}

}  // namespace

std::optional<Tensor> tensor_of_known(const ImportedValue& v) {
  if (!v.known || !all_constant(*v.known)) return std::nullopt;
  const std::vector<ir::PrimExpr>& values = *v.known;
  DataType dtype = DataType::int64();
  std::vector<int64_t> shape = v.known_shape;
  if (v.expr.defined()) {
    const graph::Type& t = v.expr.type();
    if (!t.is_tensor() || !t.has_rank()) return std::nullopt;
    auto s = t.static_shape();
    if (!s) return std::nullopt;
    int64_t n = 1;
    for (int64_t d : *s) n *= d;
    if (n != static_cast<int64_t>(values.size())) return std::nullopt;
    dtype = t.dtype();
    if (!(dtype == DataType::int64() || dtype == DataType::int32())) return std::nullopt;
    shape = *s;
  }
  Tensor out = Tensor::empty(shape, dtype);
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t x = *ir::as_const_int(values[i]);
    if (dtype == DataType::int64()) static_cast<int64_t*>(out.data())[i] = x;
    else static_cast<int32_t*>(out.data())[i] = static_cast<int32_t>(x);
  }
  return out;
}

graph::Expr materialize(ImportState& state, ImportedValue& v, const std::string& binding_name) {
  if (v.expr.defined() && v.expr.as<graph::ConstantNode>()) return v.expr;
  // Integer values known at import become constants: shape sub-graphs fold as they import.
  if (auto t = tensor_of_known(v)) {
    v.expr = graph::Constant::make(*t);
    return v.expr;
  }
  if (v.expr.defined()) return v.expr;
  ANVIL_ICHECK(v.known.has_value(), "a value with neither an expression nor known values");
  graph::Expr shape;
  try {
    shape = graph::ShapeExpr::make(*v.known);
  } catch (const Error& e) {
    not_implemented_error("it is used as a tensor, but its values are known only as expressions that are not all ",
                          "dimensions (", e.what(), ")");
  }
  graph::BlockBuilder& b = state.builder;
  graph::Expr out = b.emit_call("shape_to_tensor", {shape}, {}, binding_name);
  if (v.known_shape != std::vector<int64_t>{static_cast<int64_t>(v.known->size())}) {
    std::vector<ir::PrimExpr> dims;
    for (int64_t d : v.known_shape) dims.push_back(graph::dim_expr(d));
    out = b.emit_call("reshape", {out, graph::ShapeExpr::make(dims)}, {}, binding_name);
  }
  v.expr = out;
  return v.expr;
}

namespace {

std::string attr_kind_name(int kind) {
  if (kind == AttributeProto::UNDEFINED) return "empty (no value)";
  if (!AttributeProto::AttributeType_IsValid(kind)) return str_cat("of unknown kind ", kind);
  return std::string(AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(kind)));
}

// The attribute's kind; files from before IR version 2 leave `type` unset, so then it is the
// field that is set.
int attr_kind(const AttributeProto& a) {
  if (a.type() != AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.floats_size()) return AttributeProto::FLOATS;
  if (a.ints_size()) return AttributeProto::INTS;
  if (a.strings_size()) return AttributeProto::STRINGS;
  if (a.tensors_size()) return AttributeProto::TENSORS;
  if (a.graphs_size()) return AttributeProto::GRAPHS;
  return AttributeProto::UNDEFINED;
}

bool d_ok(const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 0) return false;
  return true;
}

}  // namespace

std::optional<std::vector<ir::PrimExpr>> known_values_of(const Tensor& t) {
  if (!(t.dtype() == DataType::int64() || t.dtype() == DataType::int32())) return std::nullopt;
  if (t.numel() > kMaxKnownElements || !t.is_contiguous()) return std::nullopt;
  std::vector<ir::PrimExpr> out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t x = t.dtype() == DataType::int64() ? static_cast<const int64_t*>(t.data())[i]
                                               : static_cast<const int32_t*>(t.data())[i];
    bool fits = x >= INT32_MIN && x <= INT32_MAX;
    out.push_back(ir::int_imm(x, fits ? DataType::int32() : DataType::int64()));
  }
  return out;
}

std::string sanitize_name(const std::string& name, const std::string& fallback) {
  if (name.empty()) return fallback;
  std::string out;
  if (name[0] >= '0' && name[0] <= '9') out += '_';
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  return out;
}

std::string node_label(const NodeProto& node, int index, const ModelProto& model) {
  int64_t opset = opset_version(model, node.domain()).value_or(0);
  std::string op = node.domain().empty() || node.domain() == "ai.onnx" ? node.op_type()
                                                                       : node.domain() + "." + node.op_type();
  std::string who = node.name().empty() ? str_cat("node ", index) : str_cat("node '", node.name(), "'");
  return str_cat(who, " (", op, ", opset ", opset, ")");
}

NodeContext::NodeContext(ImportState& state, const NodeProto& node, int index)
    : state_(state), node_(node), index_(index), prefix_("onnx: " + node_label(node, index, *state.model)),
      output_known_(static_cast<size_t>(node.output_size())),
      output_known_shape_(static_cast<size_t>(node.output_size())) {
  for (const std::string& out : node.output()) {
    if (!out.empty()) {
      binding_name_ = sanitize_name(out);
      break;
    }
  }
}

bool NodeContext::has_input(int i) const { return i >= 0 && i < node_.input_size() && !node_.input(i).empty(); }

const ImportedValue& NodeContext::value(int i) const {
  if (!has_input(i)) bad_model(str_cat("input ", i, " is missing (the node has ", node_.input_size(), " inputs)"));
  auto it = state_.values.find(node_.input(i));
  ANVIL_ICHECK(it != state_.values.end(), prefix_, ": input '", node_.input(i), "' was not imported before the node");
  if (it->second.missing) unsupported(str_cat("input ", i, " ('", node_.input(i), "'): ", *it->second.missing));
  return it->second;
}

graph::Expr NodeContext::input(int i) {
  auto& v = const_cast<ImportedValue&>(value(i));
  try {
    return materialize(state_, v, binding_name_);
  } catch (const Error& e) {
    if (std::strncmp(e.what(), "onnx: ", 6) == 0) throw;
    throw Error(e.kind(), str_cat(prefix_, ": input ", i, " ('", node_.input(i), "'): ", e.what()));
  }
}

std::optional<Tensor> NodeContext::constant_input(int i) const {
  if (!has_input(i)) return std::nullopt;
  const ImportedValue& v = value(i);
  if (const auto* c = v.expr.as<graph::ConstantNode>()) return c->data();
  return tensor_of_known(v);
}

std::optional<std::vector<ir::PrimExpr>> NodeContext::known_values(int i) const {
  if (!has_input(i)) return std::nullopt;
  return value(i).known;
}

std::optional<std::vector<int64_t>> NodeContext::known_shape(int i) const {
  if (!has_input(i)) return std::nullopt;
  const ImportedValue& v = value(i);
  if (!v.known) return std::nullopt;
  return v.known_shape;
}

std::vector<int64_t> NodeContext::const_ints(int i, const std::string& what) const {
  if (!has_input(i)) bad_model(str_cat("input ", i, " (", what, ") is missing"));
  const ImportedValue& v = value(i);
  if (!v.known || !all_constant(*v.known)) {
    unsupported(str_cat("input ", i, " (", what, ") must be known at import: '", node_.input(i),
                        "' is not a constant integer tensor of at most ", kMaxKnownElements, " elements"));
  }
  std::vector<int64_t> out;
  for (const ir::PrimExpr& e : *v.known) out.push_back(*ir::as_const_int(e));
  return out;
}

// ---- attributes -------------------------------------------------------------------------------

const AttributeProto* NodeContext::find_attr(const std::string& name) const {
  for (const AttributeProto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const AttributeProto* NodeContext::attr_of_kind(const std::string& name, int kind) const {
  const AttributeProto* a = find_attr(name);
  if (a == nullptr) return nullptr;
  int k = attr_kind(*a);
  // An INT where a FLOAT is expected converts (some exporters write alpha=1 as an int).
  if (k != kind && !(kind == AttributeProto::FLOAT && k == AttributeProto::INT)) {
    bad_model(str_cat("attribute '", name, "' is ", attr_kind_name(k), ", expected ", attr_kind_name(kind)));
  }
  return a;
}

bool NodeContext::has_attr(const std::string& name) const { return find_attr(name) != nullptr; }

int64_t NodeContext::attr_int(const std::string& name, std::optional<int64_t> fallback) const {
  if (const AttributeProto* a = attr_of_kind(name, AttributeProto::INT)) return a->i();
  if (!fallback) bad_model(str_cat("missing attribute '", name, "' (INT)"));
  return *fallback;
}

double NodeContext::attr_float(const std::string& name, std::optional<double> fallback) const {
  if (const AttributeProto* a = attr_of_kind(name, AttributeProto::FLOAT)) {
    return attr_kind(*a) == AttributeProto::INT ? static_cast<double>(a->i()) : static_cast<double>(a->f());
  }
  if (!fallback) bad_model(str_cat("missing attribute '", name, "' (FLOAT)"));
  return *fallback;
}

std::string NodeContext::attr_string(const std::string& name, std::optional<std::string> fallback) const {
  if (const AttributeProto* a = attr_of_kind(name, AttributeProto::STRING)) return a->s();
  if (!fallback) bad_model(str_cat("missing attribute '", name, "' (STRING)"));
  return *fallback;
}

std::vector<int64_t> NodeContext::attr_ints(const std::string& name,
                                            std::optional<std::vector<int64_t>> fallback) const {
  if (const AttributeProto* a = attr_of_kind(name, AttributeProto::INTS)) return {a->ints().begin(), a->ints().end()};
  if (!fallback) bad_model(str_cat("missing attribute '", name, "' (INTS)"));
  return *fallback;
}

std::vector<double> NodeContext::attr_floats(const std::string& name,
                                             std::optional<std::vector<double>> fallback) const {
  if (const AttributeProto* a = attr_of_kind(name, AttributeProto::FLOATS)) return {a->floats().begin(), a->floats().end()};
  if (!fallback) bad_model(str_cat("missing attribute '", name, "' (FLOATS)"));
  return *fallback;
}

std::vector<std::string> NodeContext::attr_strings(const std::string& name) const {
  if (const AttributeProto* a = attr_of_kind(name, AttributeProto::STRINGS)) return {a->strings().begin(), a->strings().end()};
  return {};
}

Tensor NodeContext::attr_tensor(const std::string& name) const {
  const AttributeProto* a = attr_of_kind(name, AttributeProto::TENSOR);
  if (a == nullptr) bad_model(str_cat("missing attribute '", name, "' (TENSOR)"));
  Tensor t = tensor_from_proto(a->t(), state_.base_dir);
  if (!is_supported_dtype(t.dtype())) {
    unsupported(str_cat("attribute '", name, "' is a tensor of dtype ", t.dtype().to_string(), "; supported: ",
                        kSupportedDtypes));
  }
  return t;
}

std::vector<std::string> NodeContext::attr_names() const {
  std::vector<std::string> out;
  for (const AttributeProto& a : node_.attribute()) out.push_back(a.name());
  return out;
}

// ---- emitting -------------------------------------------------------------------------------

graph::Expr NodeContext::emit(const std::string& op, std::vector<graph::Expr> args, graph::Attrs attrs) {
  try {
    return state_.builder.emit(state_.builder.call(op, std::move(args), std::move(attrs)), binding_name_);
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat(prefix_, ": ", e.what()));
  }
}

graph::Expr NodeContext::constant(const Tensor& value) { return graph::Constant::make(value); }

void NodeContext::set_known_values(int output, std::vector<ir::PrimExpr> values,
                                   std::optional<std::vector<int64_t>> shape) {
  ANVIL_ICHECK(output >= 0 && output < node_.output_size(), prefix_, ": set_known_values of output ", output,
               " of a node with ", node_.output_size(), " outputs");
  if (shape) {
    int64_t n = 1;
    for (int64_t d : *shape) n *= d;
    ANVIL_ICHECK(d_ok(*shape) && n == static_cast<int64_t>(values.size()), prefix_, ": set_known_values of ",
                 values.size(), " values with a shape of ", n, " elements");
  }
  output_known_[static_cast<size_t>(output)] = std::move(values);
  output_known_shape_[static_cast<size_t>(output)] = std::move(shape);
}

void NodeContext::unsupported(const std::string& what) const { not_implemented_error(prefix_, ": ", what); }
void NodeContext::bad_model(const std::string& what) const { value_error(prefix_, ": ", what); }

void NodeContext::convert(const Converter& converter) {
  std::vector<graph::Expr> outs;
  try {
    outs = converter(*this);
  } catch (const Error& e) {
    if (std::strncmp(e.what(), "onnx: ", 6) == 0) throw;
    throw Error(e.kind(), str_cat(prefix_, ": ", e.what()));
  }
  // Values past the node's declared outputs are trailing optional outputs the model omitted.
  for (int i = 0; i < node_.output_size(); ++i) {
    const std::string& name = node_.output(i);
    if (name.empty()) continue;
    ImportedValue v;
    if (static_cast<size_t>(i) < outs.size()) v.expr = outs[static_cast<size_t>(i)];
    const auto* c = v.expr.as<graph::ConstantNode>();
    if (output_known_[static_cast<size_t>(i)]) {
      v.known = std::move(output_known_[static_cast<size_t>(i)]);
      // The shape: the expression's when static, else the one given, else 1-d.
      std::optional<std::vector<int64_t>> s;
      if (v.expr.defined() && v.expr.type().is_tensor() && v.expr.type().has_rank()) s = v.expr.type().static_shape();
      if (!s) s = std::move(output_known_shape_[static_cast<size_t>(i)]);
      v.known_shape = s ? *s : std::vector<int64_t>{static_cast<int64_t>(v.known->size())};
    } else if (c != nullptr) {
      v.known = known_values_of(c->data());
      v.known_shape = c->data().shape();
    }
    if (!v.expr.defined() && !v.known) {
      v.missing = str_cat("output ", i, " of ", prefix_.substr(6), " is not produced (Anvil's converter does not support it)");
    }
    state_.values[name] = std::move(v);
  }
}

}  // namespace anvil::frontend::onnx
