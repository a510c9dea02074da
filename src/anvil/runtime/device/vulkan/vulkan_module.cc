// The "vulkan" module kind, its loader and register_vulkan().
#include "anvil/runtime/device/vulkan/vulkan_module.h"

#include <atomic>
#include <mutex>
#include <set>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_device.h"
#include "anvil/runtime/device/vulkan/vulkan_device_api.h"
#include "anvil/runtime/device/vulkan/vulkan_device_limits.h"
#include "anvil/runtime/device/vulkan/vulkan_dispatch.h"
#include "anvil/runtime/device/vulkan/vulkan_kernel_check.h"
#include "anvil/runtime/device/vulkan/vulkan_register.h"
#include "anvil/runtime/registry.h"

namespace anvil::vulkan {
namespace {

std::atomic<uint64_t> g_next_module_id{1};

class VulkanModuleNode final : public ModuleNode {
 public:
  explicit VulkanModuleNode(std::vector<KernelInfo> kernels)
      : kernels_(std::move(kernels)), id_(g_next_module_id.fetch_add(1)) {}

  ~VulkanModuleNode() override {
    // Pipelines live in the devices; drop this module's (no-op after exit-time shutdown).
    VulkanInstance* inst = VulkanInstance::existing();
    if (inst == nullptr) return;
    for (int d = 0; d < inst->num_devices(); ++d) {
      VulkanDevice* dev = inst->created_device(d);
      if (dev == nullptr) continue;
      std::lock_guard<std::mutex> lock(dev->mutex());
      try {
        dev->drop_module(id_);
      } catch (const Error&) {
      }
    }
  }

  std::string kind() const override { return "vulkan"; }
  bool is_binary_serializable() const override { return true; }
  std::string save_to_bytes() const override { return serialize_kernels(kernels_); }
  std::vector<std::string> list_functions() const override {
    std::vector<std::string> names;
    for (const KernelInfo& k : kernels_) names.push_back(k.name);
    return names;
  }

  std::optional<Function> get_local_function(const std::string& name) override {
    for (size_t i = 0; i < kernels_.size(); ++i) {
      if (kernels_[i].name != name) continue;
      Ref<VulkanModuleNode> self(this);  // the function keeps the module (and its kernels) alive
      return Function::from_packed(
          [self, i](Args args) -> Value {
            dispatch_kernel(self->id_, i, self->kernels_[i], args);
            return Value();
          },
          name);
    }
    return std::nullopt;
  }

  const std::vector<KernelInfo>& kernels() const { return kernels_; }

 private:
  std::vector<KernelInfo> kernels_;
  uint64_t id_;
};

Module load_vulkan_module(std::string_view bytes, const std::shared_ptr<void>&) {
  return make_vulkan_module(parse_kernels(bytes));
}

void register_all() {
  register_vulkan_device_api();
  register_module_loader("vulkan", load_vulkan_module);
  register_packed("module.loader.vulkan", [](Args args) -> Value {
    if (args.size() != 1) type_error("module.loader.vulkan expects 1 argument (bytes)");
    return Value(make_vulkan_module(parse_kernels(args[0].as_bytes())));
  });
  register_function("vulkan.num_devices", []() { return static_cast<int64_t>(num_devices()); });
  register_function("vulkan.validation_error_count", []() { return validation_error_count(); });
  register_function("vulkan.device_limits", [](int64_t id) -> Value {
    std::optional<DeviceLimits> l = query_device_limits(static_cast<int>(id));
    if (!l) return Value();
    std::vector<Value> kv;
    auto add = [&kv](const char* key, Value v) {
      kv.emplace_back(std::string(key));
      kv.push_back(std::move(v));
    };
    add("device_name", Value(l->device_name));
    add("api_version", Value(static_cast<int64_t>(l->api_version)));
    add("supported_subgroup_operations", Value(l->supported_subgroup_operations));
    add("max_push_constants_size", Value(l->max_push_constants_size));
    add("max_uniform_buffer_range", Value(l->max_uniform_buffer_range));
    add("max_num_threads", Value(l->max_num_threads));
    add("thread_warp_size", Value(l->thread_warp_size));
    add("max_shared_memory_per_block", Value(l->max_shared_memory_per_block));
    add("min_storage_buffer_offset_alignment", Value(l->min_storage_buffer_offset_alignment));
    add("supports_float16", Value(l->supports_float16));
    add("supports_float64", Value(l->supports_float64));
    add("supports_int8", Value(l->supports_int8));
    add("supports_int16", Value(l->supports_int16));
    add("supports_int64", Value(l->supports_int64));
    add("supports_8bit_buffer", Value(l->supports_8bit_buffer));
    add("supports_16bit_buffer", Value(l->supports_16bit_buffer));
    add("supports_push_descriptor", Value(l->supports_push_descriptor));
    return Value(std::move(kv));
  });
}

}  // namespace

Module make_vulkan_module(std::vector<KernelInfo> kernels) {
  std::set<std::string> names;
  for (size_t i = 0; i < kernels.size(); ++i) {
    check_kernel_info(kernels[i], str_cat("make_vulkan_module: kernel ", i, " ('", kernels[i].name, "')"));
    if (!names.insert(kernels[i].name).second)
      value_error("make_vulkan_module: two kernels are named '", kernels[i].name, "'");
  }
  return Module(make_object<VulkanModuleNode>(std::move(kernels)));
}

const std::vector<KernelInfo>& vulkan_module_kernels(const Module& module) {
  if (!module.defined() || module.kind() != "vulkan")
    value_error("vulkan_module_kernels: expected a module of kind \"vulkan\", got ",
                module.defined() ? "\"" + module.kind() + "\"" : std::string("an undefined module"));
  return static_cast<const VulkanModuleNode*>(module.node())->kernels();
}

void register_vulkan() {
  static std::once_flag once;
  std::call_once(once, register_all);
}

}  // namespace anvil::vulkan
