// DeviceAPI for Vulkan devices.
#include "anvil/runtime/device/vulkan/vulkan_device_api.h"

#include <algorithm>
#include <cstring>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_device.h"
#include "anvil/runtime/device/vulkan/vulkan_stream.h"

namespace anvil::vulkan {
namespace {

std::string version_string(uint32_t v) {
  return str_cat(VK_API_VERSION_MAJOR(v), ".", VK_API_VERSION_MINOR(v), ".", VK_API_VERSION_PATCH(v));
}

VulkanDevice& get_device(Device dev) {
  if (dev.type != kDLVulkan) value_error("vulkan device API: ", dev, " is not a Vulkan device");
  VulkanInstance* inst = VulkanInstance::get();
  if (inst == nullptr) runtime_error("vulkan device API: the Vulkan runtime has shut down");
  return inst->device(dev.id);
}

VulkanStream& stream_of(VulkanDevice& d, Stream s) {
  if (s == nullptr) return d.default_stream();
  auto* stream = static_cast<VulkanStream*>(s);
  if (!d.owns_stream(stream)) value_error("vulkan: the stream was not made by create_stream on vulkan:", d.id());
  // Kernels run on the default stream: work on another stream comes after what they have
  // recorded (its results, its reads), so they run first.
  d.default_stream().sync();
  return *stream;
}

class VulkanDeviceAPI final : public DeviceAPI {
 public:
  void set_device(Device dev) override { get_device(dev); }

  Value get_attr(Device dev, DeviceAttr attr) override {
    VulkanInstance* inst = VulkanInstance::get();
    bool exists = inst != nullptr && dev.id >= 0 && dev.id < inst->num_devices();
    if (attr == DeviceAttr::kExist) return Value(int64_t{exists ? 1 : 0});
    if (!exists) return Value();
    const PhysicalDeviceInfo& p = inst->physical(dev.id);
    const VkPhysicalDeviceLimits& l = p.props.limits;
    switch (attr) {
      case DeviceAttr::kMaxThreadsPerBlock:
        return Value(int64_t{l.maxComputeWorkGroupInvocations});
      case DeviceAttr::kWarpSize:
        return Value(int64_t{p.subgroup_size});
      case DeviceAttr::kMaxSharedMemoryPerBlock:
        return Value(int64_t{l.maxComputeSharedMemorySize});
      case DeviceAttr::kComputeVersion:
        return Value(version_string(p.limits.api_version));
      case DeviceAttr::kDeviceName:
        return Value(std::string(p.props.deviceName));
      case DeviceAttr::kMaxThreadDimensions:
        return Value(str_cat("[", l.maxComputeWorkGroupSize[0], ", ", l.maxComputeWorkGroupSize[1], ", ",
                             l.maxComputeWorkGroupSize[2], "]"));
      case DeviceAttr::kApiVersion:
        return Value(int64_t{VK_HEADER_VERSION});
      case DeviceAttr::kDriverVersion:
        return Value(version_string(p.props.driverVersion));
      case DeviceAttr::kTotalGlobalMemory:
        return Value(static_cast<int64_t>(p.device_local_heap_bytes));
      default:
        return Value();  // clock rate, SM count, L2 size, free memory: Vulkan does not say
    }
  }

  void* alloc(Device dev, size_t nbytes, size_t alignment) override {
    if (alignment & (alignment - 1)) value_error("vulkan alloc: alignment ", alignment, " is not a power of two");
    VulkanDevice& d = get_device(dev);
    std::lock_guard<std::mutex> lock(d.mutex());
    return d.alloc_tensor_buffer(nbytes);
  }

  void free(Device dev, void* ptr) override {
    if (ptr == nullptr || !VulkanInstance::alive()) return;  // after exit-time shutdown: already gone
    VulkanInstance* inst = VulkanInstance::get();
    VulkanDevice* d = inst ? inst->created_device(dev.id) : nullptr;
    if (d == nullptr) value_error("vulkan free: ", dev, " has allocated nothing");
    std::lock_guard<std::mutex> lock(d->mutex());
    d->free_tensor_buffer(static_cast<VulkanBuffer*>(ptr));
  }

