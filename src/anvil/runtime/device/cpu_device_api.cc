// DeviceAPI for the host CPU: aligned allocation, memcpy, no streams.
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "anvil/base/error.h"
#include "anvil/runtime/device/cpu_device_api.h"

namespace anvil {
namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "cpu";
}

class CpuDeviceAPI final : public DeviceAPI {
 public:
  void set_device(Device) override {}

  Value get_attr(Device, DeviceAttr attr) override {
    switch (attr) {
      case DeviceAttr::kExist:
        return Value(int64_t{1});
      case DeviceAttr::kDeviceName:
        return Value(cpu_model_name());
      case DeviceAttr::kMultiProcessorCount:
        return Value(int64_t{std::thread::hardware_concurrency()});
      case DeviceAttr::kTotalGlobalMemory: {
        struct sysinfo info {};
        if (sysinfo(&info) != 0) return Value();
        return Value(static_cast<int64_t>(info.totalram) * info.mem_unit);
      }
      case DeviceAttr::kAvailableGlobalMemory: {
        long pages = sysconf(_SC_AVPHYS_PAGES);
        return pages < 0 ? Value() : Value(static_cast<int64_t>(pages) * sysconf(_SC_PAGESIZE));
      }
      default:
        return Value();
    }
  }

  void* alloc(Device, size_t nbytes, size_t alignment) override {
    if (alignment < kAllocAlignment) alignment = kAllocAlignment;
    if (alignment & (alignment - 1)) value_error("cpu alloc: alignment ", alignment, " is not a power of two");
    // aligned_alloc wants a size that is a multiple of the alignment; 0 bytes still yields a
    // unique pointer so empty tensors have a valid data address.
    size_t rounded = (nbytes + alignment - 1) / alignment * alignment;
    if (rounded == 0) rounded = alignment;
    if (rounded < nbytes) runtime_error("cpu alloc: size ", nbytes, " overflows");
    void* ptr = std::aligned_alloc(alignment, rounded);
    if (ptr == nullptr) runtime_error("cpu alloc: out of memory allocating ", nbytes, " bytes");
    return ptr;
  }

  void free(Device, void* ptr) override { std::free(ptr); }

  void copy(const void* from, size_t from_offset, void* to, size_t to_offset, size_t nbytes, Device,
            Device, Stream) override {
    if (nbytes == 0) return;
    std::memmove(static_cast<char*>(to) + to_offset, static_cast<const char*>(from) + from_offset, nbytes);
  }

  Stream create_stream(Device) override { return nullptr; }
  void free_stream(Device, Stream) override {}
  void sync(Device, Stream) override {}
};

}  // namespace

DeviceAPI* cpu_device_api() {
  static CpuDeviceAPI* cpu = new CpuDeviceAPI();  // process lifetime; never destroyed
  return cpu;
}

}  // namespace anvil
