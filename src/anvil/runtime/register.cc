// The runtime's global functions. Names follow TVM where TVM has one ("testing.echo").
#include "anvil/runtime/register.h"

#include <mutex>

#include "anvil/runtime/device/vulkan/vulkan_register.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/memory/allocator.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/module/params_module.h"
#include "anvil/runtime/profiling/time_evaluator.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/tensor_io.h"
#include "anvil/runtime/threading/thread_pool.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil {
namespace {

void register_all() {
  register_device_apis();
  vulkan::register_vulkan();

  register_module_loader("params", [](std::string_view bytes, const std::shared_ptr<void>&) {
    return make_params_module(load_params(bytes));
  });
  register_packed("module.loader.params", [](Args args) -> Value {
    if (args.size() != 1) type_error("module.loader.params expects 1 argument (bytes)");
    return Value(make_params_module(load_params(args[0].as_bytes())));
  });

  register_function("runtime.load_module", [](const std::string& path) { return Module::load_from_file(path); });
  register_function("runtime.tensor_empty", [](std::vector<int64_t> shape, DataType dtype, Device device) {
    return Tensor::empty(shape, dtype, device);
  });
  register_function("runtime.device_attr", [](Device device, const std::string& attr) {
    return DeviceAPI::get(device)->get_attr(device, device_attr_from_name(attr));
  });
  register_function("runtime.device_exists", [](Device device) {
    DeviceAPI* api = DeviceAPI::get(device, /*allow_missing=*/true);
    if (api == nullptr) return false;
    Value exists = api->get_attr(device, DeviceAttr::kExist);
    return !exists.is_null() && exists.as_bool();
  });
  register_function("runtime.allocator_bytes_held", [](Device device, const std::string& kind) {
    return static_cast<int64_t>(get_allocator(device, allocator_kind_from_name(kind))->bytes_held());
  });
  register_function("runtime.allocator_release_unused", [](Device device, const std::string& kind) {
    get_allocator(device, allocator_kind_from_name(kind))->release_unused();
  });
  register_function("runtime.num_threads", []() { return static_cast<int64_t>(runtime::ThreadPool::global().num_threads()); });

  // Arrays (what a VM function returns for a tuple), reachable by clients that hold only a
  // handle to one, e.g. over RPC: TVM's names.
  register_packed("ffi.ArraySize", [](Args args) -> Value {
    if (args.size() != 1) type_error("ffi.ArraySize expects 1 argument (array) but got ", args.size());
    return Value(static_cast<int64_t>(args[0].as_array().size()));
  });
  register_packed("ffi.ArrayGetItem", [](Args args) -> Value {
    if (args.size() != 2) type_error("ffi.ArrayGetItem expects 2 arguments (array, index) but got ", args.size());
    const std::vector<Value>& items = args[0].as_array();
    int64_t i = args[1].as_int();
    if (i < 0 || i >= static_cast<int64_t>(items.size()))
      index_error("ffi.ArrayGetItem: index ", i, " is out of range for an array of ", items.size());
    return items[static_cast<size_t>(i)];
  });

  register_packed("testing.echo", [](Args args) -> Value {
    if (args.size() != 1) type_error("testing.echo expects 1 argument but got ", args.size());
    return args[0];
  });
  register_packed("testing.nop", [](Args) -> Value { return Value(); });

  register_time_evaluator();
  vm::register_vm_functions();
}

}  // namespace

void register_runtime_functions() {
  static std::once_flag once;
  std::call_once(once, register_all);
}

}  // namespace anvil
