#include "anvil/frontend/onnx/model_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/data_types.h"
#include "anvil/frontend/onnx/external_data.h"
#include "anvil/frontend/onnx/graph_walk.h"

namespace anvil::frontend::onnx {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// Bytes of a tensor's data from its dims and dtype (not from where the data sits); saturates
// instead of overflowing on absurd dims, 0 for negative ones.
uint64_t tensor_bytes(const TensorProto& t) {
  if (t.data_type() == TensorProto::STRING) {
    uint64_t n = 0;
    for (const std::string& s : t.string_data()) n = saturating_add(n, s.size());
    return n;
  }
  uint64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return 0;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel)) return UINT64_MAX;
  }
  uint64_t bits = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(onnx_dtype_bits(t.data_type())), &bits)) return UINT64_MAX;
  return bits / 8 + (bits % 8 != 0);
}

ValueSummary summarize_value(const ValueInfoProto& info) {
  ValueSummary v;
  v.name = info.name();
  const TypeProto& type = info.type();
  const TensorShapeProto* shape = nullptr;
  if (type.has_tensor_type()) {
    v.dtype = type.tensor_type().elem_type() ? display_dtype_name(type.tensor_type().elem_type()) : "?";
    if (type.tensor_type().has_shape()) shape = &type.tensor_type().shape();
  } else if (type.has_sparse_tensor_type()) {
    v.dtype = "sparse " + display_dtype_name(type.sparse_tensor_type().elem_type());
    if (type.sparse_tensor_type().has_shape()) shape = &type.sparse_tensor_type().shape();
  } else if (type.has_sequence_type()) {
    v.dtype = "sequence";
  } else if (type.has_map_type()) {
    v.dtype = "map";
  } else if (type.has_optional_type()) {
    v.dtype = "optional";
  } else {
    v.dtype = "?";
  }
  if (shape) {
    v.has_shape = true;
    for (const TensorShapeProto::Dimension& d : shape->dim()) {
      if (d.has_dim_value())
        v.dims.push_back(std::to_string(d.dim_value()));
      else if (d.has_dim_param() && !d.dim_param().empty())
        v.dims.push_back(d.dim_param());
      else
        v.dims.push_back("?");
    }
  }
  return v;
}

std::string human_bytes(uint64_t bytes) {
  if (bytes == UINT64_MAX) return "more than 2^64 bytes";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return str_cat(bytes, " bytes");
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu bytes (%.1f %s)", static_cast<unsigned long long>(bytes), v, units[u]);
  return buf;
}

// Rows of cells as aligned columns (two spaces apart), each line indented by `indent` spaces.
void append_table(std::string& out, const std::vector<std::vector<std::string>>& rows, size_t indent = 2) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line(indent, ' ');
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(width[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
}

void append_values(std::string& out, const char* title, const std::vector<ValueSummary>& values) {
  out += str_cat("\n", title, " (", values.size(), ")\n");
  if (values.empty()) return;
  std::vector<std::vector<std::string>> rows = {{"name", "dtype", "shape"}};
  for (const ValueSummary& v : values) rows.push_back({v.name, v.dtype, format_dims(v)});
  append_table(out, rows);
}

}  // namespace

ModelSummary summarize_model(const ModelProto& model, std::string source) {
  ModelSummary s;
  s.source = std::move(source);
  s.ir_version = model.ir_version();
  s.producer = model.producer_name();
  if (!model.producer_version().empty()) s.producer += (s.producer.empty() ? "" : " ") + model.producer_version();
  for (const OperatorSetIdProto& opset : model.opset_import()) {
    s.opsets.emplace_back(is_default_domain(opset.domain()) ? "ai.onnx" : opset.domain(), opset.version());
  }
  const GraphProto& graph = model.graph();
  s.graph_name = graph.name();

  std::set<std::string> initializer_names;
  for (const TensorProto& t : graph.initializer()) {
    initializer_names.insert(t.name());
    s.initializer_bytes = saturating_add(s.initializer_bytes, tensor_bytes(t));
    s.external_initializer_count += has_external_data(t);
  }
  for (const SparseTensorProto& sp : graph.sparse_initializer()) {
    initializer_names.insert(sp.values().name());
    s.initializer_bytes = saturating_add(s.initializer_bytes, tensor_bytes(sp.values()));
    s.initializer_bytes = saturating_add(s.initializer_bytes, tensor_bytes(sp.indices()));
  }
  s.initializer_count = graph.initializer_size() + graph.sparse_initializer_size();
  for (const ValueInfoProto& in : graph.input()) {
    if (!initializer_names.count(in.name())) s.inputs.push_back(summarize_value(in));
  }
  for (const ValueInfoProto& out : graph.output()) s.outputs.push_back(summarize_value(out));

  std::map<std::string, int64_t> counts;
  for_each_graph(graph, [&](const GraphProto& g, const std::string&) {
    for (const NodeProto& node : g.node()) {
      ++counts[is_default_domain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type()];
      ++s.node_count;
    }
  });
  s.op_counts.assign(counts.begin(), counts.end());
  return s;
}

std::string format_dims(const ValueSummary& value) {
  if (!value.has_shape) return "unknown rank";
  std::string out = "[";
  for (size_t i = 0; i < value.dims.size(); ++i) out += (i ? ", " : "") + value.dims[i];
  return out + "]";
}

std::string format_summary(const ModelSummary& s) {
  std::string opsets;
  for (const auto& [domain, version] : s.opsets) opsets += str_cat(opsets.empty() ? "" : ", ", domain, " ", version);
  std::string initializers = str_cat(s.initializer_count, ", ", human_bytes(s.initializer_bytes));
  if (s.external_initializer_count) initializers += str_cat(", ", s.external_initializer_count, " in external data");

  std::string out;
  std::vector<std::vector<std::string>> header = {
      {"model", s.source},
      {"ir_version", std::to_string(s.ir_version)},
      {"producer", s.producer.empty() ? "-" : s.producer},
      {"graph", s.graph_name.empty() ? "-" : s.graph_name},
      {"opsets", opsets.empty() ? "-" : opsets},
      {"nodes", std::to_string(s.node_count)},
      {"initializers", initializers},
  };
  append_table(out, header, 0);

  append_values(out, "inputs", s.inputs);
  append_values(out, "outputs", s.outputs);
  out += str_cat("\noperators (", s.op_counts.size(), " types, ", s.node_count, " nodes)\n");
  if (!s.op_counts.empty()) {
    std::vector<std::vector<std::string>> rows = {{"op_type", "count"}};
    for (const auto& [op, n] : s.op_counts) rows.push_back({op, std::to_string(n)});
    append_table(out, rows);
  }
  return out;
}

}  // namespace anvil::frontend::onnx
