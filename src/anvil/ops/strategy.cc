// The strategy table, filled once on first use by the family files.
#include "anvil/ops/strategy.h"

#include <map>
#include <mutex>

#include "anvil/base/error.h"

namespace anvil::ops {
namespace {

using Key = std::pair<std::string, std::string>;

std::map<Key, OpImplementation>& table() {
  static std::map<Key, OpImplementation> t;
  return t;
}

bool& filling() {
  static bool f = false;
  return f;
}

const std::map<Key, OpImplementation>& filled_table() {
  static std::once_flag once;
  std::call_once(once, [] {
    filling() = true;
    register_elementwise_strategies();
    register_reduce_strategies();
    register_nn_strategies();
    register_transform_strategies();
    register_gpu_strategies();         // ops/gpu/strategies_gpu.cc
    register_gpu_matmul_strategies();  // ops/gpu/matmul_gpu.cc
    filling() = false;
  });
  return table();
}

}  // namespace

std::string target_family(const Target& target) { return target.is_host_kind() ? "cpu" : "gpu"; }

const OpImplementation* find_implementation(const std::string& op, const std::string& family) {
  const auto& t = filled_table();
  auto it = t.find({op, family});
  return it == t.end() ? nullptr : &it->second;
}

const OpImplementation& select_implementation(const std::string& op, const Target& target) {
  std::string family = target_family(target);
  const OpImplementation* impl = find_implementation(op, family);
  if (impl == nullptr)
    not_implemented_error("no implementation of graph operator '", op, "' for target family '", family,
                          "' (target '", target.str(), "')");
  return *impl;
}

void register_implementation(const std::string& op, const std::string& family, OpImplementation impl) {
  ANVIL_ICHECK(filling(), "register_implementation outside the strategy table's fill: ", op);
  ANVIL_ICHECK((static_cast<bool>(impl.compute) && static_cast<bool>(impl.schedule)) || static_cast<bool>(impl.kernel),
               "incomplete implementation of ", op);
  bool inserted = table().emplace(Key{op, family}, std::move(impl)).second;
  ANVIL_ICHECK(inserted, "implementation registered twice: ", op, " for ", family);
}

std::vector<std::pair<std::string, std::string>> list_implementations() {
  std::vector<Key> out;
  for (const auto& [k, v] : filled_table()) out.push_back(k);
  return out;
}

}  // namespace anvil::ops
