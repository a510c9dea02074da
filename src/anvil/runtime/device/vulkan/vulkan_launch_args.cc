// Argument checks, scalar block and grid of one kernel call.
#include "anvil/runtime/device/vulkan/vulkan_launch_args.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "anvil/base/error.h"
#include "anvil/runtime/tensor.h"

namespace anvil::vulkan {
namespace {

template <typename T>
void store(std::string& block, uint32_t offset, T v) {
  std::memcpy(block.data() + offset, &v, sizeof(T));
}

// Writes an integer into a slot, checking that it fits the slot's type.
void store_int(const KernelInfo& k, const std::string& what, const ScalarSlot& slot, int64_t v, std::string& block) {
  auto range = [&](int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      value_error("vulkan kernel '", k.name, "': ", what, " = ", v, " does not fit its slot type ",
                  DataType(slot.dtype).to_string());
  };
  if (slot.dtype.code == kDLInt && slot.dtype.bits == 32) {
    range(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
    store(block, slot.offset, static_cast<int32_t>(v));
  } else if (slot.dtype.code == kDLInt) {
    store(block, slot.offset, v);
  } else if (slot.dtype.code == kDLUInt) {
    range(0, std::numeric_limits<uint32_t>::max());
    store(block, slot.offset, static_cast<uint32_t>(v));
  } else if (slot.dtype.bits == 16) {
    store(block, slot.offset, float_to_half(static_cast<float>(v)));
  } else if (slot.dtype.bits == 32) {
    store(block, slot.offset, static_cast<float>(v));
  } else {
    store(block, slot.offset, static_cast<double>(v));
  }
}

std::string arg_name(const KernelInfo& k, size_t i) { return str_cat("argument ", i, " ('", k.args[i].name, "')"); }

}  // namespace

uint16_t float_to_half(float v) {
  uint32_t x = std::bit_cast<uint32_t>(v);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into the exponent: fine
  return static_cast<uint16_t>(sign | half);
}

LaunchArgs prepare_launch(const KernelInfo& k, Args args, const std::function<uint64_t(int)>& storage_alignment,
                          const std::function<std::array<uint32_t, 3>(int)>& max_groups) {
  if (args.size() != k.args.size())
    type_error("vulkan kernel '", k.name, "' takes ", k.args.size(), " arguments but got ", args.size());
  LaunchArgs out;
  out.block.assign(k.block_bytes, '\0');
  std::vector<int64_t> slot_values(k.slots.size(), 0);
  std::vector<bool> slot_set(k.slots.size(), false);
  std::vector<int32_t> slot_from(k.slots.size(), -1);
  bool have_device = false;
  for (size_t i = 0; i < k.args.size(); ++i) {
    const KernelArg& a = k.args[i];
    if (a.kind == KernelArg::kScalar) {
      const ScalarSlot& slot = k.slots[a.slot];
      const Value& v = args[i];
      if (v.kind() != ValueKind::kInt && v.kind() != ValueKind::kFloat && v.kind() != ValueKind::kBool)
        type_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " must be a scalar, got ", v.kind_name());
      if (slot.dtype.code == kDLFloat) {
        double d = v.as_float();
        if (slot.dtype.bits == 16)
          store(out.block, slot.offset, float_to_half(static_cast<float>(d)));
        else if (slot.dtype.bits == 32)
          store(out.block, slot.offset, static_cast<float>(d));
        else
          store(out.block, slot.offset, d);
      } else {
        if (v.kind() == ValueKind::kFloat)
          value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " is an integer (",
                      DataType(slot.dtype).to_string(), ") but got the float ", v.as_float());
        int64_t x = v.as_int();
        // The same symbol may also be a tensor dimension seen earlier: they must agree.
        if (slot_set[a.slot] && slot_values[a.slot] != x)
          value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " = ", x, " but ",
                      arg_name(k, static_cast<size_t>(slot_from[a.slot])), " has that dimension as ",
                      slot_values[a.slot]);
        store_int(k, arg_name(k, i), slot, x, out.block);
        slot_values[a.slot] = x;
        slot_from[a.slot] = static_cast<int32_t>(i);
      }
      slot_set[a.slot] = true;
      continue;
    }
    const Value& v = args[i];
    if (v.kind() != ValueKind::kTensor)
      type_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " must be a tensor, got ", v.kind_name());
    Tensor t = v.as_tensor();
    const DLTensor* dl = t.dl();
    Device dev = t.device();
    if (dev.type != kDLVulkan)
      value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " is on ", dev, "; it must be on a Vulkan device");
    if (!have_device) {
      out.device_id = dev.id;
      have_device = true;
    } else if (dev.id != out.device_id) {
      value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " is on ", dev,
                  " but earlier tensors are on vulkan:", out.device_id);
    }
    if (!(t.dtype() == DataType(a.dtype)))
      value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " has dtype ", t.dtype().to_string(), ", expected ",
                  DataType(a.dtype).to_string());
    if (t.ndim() != static_cast<int>(a.shape.size()))
      value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " has rank ", t.ndim(), " (shape ",
                  shape_to_string(t.shape()), "), expected rank ", a.shape.size());
    for (size_t d = 0; d < a.shape.size(); ++d) {
      int64_t got = t.shape()[d];
      if (a.shape[d] >= 0) {
        if (got != a.shape[d])
          value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " has shape ", shape_to_string(t.shape()),
                      " but dim ", d, " must be ", a.shape[d]);
        continue;
      }
      int32_t s = a.shape_slot[d];
      if (slot_set[s]) {
        if (slot_values[s] != got)
          value_error(
              "vulkan kernel '", k.name, "': ", arg_name(k, i), " dim ", d, " is ", got, " but ",
              slot_from[s] >= 0 ? arg_name(k, static_cast<size_t>(slot_from[s])) : std::string("an earlier argument"),
              " gave that symbolic dim the value ", slot_values[s]);
        continue;
      }
      store_int(k, str_cat(arg_name(k, i), " dim ", d), k.slots[s], got, out.block);
      slot_values[s] = got;
      slot_set[s] = true;
      slot_from[s] = static_cast<int32_t>(i);
    }
    if (!t.is_contiguous())
      value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " must be compact (row-major) but has strides ",
                  shape_to_string(t.strides()));
    uint64_t align = storage_alignment(dev.id);
    if (align > 1 && dl->byte_offset % align != 0)
      value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " has byte_offset ", dl->byte_offset,
                  ", which is not a multiple of vulkan:", dev.id, "'s minStorageBufferOffsetAlignment (", align, ")");
    if (dl->data == nullptr) value_error("vulkan kernel '", k.name, "': ", arg_name(k, i), " has no memory");
    out.tensors.push_back(dl);
  }
  std::array<uint32_t, 3> limit = max_groups(out.device_id);
  for (int g = 0; g < 3; ++g) {
    int64_t n = k.grid[g].eval(slot_values);
    if (n < 0 || n > static_cast<int64_t>(limit[g]))
      value_error("vulkan kernel '", k.name, "': grid[", g, "] = ", n, " workgroups is outside [0, ", limit[g],
                  "] (maxComputeWorkGroupCount) for these arguments");
    out.grid[g] = static_cast<uint32_t>(n);
  }
  return out;
}

}  // namespace anvil::vulkan
