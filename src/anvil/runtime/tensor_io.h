// Saving tensors to bytes and back: the format of params files and of tensors inside modules.
// One tensor: magic "ANVLTENS", u32 version, u32 reserved, i32 ndim, u8 dtype code, u8 bits,
// u16 lanes, i64 shape[ndim], u64 data bytes, raw little-endian data (always from the host).
// A dict: magic "ANVLPARM", u32 version, u32 reserved, u64 count, then per entry a name string
// (u64 length + bytes) and a tensor as above.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "anvil/runtime/module/byte_io.h"
#include "anvil/runtime/tensor.h"

namespace anvil {

void write_tensor(const Tensor& tensor, ByteWriter* out);
Tensor read_tensor(ByteReader* in, Device device = Device::cpu());

std::string save_params(const std::map<std::string, Tensor>& params);
// ValueError naming the field and offset on any corruption.
std::map<std::string, Tensor> load_params(std::string_view bytes, Device device = Device::cpu());

}  // namespace anvil
