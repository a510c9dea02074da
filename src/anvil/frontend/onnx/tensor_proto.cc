#include "anvil/frontend/onnx/tensor_proto.h"

#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/data_types.h"
#include "anvil/frontend/onnx/external_data.h"

namespace anvil::frontend::onnx {
namespace fs = std::filesystem;

// raw_data and external files are little-endian; on this host that is the memory layout.
static_assert(std::endian::native == std::endian::little, "tensor_proto.cc copies little-endian data as is");

namespace {

// The typed field a dtype's values go in (onnx.proto's rules), by name for messages.
enum class Field { kFloat, kDouble, kInt32, kInt64, kUInt64 };

Field typed_field(int32_t code) {
  switch (code) {
    case TensorProto::FLOAT:
      return Field::kFloat;
    case TensorProto::DOUBLE:
      return Field::kDouble;
    case TensorProto::INT64:
      return Field::kInt64;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      return Field::kUInt64;
    default:
      return Field::kInt32;  // INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16
  }
}

const char* field_name(Field f) {
  switch (f) {
    case Field::kFloat:
      return "float_data";
    case Field::kDouble:
      return "double_data";
    case Field::kInt32:
      return "int32_data";
    case Field::kInt64:
      return "int64_data";
    case Field::kUInt64:
      return "uint64_data";
  }
  return "?";
}

int field_size(const TensorProto& t, Field f) {
  switch (f) {
    case Field::kFloat:
      return t.float_data_size();
    case Field::kDouble:
      return t.double_data_size();
    case Field::kInt32:
      return t.int32_data_size();
    case Field::kInt64:
      return t.int64_data_size();
    case Field::kUInt64:
      return t.uint64_data_size();
  }
  return 0;
}

// Narrows int32_data / uint64_data values into T, refusing values T cannot hold.
template <typename T, typename Src>
void narrow_into(const Src& values, void* dst, int64_t lo, uint64_t hi, const std::string& label) {
  T* out = static_cast<T*>(dst);
  for (int i = 0; i < values.size(); ++i) {
    auto v = values.Get(i);
    bool in_range;
    if constexpr (std::is_signed_v<decltype(v)>) {
      in_range = v >= lo && (v < 0 || static_cast<uint64_t>(v) <= hi);
    } else {
      in_range = v <= hi;
    }
    if (!in_range) {
      value_error(label, ": value ", v, " at index ", i, " is out of range [", lo, ", ", hi, "] for its data type");
    }
    out[i] = static_cast<T>(v);
  }
}

void copy_typed(const TensorProto& t, int32_t code, const std::string& label, void* dst) {
  const auto& i32 = t.int32_data();
  switch (code) {
    case TensorProto::FLOAT:
      std::memcpy(dst, t.float_data().data(), t.float_data_size() * sizeof(float));
      return;
    case TensorProto::DOUBLE:
      std::memcpy(dst, t.double_data().data(), t.double_data_size() * sizeof(double));
      return;
    case TensorProto::INT64:
      std::memcpy(dst, t.int64_data().data(), t.int64_data_size() * sizeof(int64_t));
      return;
    case TensorProto::UINT64:
      std::memcpy(dst, t.uint64_data().data(), t.uint64_data_size() * sizeof(uint64_t));
      return;
    case TensorProto::UINT32:
      narrow_into<uint32_t>(t.uint64_data(), dst, 0, UINT32_MAX, label);
      return;
    case TensorProto::INT32:
      std::memcpy(dst, i32.data(), i32.size() * sizeof(int32_t));
      return;
    case TensorProto::INT16:
      narrow_into<int16_t>(i32, dst, INT16_MIN, INT16_MAX, label);
      return;
    case TensorProto::INT8:
      narrow_into<int8_t>(i32, dst, INT8_MIN, INT8_MAX, label);
      return;
    case TensorProto::UINT16:
      narrow_into<uint16_t>(i32, dst, 0, UINT16_MAX, label);
      return;
    case TensorProto::UINT8:
      narrow_into<uint8_t>(i32, dst, 0, UINT8_MAX, label);
      return;
    // The uint16 bit pattern; writers that stored it as int16 give negative values.
    case TensorProto::FLOAT16:
      narrow_into<uint16_t>(i32, dst, INT16_MIN, UINT16_MAX, label);
      return;
    // bfloat16 and float8 values: the bit pattern, one per int32.
    case TensorProto::BFLOAT16:
      narrow_into<uint16_t>(i32, dst, 0, UINT16_MAX, label);
      return;
    case kOnnxFloat8E4M3FN:
    case kOnnxFloat8E4M3FNUZ:
    case kOnnxFloat8E5M2:
    case kOnnxFloat8E5M2FNUZ:
    case kOnnxFloat8E8M0:
      narrow_into<uint8_t>(i32, dst, 0, UINT8_MAX, label);
      return;
    case TensorProto::BOOL: {
      auto* out = static_cast<uint8_t*>(dst);
      for (int i = 0; i < i32.size(); ++i) out[i] = i32.Get(i) != 0;
      return;
    }
    default:
      ANVIL_ICHECK(false, "copy_typed: dtype ", code, " passed the supported-dtype check");
  }
}

// The sub-byte types (int4, uint4, int2, uint2, float4e2m1) come packed, element 0 in the lowest
// bits of byte 0; Anvil keeps one element per byte, in its low bits (runtime/data_type.h).
void unpack_sub_byte(const uint8_t* packed, int64_t numel, int bits, void* dst) {
  auto* out = static_cast<uint8_t*>(dst);
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  for (int64_t i = 0; i < numel; ++i)
    out[i] = static_cast<uint8_t>(packed[i / per_byte] >> (bits * (i % per_byte))) & mask;
}

// Booleans must be 0 or 1 in memory; raw bytes may hold any non-zero value for true.
void normalize_bools(void* data, size_t n) {
  auto* p = static_cast<uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) p[i] = p[i] != 0;
}

[[noreturn]] void bytes_mismatch(const std::string& label, const std::vector<int64_t>& shape, DataType dt,
                                 const char* where, uint64_t actual, int64_t numel) {
  value_error(label, " (", dt, ", shape ", shape_to_string(shape), "): ", where, " holds ", actual, " bytes; expected ",
              static_cast<uint64_t>(numel) * dt.bytes(), " (", numel, " elements x ", dt.bytes(), " bytes)");
}

}  // namespace

