// Saving tensors to bytes and back: the format of params files and of tensors inside modules.
// One tensor: magic "ANVLTENS", u32 version, u32 reserved, i32 ndim, u8 dtype code, u8 bits,
// u16 lanes, i64 shape[ndim], u64 data bytes, raw little-endian data (always from the host).
// A dict: magic "ANVLPARM", u32 version, u32 reserved, u64 count, then per entry a name string
// (u64 length + bytes) and a tensor as above.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "anvil/runtime/module/byte_io.h"
#include "anvil/runtime/tensor.h"

namespace anvil {

// The most dimensions a saved tensor may have.
inline constexpr int32_t kTensorMaxNdim = 64;

void write_tensor(const Tensor& tensor, ByteWriter* out);
// Reads one tensor into new memory on `device`. With `backing` (the owner of the memory `in`
// reads, kept unchanged while it lives), a host tensor whose data lies at a multiple of
// `in_place_alignment` bytes is not copied: the tensor points into those bytes, read-only, and
// holds `backing`.
Tensor read_tensor(ByteReader* in, Device device = Device::cpu(), const std::shared_ptr<void>& backing = nullptr,
                   size_t in_place_alignment = 0);

std::string save_params(const std::map<std::string, Tensor>& params);
// ValueError naming the field and offset on any corruption.
std::map<std::string, Tensor> load_params(std::string_view bytes, Device device = Device::cpu());

}  // namespace anvil
