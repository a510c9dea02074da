#include "anvil/frontend/onnx/model_loader.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <set>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/external_data.h"
#include "anvil/frontend/onnx/graph_walk.h"

namespace anvil::frontend::onnx {
namespace fs = std::filesystem;
namespace pbio = google::protobuf::io;

namespace {

std::string size_text(uint64_t bytes) {
  return str_cat(bytes, " bytes (", static_cast<double>(bytes) / (1 << 30), " GiB)");
}

[[noreturn]] void too_big(std::string_view source, uint64_t bytes) {
  value_error("'", source, "' is ", size_text(bytes), "; a protobuf model holds at most ", kMaxModelBytes,
              " bytes: store the weights as external data (onnx.save_model(model, path, "
              "save_as_external_data=True))");
}

[[noreturn]] void not_a_model(std::string_view source, uint64_t bytes) {
  value_error("'", source, "' is not an ONNX model: its ", bytes,
              " bytes do not parse as an onnx.ModelProto protobuf (truncated or corrupt file, or another format)");
}

// Parses to the end of the stream; the total-bytes limit is raised from protobuf's default to the
// most a message can hold, so every model below 2 GiB parses.
bool parse_stream(pbio::ZeroCopyInputStream* raw, ModelProto* model) {
  pbio::CodedInputStream coded(raw);
  coded.SetTotalBytesLimit(INT_MAX);
  return model->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

std::string domain_label(std::string_view domain) {
  return is_default_domain(domain) ? "ai.onnx" : std::string(domain);
}

void check_opsets(const ModelProto& model, std::string_view source) {
  if (model.opset_import_size() == 0) {
    value_error("'", source, "': the model declares no opset_import (ir_version ", model.ir_version(),
                "); expected at least the ai.onnx opset, e.g. {domain: \"\", version: 17}");
  }
  std::set<std::string> seen;
  for (int i = 0; i < model.opset_import_size(); ++i) {
    const OperatorSetIdProto& opset = model.opset_import(i);
    std::string domain = domain_label(opset.domain());
    if (opset.version() < 1) {
      value_error("'", source, "': opset_import[", i, "] (domain '", domain, "') has version ", opset.version(),
                  "; expected a version >= 1");
    }
    if (!seen.insert(domain).second) {
      value_error("'", source, "': opset_import names domain '", domain, "' twice; expected one version per domain");
    }
  }
}

void check_nodes(const google::protobuf::RepeatedPtrField<NodeProto>& nodes, const std::string& where,
                 std::string_view source, const std::set<std::string>& domains) {
  for (int i = 0; i < nodes.size(); ++i) {
    const NodeProto& node = nodes.Get(i);
    if (node.op_type().empty()) {
      value_error("'", source, "': ", where, " ", describe_node(node, i), " has an empty op_type");
    }
    if (!domains.count(domain_label(node.domain()))) {
      value_error("'", source, "': ", where, " ", describe_node(node, i), " uses domain '", node.domain(),
                  "', which opset_import does not declare");
    }
  }
}

}  // namespace

bool is_default_domain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }

std::optional<int64_t> opset_version(const ModelProto& model, std::string_view domain) {
  for (const OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain() == domain || (is_default_domain(domain) && is_default_domain(opset.domain()))) {
      return opset.version();
    }
  }
  return std::nullopt;
}

int64_t default_opset(const ModelProto& model, std::string_view source) {
  if (auto v = opset_version(model, "")) return *v;
  value_error("'", source,
              "': the model does not import the ai.onnx opset (opset_import has no domain \"\" "
              "or \"ai.onnx\")");
}

ModelProto parse_model(std::string_view bytes, std::string_view source) {
  if (bytes.empty()) value_error("'", source, "' is empty (0 bytes); expected a serialized onnx.ModelProto");
  if (bytes.size() > kMaxModelBytes) too_big(source, bytes.size());
  ModelProto model;
  pbio::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  if (!parse_stream(&raw, &model)) not_a_model(source, bytes.size());
  return model;
}

void check_model(const ModelProto& model, std::string_view source, const fs::path& base_dir) {
  if (!model.has_graph()) {
    value_error("'", source, "' has no graph (ir_version ", model.ir_version(), ", producer '", model.producer_name(),
                "'); expected a ModelProto with a graph");
  }
  check_opsets(model, source);
  std::set<std::string> domains;
  for (const OperatorSetIdProto& opset : model.opset_import()) domains.insert(domain_label(opset.domain()));
  // A node may call a model-local function by its domain.
  for (const FunctionProto& fn : model.functions()) domains.insert(domain_label(fn.domain()));

  for_each_graph(model.graph(), [&](const GraphProto& graph, const std::string& where) {
    check_nodes(graph.node(), where, source, domains);
  });
  for (const FunctionProto& fn : model.functions()) {
    std::set<std::string> fn_domains = domains;
    for (const OperatorSetIdProto& opset : fn.opset_import()) fn_domains.insert(domain_label(opset.domain()));
    check_nodes(fn.node(), str_cat("function '", fn.domain(), ".", fn.name(), "'"), source, fn_domains);
  }
  for_each_tensor(model.graph(), [&](const TensorProto& tensor, const std::string& where) {
    if (!has_external_data(tensor)) return;
    try {
      resolve_external_data(tensor, base_dir);
    } catch (const Error& e) {
      throw Error(e.kind(), str_cat("'", source, "': ", where, ": ", e.what()));
    }
  });
}

LoadedModel load_model_from_bytes(std::string_view bytes, std::string source, fs::path base_dir) {
  LoadedModel loaded{parse_model(bytes, source), std::move(source), std::move(base_dir)};
  check_model(loaded.proto, loaded.source, loaded.base_dir);
  return loaded;
}

LoadedModel load_model(const fs::path& path) {
  LoadedModel loaded;
  loaded.source = path.string();
  loaded.base_dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();

  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_error("load_model: cannot open '", loaded.source, "': ", std::strerror(errno));
  pbio::FileInputStream raw(fd, 1 << 20);  // 1 MiB reads: protobuf's default is 8 KiB
  raw.SetCloseOnDelete(true);
  struct stat st {};
  if (::fstat(fd, &st) != 0) io_error("load_model: cannot stat '", loaded.source, "': ", std::strerror(errno));
  if (S_ISDIR(st.st_mode)) io_error("load_model: '", loaded.source, "' is a directory; expected an .onnx file");
  uint64_t size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  if (S_ISREG(st.st_mode) && size == 0) {
    value_error("'", loaded.source, "' is empty (0 bytes); expected a serialized onnx.ModelProto");
  }
  if (size > kMaxModelBytes) too_big(loaded.source, size);
  bool parsed = parse_stream(&raw, &loaded.proto);
  if (raw.GetErrno() != 0) io_error("load_model: cannot read '", loaded.source, "': ", std::strerror(raw.GetErrno()));
  if (!parsed) not_a_model(loaded.source, size);
  check_model(loaded.proto, loaded.source, loaded.base_dir);
  return loaded;
}

}  // namespace anvil::frontend::onnx