std::string tensor_label(const TensorProto& tensor) {
  return tensor.name().empty() ? std::string("unnamed tensor") : str_cat("tensor '", tensor.name(), "'");
}

std::vector<int64_t> tensor_shape(const TensorProto& tensor) {
  std::vector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  int64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      value_error(tensor_label(tensor), ": dims[", i, "] is ", shape[i], " in ", shape_to_string(shape),
                  "; expected dims >= 0");
    }
    if (__builtin_mul_overflow(numel, shape[i], &numel)) {
      value_error(tensor_label(tensor), ": dims ", shape_to_string(shape), " overflow int64 elements");
    }
  }
  return shape;
}

Tensor tensor_from_proto(const TensorProto& tensor, const fs::path& base_dir) {
  const std::string label = tensor_label(tensor);
  const int32_t code = tensor.data_type();
  DataType dt = anvil_dtype_or_throw(code, label);
  if (tensor.has_segment()) not_implemented_error(label, ": segmented tensors (TensorProto.segment) are not supported");
  std::vector<int64_t> shape = tensor_shape(tensor);
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;  // tensor_shape checked for overflow
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel), dt.bytes(), &nbytes) ||
      nbytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    value_error(label, ": ", numel, " elements of ", dt, " overflow the addressable size");
  }

  const Field field = typed_field(code);
  const bool external = has_external_data(tensor);
  const int places = int(external) + int(tensor.has_raw_data()) + int(field_size(tensor, field) > 0);
  if (places > 1) {
    value_error(label, ": data is given in more than one place (", external ? "external data, " : "",
                tensor.has_raw_data() ? "raw_data, " : "", field_size(tensor, field) ? field_name(field) : "",
                "); expected exactly one");
  }
  for (Field other : {Field::kFloat, Field::kDouble, Field::kInt32, Field::kInt64, Field::kUInt64}) {
    if (other != field && field_size(tensor, other) > 0) {
      value_error(label, " (", onnx_dtype_name(code), "): has ", field_name(other), "; expected its values in ",
                  field_name(field), " or raw_data");
    }
  }

  const int proto_bits = onnx_dtype_bits(code);
  if (proto_bits < 8) {
    // Packed: raw_data, external data or int32_data (one packed byte per value) hold
    // ceil(numel * bits / 8) bytes.
    const uint64_t packed_bytes = (static_cast<uint64_t>(numel) * static_cast<uint64_t>(proto_bits) + 7) / 8;
    std::vector<uint8_t> packed(packed_bytes);
    uint64_t got = 0;
    const char* where = "int32_data";
    if (external) {
      ExternalDataRef ref = resolve_external_data(tensor, base_dir);
      got = ref.length;
      where = "external data";
      if (got == packed_bytes) read_external_data(ref, tensor.name(), packed.data());
    } else if (tensor.has_raw_data()) {
      got = tensor.raw_data().size();
      where = "raw_data";
      if (got == packed_bytes) std::memcpy(packed.data(), tensor.raw_data().data(), packed_bytes);
    } else {
      got = static_cast<uint64_t>(tensor.int32_data_size());
      if (got == packed_bytes) narrow_into<uint8_t>(tensor.int32_data(), packed.data(), 0, UINT8_MAX, label);
    }
    if (got != packed_bytes) {
      value_error(label, " (", dt, ", shape ", shape_to_string(shape), "): ", where, " holds ", got,
                  " bytes; expected ", packed_bytes, " (", numel, " elements packed ", 8 / proto_bits, " per byte)");
    }
    Tensor out = Tensor::empty(std::span<const int64_t>(shape), dt);
    unpack_sub_byte(packed.data(), numel, proto_bits, out.data());
    return out;
  }
  if (external) {
    ExternalDataRef ref = resolve_external_data(tensor, base_dir);
    if (ref.length != nbytes) bytes_mismatch(label, shape, dt, "external data", ref.length, numel);
    Tensor out = Tensor::empty(std::span<const int64_t>(shape), dt);
    read_external_data(ref, tensor.name(), out.data());
    if (dt.is_bool()) normalize_bools(out.data(), nbytes);
    return out;
  }
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != nbytes) {
      bytes_mismatch(label, shape, dt, "raw_data", tensor.raw_data().size(), numel);
    }
    Tensor out = Tensor::empty(std::span<const int64_t>(shape), dt);
    if (nbytes) std::memcpy(out.data(), tensor.raw_data().data(), nbytes);
    if (dt.is_bool()) normalize_bools(out.data(), nbytes);
    return out;
  }
  uint64_t count = static_cast<uint64_t>(field_size(tensor, field));
  if (count == 0 && numel > 0) {
    value_error(label, " (", dt, ", shape ", shape_to_string(shape), "): has no data (no raw_data, ", field_name(field),
                " or external data); expected ", numel, " elements");
  }
  if (count != static_cast<uint64_t>(numel)) {
    value_error(label, " (", dt, ", shape ", shape_to_string(shape), "): ", field_name(field), " holds ", count,
                " values; expected ", numel, " (one per element)");
  }
  Tensor out = Tensor::empty(std::span<const int64_t>(shape), dt);
  if (numel) copy_typed(tensor, code, label, out.data());
  return out;
}

}  // namespace anvil::frontend::onnx
