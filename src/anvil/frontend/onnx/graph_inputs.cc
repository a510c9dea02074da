#include "anvil/frontend/onnx/graph_inputs.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/data_types.h"
#include "anvil/frontend/onnx/tensor_proto.h"
#include "anvil/graph/expr.h"

namespace anvil::frontend::onnx {
namespace {

// Re-throws an error of a lower layer with the "onnx: " prefix (and `what` when given).
template <typename F>
auto with_prefix(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(e.kind(), what.empty() ? str_cat("onnx: ", e.what()) : str_cat("onnx: ", what, ": ", e.what()));
  }
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + ("'" + n + "'");
  return out.empty() ? "none" : out;
}

std::string pinned_text(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

const char* type_kind(const TypeProto& t) {
  if (t.has_sequence_type()) return "a sequence";
  if (t.has_map_type()) return "a map";
  if (t.has_optional_type()) return "an optional";
  if (t.has_sparse_tensor_type()) return "a sparse tensor";
  return "of an unknown type kind";
}

// An input given a value (ImportOptions::input_values): a constant, checked against the
// declared dtype and shape.
void bind_input_value(const ValueInfoProto& in, DataType dtype, const Tensor& value, ImportState& state) {
  std::string what = str_cat("input_values gives input '", in.name(), "'");
  if (!value.defined()) value_error("onnx: ", what, " an undefined tensor");
  if (!(value.dtype() == dtype)) value_error("onnx: ", what, " a ", value.dtype().to_string(), " tensor, the model declares ", dtype.to_string());
  const auto& tensor = in.type().tensor_type();
  if (tensor.has_shape()) {
    const auto& dims = tensor.shape().dim();
    bool ok = static_cast<size_t>(dims.size()) == value.shape().size();
    for (int i = 0; ok && i < dims.size(); ++i) {
      if (dims[i].has_dim_value() && dims[i].dim_value() >= 0 && dims[i].dim_value() != value.shape()[static_cast<size_t>(i)]) ok = false;
    }
    if (!ok) value_error("onnx: ", what, " a tensor of shape ", pinned_text(value.shape()), ", the model declares ", declared_shape_text(in));
  }
  ImportedValue v;
  v.expr = with_prefix(what, [&] { return graph::Constant::make(value); });
  v.known = known_values_of(value);
  v.known_shape = value.shape();
  state.values[in.name()] = std::move(v);
}

struct PinnedParam {
  int64_t value;
  std::string input;
};

}  // namespace

// Every tensor element type: int16 and the wider unsigned types are beyond issue 11's list, but
// the ONNX node tests feed them to the elementwise and comparison operators; bfloat16, float8,
// float4 and the 4/2-bit integers compute through float32 / as narrow integers (codegen_llvm_lowp.cc).
bool is_supported_dtype(DataType d) { return d.is_tensor_element(); }

void check_supported_dtype(DataType dtype, const std::string& what) {
  if (!is_supported_dtype(dtype)) not_implemented_error("onnx: ", what, " has dtype ", dtype.to_string(), "; supported: ", kSupportedDtypes);
}

DataType check_supported_code(int32_t code, const std::string& what) {
  if (!anvil_dtype(code) && is_known_onnx_dtype(code)) {
    not_implemented_error("onnx: ", what, " has dtype ", display_dtype_name(code), "; supported: ", kSupportedDtypes);
  }
  DataType dtype = with_prefix("", [&] { return anvil_dtype_or_throw(code, what); });
  check_supported_dtype(dtype, what);
  return dtype;
}

std::string declared_shape_text(const ValueInfoProto& info) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return "unknown rank";
  std::string out = "[";
  const auto& dims = info.type().tensor_type().shape().dim();
  for (int i = 0; i < dims.size(); ++i) {
    out += i ? ", " : "";
    if (dims[i].has_dim_value()) out += std::to_string(dims[i].dim_value());
    else if (dims[i].has_dim_param() && !dims[i].dim_param().empty()) out += dims[i].dim_param();
    else out += "?";
  }
  return out + "]";
}

