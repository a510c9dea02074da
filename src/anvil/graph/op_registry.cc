// The operator table: filled once, on first use, by the families listed in graph/ops/ops.h.
#include "anvil/graph/op_registry.h"

#include <map>
#include <mutex>

#include "anvil/base/error.h"
#include "anvil/graph/ops/ops.h"

namespace anvil::graph {
namespace {

std::map<std::string, OpInfo>& table() {
  static std::map<std::string, OpInfo> t;
  return t;
}

bool& filling() {
  static bool f = false;
  return f;
}

const std::map<std::string, OpInfo>& filled_table() {
  static std::once_flag once;
  std::call_once(once, [] {
    filling() = true;
    ops::register_all_ops();
    filling() = false;
  });
  return table();
}

}  // namespace

std::string_view op_pattern_name(OpPattern p) {
  switch (p) {
    case OpPattern::kElemwise: return "elemwise";
    case OpPattern::kBroadcast: return "broadcast";
    case OpPattern::kInjective: return "injective";
    case OpPattern::kCommReduce: return "reduce";
    case OpPattern::kOutEWiseFusable: return "out_elemwise_fusable";
    case OpPattern::kOpaque: return "opaque";
  }
  return "?";
}

const OpInfo* find_op(const std::string& name) {
  const auto& t = filled_table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : &it->second;
}

const OpInfo& get_op(const std::string& name) {
  const OpInfo* info = find_op(name);
  if (info == nullptr) value_error("unknown graph operator '", name, "'");
  return *info;
}

std::vector<const OpInfo*> list_ops() {
  std::vector<const OpInfo*> out;
  for (const auto& [name, info] : filled_table()) out.push_back(&info);
  return out;
}

void register_op(OpInfo info) {
  ANVIL_ICHECK(filling(), "register_op outside register_all_ops: ", info.name);
  ANVIL_ICHECK(static_cast<bool>(info.infer_type), "operator ", info.name, " has no type inference");
  std::string name = info.name;
  bool inserted = table().emplace(name, std::move(info)).second;
  ANVIL_ICHECK(inserted, "operator registered twice: ", name);
}

}  // namespace anvil::graph
