// Tensor and params serialisation.
#include "anvil/runtime/tensor_io.h"

#include <cstring>

namespace anvil {
namespace {

constexpr char kTensorMagic[8] = {'A', 'N', 'V', 'L', 'T', 'E', 'N', 'S'};
constexpr char kParamsMagic[8] = {'A', 'N', 'V', 'L', 'P', 'A', 'R', 'M'};
constexpr uint32_t kFormatVersion = 1;
constexpr int32_t kMaxNdim = kTensorMaxNdim;

void check_magic(ByteReader* in, const char (&magic)[8], std::string_view what) {
  std::string_view got = in->get_bytes(8, "magic");
  if (std::memcmp(got.data(), magic, 8) != 0) in->fail(str_cat("bad magic: not an Anvil ", what));
  uint32_t version = in->get<uint32_t>("version");
  if (version != kFormatVersion)
    in->fail(str_cat(what, " format version ", version, " is not supported (this runtime reads ", kFormatVersion, ")"));
  in->get<uint32_t>("reserved");
}

}  // namespace

void write_tensor(const Tensor& tensor, ByteWriter* out) {
  out->put_bytes(std::string_view(kTensorMagic, 8));
  out->put<uint32_t>(kFormatVersion);
  out->put<uint32_t>(0);
  out->put<int32_t>(tensor.ndim());
  DLDataType dt = tensor.dtype().dl();
  out->put<uint8_t>(dt.code);
  out->put<uint8_t>(dt.bits);
  out->put<uint16_t>(dt.lanes);
  for (int64_t d : tensor.shape()) out->put<int64_t>(d);
  std::string data(tensor.nbytes(), '\0');
  tensor.copy_to_bytes(data.data(), data.size());
  out->put<uint64_t>(data.size());
  out->put_bytes(data);
}

Tensor read_tensor(ByteReader* in, Device device, const std::shared_ptr<void>& backing, size_t in_place_alignment) {
  check_magic(in, kTensorMagic, "tensor");
  int32_t ndim = in->get<int32_t>("ndim");
  if (ndim < 0 || ndim > kMaxNdim) in->fail(str_cat("ndim ", ndim, " is out of range [0, ", kMaxNdim, "]"));
  DLDataType dt{};
  dt.code = in->get<uint8_t>("dtype code");
  dt.bits = in->get<uint8_t>("dtype bits");
  dt.lanes = in->get<uint16_t>("dtype lanes");
  if (!DataType(dt).is_tensor_element()) in->fail(str_cat("unsupported tensor dtype ", DataType(dt)));
  std::vector<int64_t> shape(static_cast<size_t>(ndim));
  uint64_t numel = 1;
  for (auto& d : shape) {
    d = in->get<int64_t>("shape");
    if (d < 0) in->fail(str_cat("negative dimension ", d));
    if (d != 0 && numel > in->remaining() / static_cast<uint64_t>(d) + 1) in->fail("shape larger than the data");
    numel *= static_cast<uint64_t>(d);
  }
  uint64_t nbytes = in->get<uint64_t>("data size");
  if (nbytes != numel * DataType(dt).bytes())
    in->fail(str_cat("data size ", nbytes, " does not match shape ", shape_to_string(shape), " of ", DataType(dt)));
  std::string_view data = in->get_bytes(nbytes, "tensor data");
  if (backing && in_place_alignment > 0 && device.type == kDLCPU &&
      reinterpret_cast<uintptr_t>(data.data()) % in_place_alignment == 0)
    return Tensor::wrap(const_cast<char*>(data.data()), shape, DataType(dt), device, backing);
  Tensor out = Tensor::empty(shape, DataType(dt), device);
  out.copy_from_bytes(data.data(), data.size());
  return out;
}

std::string save_params(const std::map<std::string, Tensor>& params) {
  ByteWriter out;
  out.put_bytes(std::string_view(kParamsMagic, 8));
  out.put<uint32_t>(kFormatVersion);
  out.put<uint32_t>(0);
  out.put<uint64_t>(params.size());
  for (const auto& [name, tensor] : params) {
    out.put_string(name);
    write_tensor(tensor, &out);
  }
  return std::move(out.str());
}

std::map<std::string, Tensor> load_params(std::string_view bytes, Device device) {
  ByteReader in(bytes, "params");
  check_magic(&in, kParamsMagic, "params file");
  uint64_t count = in.get_count("param count", 8 + 8 + 16);
  std::map<std::string, Tensor> params;
  for (uint64_t i = 0; i < count; ++i) {
    std::string name(in.get_string("param name"));
    Tensor t = read_tensor(&in, device);
    if (!params.emplace(name, t).second) in.fail(str_cat("duplicate param name '", name, "'"));
  }
  if (in.remaining() != 0) in.fail(str_cat(in.remaining(), " unexpected trailing bytes"));
  return params;
}

}  // namespace anvil