  void copy(const void* from, size_t from_offset, void* to, size_t to_offset, size_t nbytes, Device from_dev,
            Device to_dev, Stream stream) override {
    if (nbytes == 0) return;
    bool from_host = from_dev.type == kDLCPU, to_host = to_dev.type == kDLCPU;
    if (from_host && to_host) {
      std::memmove(static_cast<char*>(to) + to_offset, static_cast<const char*>(from) + from_offset, nbytes);
      return;
    }
    if (!from_host && !to_host) {
      if (!(from_dev == to_dev))
        not_implemented_error("vulkan copy: ", from_dev, " -> ", to_dev,
                              ": copies between Vulkan devices go through the host");
      VulkanDevice& d = get_device(from_dev);
      std::lock_guard<std::mutex> lock(d.mutex());
      auto* src = checked(d, from, from_offset, nbytes, "source");
      auto* dst = checked(d, to, to_offset, nbytes, "destination");
      VulkanStream& s = stream_of(d, stream);
      bool overlap = src == dst && from_offset < to_offset + nbytes && to_offset < from_offset + nbytes;
      if (overlap) {
        if (from_offset == to_offset) return;
        // vkCmdCopyBuffer forbids overlapping regions: go through a temporary buffer.
        VulkanBuffer* tmp = d.create_buffer(nbytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                            /*host_visible=*/false);
        VkBufferCopy in{from_offset, 0, nbytes}, out{0, to_offset, nbytes};
        d.fn().vkCmdCopyBuffer(s.record(), src->buffer, tmp->buffer, 1, &in);
        s.barrier_after_transfer();
        d.fn().vkCmdCopyBuffer(s.record(), tmp->buffer, dst->buffer, 1, &out);
        s.barrier_after_transfer();
        s.destroy_after_sync(tmp);
        return;
      }
      VkBufferCopy region{from_offset, to_offset, nbytes};
      d.fn().vkCmdCopyBuffer(s.record(), src->buffer, dst->buffer, 1, &region);
      s.barrier_after_transfer();
      return;
    }
    VulkanDevice& d = get_device(from_host ? to_dev : from_dev);
    std::lock_guard<std::mutex> lock(d.mutex());
    VulkanStream& s = stream_of(d, stream);
    const DeviceFunctions& fn = d.fn();
    if (from_host) {
      auto* dst = checked(d, to, to_offset, nbytes, "destination");
      const char* src = static_cast<const char*>(from) + from_offset;
      for (size_t done = 0; done < nbytes;) {
        VulkanBuffer& staging = d.staging(nbytes - done);
        size_t chunk = std::min<size_t>(nbytes - done, staging.size);
        std::memcpy(staging.mapped, src + done, chunk);
        if (!staging.coherent) flush(d, staging);
        VkBufferCopy region{0, to_offset + done, chunk};
        fn.vkCmdCopyBuffer(s.record(), staging.buffer, dst->buffer, 1, &region);
        s.barrier_after_transfer();
        s.sync();  // the staging buffer is reused by the next chunk
        done += chunk;
      }
    } else {
      auto* src = checked(d, from, from_offset, nbytes, "source");
      char* dst = static_cast<char*>(to) + to_offset;
      for (size_t done = 0; done < nbytes;) {
        VulkanBuffer& staging = d.staging(nbytes - done);
        size_t chunk = std::min<size_t>(nbytes - done, staging.size);
        VkBufferCopy region{from_offset + done, 0, chunk};
        fn.vkCmdCopyBuffer(s.record(), src->buffer, staging.buffer, 1, &region);
        s.barrier_after_transfer();
        s.sync();  // also runs the kernels recorded before: their results are what we read
        if (!staging.coherent) invalidate(d, staging);
        std::memcpy(dst + done, staging.mapped, chunk);
        done += chunk;
      }
    }
  }

  Stream create_stream(Device dev) override {
    VulkanDevice& d = get_device(dev);
    std::lock_guard<std::mutex> lock(d.mutex());
    return d.create_stream();
  }

  void free_stream(Device dev, Stream stream) override {
    if (stream == nullptr || !VulkanInstance::alive()) return;
    VulkanDevice& d = get_device(dev);
    std::lock_guard<std::mutex> lock(d.mutex());
    d.free_stream(static_cast<VulkanStream*>(stream));
  }

  void sync(Device dev, Stream stream) override {
    VulkanDevice& d = get_device(dev);
    std::lock_guard<std::mutex> lock(d.mutex());
    stream_of(d, stream).sync();
  }

 private:
  static VulkanBuffer* checked(VulkanDevice& d, const void* ptr, size_t offset, size_t nbytes, const char* what) {
    auto* b = static_cast<VulkanBuffer*>(const_cast<void*>(ptr));
    if (b == nullptr || !d.owns_tensor_buffer(b))
      value_error("vulkan copy: the ", what, " is not memory of vulkan:", d.id());
    if (offset > b->size || nbytes > b->size - offset)
      value_error("vulkan copy: ", nbytes, " bytes at offset ", offset, " overrun the ", what, "'s ", b->size,
                  "-byte buffer");
    return b;
  }
  static void flush(VulkanDevice& d, VulkanBuffer& b) {
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, b.memory, 0, VK_WHOLE_SIZE};
    d.fn().vkFlushMappedMemoryRanges(d.handle(), 1, &range);
  }
  static void invalidate(VulkanDevice& d, VulkanBuffer& b) {
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, b.memory, 0, VK_WHOLE_SIZE};
    d.fn().vkInvalidateMappedMemoryRanges(d.handle(), 1, &range);
  }
};

}  // namespace

DeviceAPI* vulkan_device_api() {
  static VulkanDeviceAPI* api = new VulkanDeviceAPI();  // process lifetime; never destroyed
  return api;
}

void register_vulkan_device_api() {
  static const bool have_loader = [] {
    InstanceFunctions fns;
    return load_vulkan_library(&fns, nullptr);
  }();
  if (have_loader && DeviceAPI::get(kDLVulkan, /*allow_missing=*/true) == nullptr)
    DeviceAPI::set(kDLVulkan, vulkan_device_api());
}

}  // namespace anvil::vulkan