void import_initializers(const GraphProto& graph, ImportState& state) {
  if (graph.sparse_initializer_size() > 0) {
    const SparseTensorProto& s = graph.sparse_initializer(0);
    not_implemented_error("onnx: sparse initializer '", s.values().name(), "' is not supported (",
                          graph.sparse_initializer_size(), " in the graph)");
  }
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const TensorProto& t = graph.initializer(i);
    if (t.name().empty()) value_error("onnx: initializer ", i, " has no name");
    std::string what = str_cat("initializer '", t.name(), "'");
    check_supported_code(t.data_type(), what);  // before reading (maybe external) data
    Tensor value = with_prefix("", [&] { return tensor_from_proto(t, state.base_dir); });
    check_supported_dtype(value.dtype(), what);
    ImportedValue v;
    v.expr = graph::Constant::make(value);
    v.known = known_values_of(value);
    v.known_shape = value.shape();
    if (!state.values.emplace(t.name(), std::move(v)).second) value_error("onnx: initializer '", t.name(), "' is defined twice");
  }
}

std::vector<std::string> import_graph_inputs(const GraphProto& graph,
                                             const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                             const std::map<std::string, Tensor>& input_values, ImportState& state) {
  std::unordered_set<std::string> initializers;
  for (const TensorProto& t : graph.initializer()) initializers.insert(t.name());
  std::vector<const ValueInfoProto*> inputs;
  std::vector<std::string> names;  // the parameters' ONNX names
  std::vector<std::string> all_inputs;
  std::unordered_set<std::string> seen;
  for (const ValueInfoProto& in : graph.input()) {
    if (in.name().empty()) value_error("onnx: a graph input has no name");
    if (!seen.insert(in.name()).second) value_error("onnx: graph input '", in.name(), "' is listed twice");
    // An initializer listed as an input (IR version < 4 lists all weights) stays a constant.
    if (initializers.count(in.name())) continue;
    inputs.push_back(&in);
    all_inputs.push_back(in.name());
    if (!input_values.count(in.name())) names.push_back(in.name());
  }
  for (const auto& [name, dims] : input_shapes) {
    if (initializers.count(name)) {
      value_error("onnx: input_shapes names '", name, "', which is an initializer (a constant) of the model, not an input");
    }
    if (!seen.count(name)) value_error("onnx: input_shapes names '", name, "', which is not an input of the model (inputs: ", join(all_inputs), ")");
    for (int64_t d : dims) {
      if (d < -1) value_error("onnx: input_shapes gives input '", name, "' the dimension ", d, " (expected >= 0, or -1 to keep the model's)");
    }
  }

  for (const auto& [name, value] : input_values) {
    if (initializers.count(name)) {
      value_error("onnx: input_values names '", name, "', which is an initializer (a constant) of the model, not an input");
    }
    if (!seen.count(name)) value_error("onnx: input_values names '", name, "', which is not an input of the model (inputs: ", join(all_inputs), ")");
    if (input_shapes.count(name)) value_error("onnx: input '", name, "' is named in both input_shapes and input_values");
  }

  // Pass 1: check the pinned shapes against the declared ones; a pinned dim_param pins that name.
  std::map<std::string, PinnedParam> pinned_params;
  for (const ValueInfoProto* in : inputs) {
    auto pin = input_shapes.find(in->name());
    if (pin == input_shapes.end()) continue;
    const TypeProto& type = in->type();
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) continue;  // any rank fits
    const auto& dims = type.tensor_type().shape().dim();
    if (static_cast<size_t>(dims.size()) != pin->second.size()) {
      value_error("onnx: input_shapes gives input '", in->name(), "' ", pin->second.size(), " dims ", pinned_text(pin->second),
                  ", the model declares ", dims.size(), " (", declared_shape_text(*in), ")");
    }
    for (int i = 0; i < dims.size(); ++i) {
      int64_t p = pin->second[static_cast<size_t>(i)];
      if (p < 0) continue;
      if (dims[i].has_dim_value() && dims[i].dim_value() >= 0 && dims[i].dim_value() != p) {
        value_error("onnx: input_shapes gives input '", in->name(), "' dim ", i, " = ", p, ", the model declares ",
                    dims[i].dim_value(), " (", declared_shape_text(*in), ")");
      }
      if (dims[i].has_dim_param() && !dims[i].dim_param().empty()) {
        auto [it, inserted] = pinned_params.emplace(dims[i].dim_param(), PinnedParam{p, in->name()});
        if (!inserted && it->second.value != p) {
          value_error("onnx: input_shapes pins dim '", dims[i].dim_param(), "' to ", it->second.value, " (input '",
                      it->second.input, "') and to ", p, " (input '", in->name(), "')");
        }
      }
    }
  }

  // Pass 2: the parameters. One dim_param name is one Var across every input.
  std::map<std::string, ir::Var> param_vars;
  for (const ValueInfoProto* in : inputs) {
    const std::string& name = in->name();
    std::string what = str_cat("input '", name, "'");
    if (!in->has_type()) value_error("onnx: ", what, " has no type");
    const TypeProto& type = in->type();
    if (!type.has_tensor_type()) not_implemented_error("onnx: ", what, " is ", type_kind(type), "; only tensor inputs are supported");
    const auto& tensor = type.tensor_type();
    DataType dtype = check_supported_code(tensor.elem_type(), what);
    if (auto given = input_values.find(name); given != input_values.end()) {
      bind_input_value(*in, dtype, given->second, state);
      continue;
    }
    auto pin = input_shapes.find(name);
    const std::vector<int64_t>* pinned = pin == input_shapes.end() ? nullptr : &pin->second;
    std::vector<ir::PrimExpr> dims;
    if (!tensor.has_shape()) {
      if (pinned == nullptr || std::find(pinned->begin(), pinned->end(), -1) != pinned->end()) {
        value_error("onnx: ", what, " has an unknown rank; give its full shape in input_shapes (--input-shapes ", name,
                    ":1x3x224x224)");
      }
      for (int64_t p : *pinned) dims.push_back(with_prefix(what, [&] { return graph::dim_expr(p); }));
    } else {
      const auto& declared = tensor.shape().dim();
      for (int i = 0; i < declared.size(); ++i) {
        const auto& d = declared[i];
        int64_t p = pinned ? (*pinned)[static_cast<size_t>(i)] : -1;
        std::string dim_what = str_cat(what, " dim ", i);
        // A negative dim_value (-1 in some exporters' files) means unknown, as in ONNX Runtime.
        if (d.has_dim_value() && d.dim_value() >= 0) {
          dims.push_back(with_prefix(dim_what, [&] { return graph::dim_expr(d.dim_value()); }));
        } else if (d.has_dim_param() && !d.dim_param().empty()) {
          auto bound = pinned_params.find(d.dim_param());
          if (bound != pinned_params.end()) {
            dims.push_back(with_prefix(dim_what, [&] { return graph::dim_expr(bound->second.value); }));
            continue;
          }
          auto it = param_vars.find(d.dim_param());
          if (it == param_vars.end()) it = param_vars.emplace(d.dim_param(), ir::size_var(sanitize_name(d.dim_param(), "d"))).first;
          dims.push_back(it->second);
        } else if (p >= 0) {
          dims.push_back(with_prefix(dim_what, [&] { return graph::dim_expr(p); }));
        } else {
          dims.push_back(ir::size_var(str_cat(sanitize_name(name, "input"), "_d", i)));
        }
      }
    }
    graph::Var param = state.builder.add_param(sanitize_name(name, "input"), graph::Type::tensor(std::move(dims), dtype));
    ImportedValue v;
    v.expr = param;
    state.values[name] = std::move(v);
  }
  return names;
}

}  // namespace anvil::frontend::onnx
