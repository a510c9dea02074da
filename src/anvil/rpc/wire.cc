// PackedSeq and WireDLTensor encoding and strict decoding (see wire.h and spec §2.3-2.5).
#include "anvil/rpc/wire.h"

namespace anvil::rpc {
namespace {

// Device types beyond kMaxDeviceType are refused before they become a DLDeviceType (see protocol.h).
DLDeviceType read_device_type(Reader& r, const char* field) {
  int32_t type = r.i32(field);
  if (type < 0 || type > kMaxDeviceType) r.fail(str_cat("device type ", type, " outside [0, ", kMaxDeviceType, "]"));
  return static_cast<DLDeviceType>(type);
}

}  // namespace

std::string_view Reader::raw(uint64_t n, const char* field) {
  if (n > remaining()) {
    fail(str_cat("truncated: field '", field, "' needs ", n, " bytes at offset ", pos_, " but only ", remaining(),
                 " remain"));
  }
  std::string_view out = data_.substr(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return out;
}

void Reader::expect_end() {
  if (remaining() != 0) fail(str_cat(remaining(), " unexpected trailing bytes at offset ", pos_));
}

void Reader::fail(const std::string& message) const { throw ProtocolError(str_cat(what_, ": ", message)); }

uint64_t WireTensor::nbytes() const {
  uint64_t elems = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ProtocolError(str_cat("tensor has a negative dimension ", d));
    if (d != 0 && elems > UINT64_MAX / static_cast<uint64_t>(d)) throw ProtocolError("tensor size overflows 64 bits");
    elems *= static_cast<uint64_t>(d);
  }
  uint64_t elem_bits = static_cast<uint64_t>(dtype.bits) * dtype.lanes;
  uint64_t elem_bytes = (elem_bits + 7) / 8;
  if (elem_bytes != 0 && elems > UINT64_MAX / elem_bytes) throw ProtocolError("tensor size overflows 64 bits");
  return elems * elem_bytes;
}

WireValue WireValue::floating(double v) {
  WireValue w = make(WireKind::kFloat, TypeIndex::kFloat, 0);
  w.f = v;
  return w;
}

WireValue WireValue::data_type(DLDataType t) {
  WireValue w = make(WireKind::kDataType, TypeIndex::kDataType, 0);
  w.dtype = t;
  return w;
}

WireValue WireValue::dev(DLDevice d) {
  WireValue w = make(WireKind::kDevice, TypeIndex::kDevice, 0);
  w.device = d;
  return w;
}

WireValue WireValue::string(std::string v, bool as_object) {
  WireValue w = make(WireKind::kString, as_object ? TypeIndex::kStr : TypeIndex::kRawStr, 0);
  w.s = std::move(v);
  return w;
}

WireValue WireValue::bytes(std::string v, bool as_object) {
  WireValue w = make(WireKind::kBytes, as_object ? TypeIndex::kBytes : TypeIndex::kByteArrayPtr, 0);
  w.s = std::move(v);
  return w;
}

WireValue WireValue::tensor_ptr(WireTensor t) {
  WireValue w = make(WireKind::kTensor, TypeIndex::kDLTensorPtr, 0);
  w.tensor = std::move(t);
  return w;
}

std::string WireValue::describe() const {
  std::string name = type_index_name(type_index);
  switch (kind) {
    case WireKind::kInt:
    case WireKind::kBool:
      return str_cat(name, "(", i, ")");
    case WireKind::kFloat:
      return str_cat(name, "(", f, ")");
    case WireKind::kString:
    case WireKind::kBytes:
      return str_cat(name, "(", s.size(), " bytes)");
    case WireKind::kTensor:
      return str_cat(name, "(ndim=", tensor.shape.size(), ")");
    case WireKind::kOpaquePtr:
    case WireKind::kFunction:
    case WireKind::kModule:
    case WireKind::kObjectRef:
      return str_cat(name, "(0x", std::hex, handle(), ")");
    default:
      return name;
  }
}

void write_tensor(Writer& w, const WireTensor& t) {
  w.u64(t.data);
  w.i32(static_cast<int32_t>(t.device.device_type));
  w.i32(t.device.device_id);
  w.i32(static_cast<int32_t>(t.shape.size()));
  w.u8(t.dtype.code);
  w.u8(t.dtype.bits);
  w.u16(t.dtype.lanes);
  for (int64_t d : t.shape) w.i64(d);
  w.u64(t.byte_offset);
}

WireTensor read_tensor(Reader& r, const Limits& limits) {
  WireTensor t;
  t.data = r.u64("tensor.data");
  t.device.device_type = read_device_type(r, "tensor.device_type");
  t.device.device_id = r.i32("tensor.device_id");
  int32_t ndim = r.i32("tensor.ndim");
  if (ndim < 0 || ndim > limits.max_ndim) {
    r.fail(str_cat("tensor ndim ", ndim, " outside [0, ", limits.max_ndim, "]"));
  }
  t.dtype.code = r.u8("tensor.dtype.code");
  t.dtype.bits = r.u8("tensor.dtype.bits");
  t.dtype.lanes = r.u16("tensor.dtype.lanes");
  // Check the shape fits before reserving, so a lying ndim cannot allocate.
  if (r.remaining() < static_cast<size_t>(ndim) * 8) r.fail(str_cat("truncated: tensor shape of ", ndim, " dims"));
  t.shape.resize(static_cast<size_t>(ndim));
  for (int64_t& d : t.shape) {
    d = r.i64("tensor.shape");
    if (d < 0) r.fail(str_cat("tensor has a negative dimension ", d));
  }
  t.byte_offset = r.u64("tensor.byte_offset");
  return t;
}

void write_value(Writer& w, const WireValue& v) {
  auto object_header = [&](TypeIndex outer_default, TypeIndex inner) {
    bool object_form = v.type_index == static_cast<int32_t>(TypeIndex::kSmallStr) ||
                       v.type_index == static_cast<int32_t>(TypeIndex::kSmallBytes) || v.type_index >= 64;
    w.i32(object_form ? v.type_index : static_cast<int32_t>(outer_default));
    if (object_form) w.u32(static_cast<uint32_t>(inner));
  };
  switch (v.kind) {
    case WireKind::kNone:
      w.i32(static_cast<int32_t>(TypeIndex::kNone));
      return;
    case WireKind::kInt:
      w.i32(static_cast<int32_t>(TypeIndex::kInt));
      w.i64(v.i);
      return;
    case WireKind::kBool:
      w.i32(static_cast<int32_t>(TypeIndex::kBool));
      w.i64(v.i != 0 ? 1 : 0);
      return;
    case WireKind::kFloat:
      w.i32(static_cast<int32_t>(TypeIndex::kFloat));
      w.f64(v.f);
      return;
    case WireKind::kOpaquePtr:
      w.i32(static_cast<int32_t>(TypeIndex::kOpaquePtr));
      w.u64(v.handle());
      return;
    case WireKind::kDataType:
      w.i32(static_cast<int32_t>(TypeIndex::kDataType));
      w.u8(v.dtype.code);
      w.u8(v.dtype.bits);
      w.u16(v.dtype.lanes);
      w.i32(0);  // padding to 8 bytes
      return;
    case WireKind::kDevice:
      w.i32(static_cast<int32_t>(TypeIndex::kDevice));
      w.i32(static_cast<int32_t>(v.device.device_type));
      w.i32(v.device.device_id);
      return;
    case WireKind::kTensor:
      w.i32(static_cast<int32_t>(TypeIndex::kDLTensorPtr));
      write_tensor(w, v.tensor);
      return;
    case WireKind::kString:
      object_header(TypeIndex::kRawStr, TypeIndex::kStr);
      w.str(v.s);
      return;
    case WireKind::kBytes:
      object_header(TypeIndex::kByteArrayPtr, TypeIndex::kBytes);
      w.str(v.s);
      return;
    case WireKind::kFunction:
      w.i32(static_cast<int32_t>(TypeIndex::kFunction));
      w.u64(v.handle());
      return;
    case WireKind::kModule:
      w.i32(static_cast<int32_t>(TypeIndex::kModule));
      w.u64(v.handle());
      return;
    case WireKind::kObjectRef:
      w.i32(static_cast<int32_t>(TypeIndex::kRPCObjectRef));
      w.u32(static_cast<uint32_t>(TypeIndex::kRPCObjectRef));
      w.i64(v.i);
      return;
  }
  ANVIL_ICHECK(false, "write_value: unhandled wire kind ", static_cast<int>(v.kind));
}

namespace {

// Object encoding (spec §2.4): u32 inner index, then the payload it names.
WireValue read_object(Reader& r, int32_t outer) {
  uint32_t inner = r.u32("object.type_index");
  WireValue v;
  v.type_index = outer;
  switch (inner) {
    case static_cast<uint32_t>(TypeIndex::kRPCObjectRef):
      v.kind = WireKind::kObjectRef;
      v.i = r.i64("object.handle");
      return v;
    case static_cast<uint32_t>(TypeIndex::kStr):
      v.kind = WireKind::kString;
      v.s = std::string(r.str("object.str"));
      return v;
    case static_cast<uint32_t>(TypeIndex::kBytes):
      v.kind = WireKind::kBytes;
      v.s = std::string(r.str("object.bytes"));
      return v;
    default:
      r.fail(str_cat("object of type index ", inner, " (", type_index_name(static_cast<int32_t>(inner)),
                     ") cannot travel over RPC; only strings, bytes and remote object handles can"));
  }
}

}  // namespace

WireValue read_value(Reader& r, const Limits& limits) {
  int32_t index = r.i32("type_index");
  WireValue v;
  v.type_index = index;
  switch (index) {
    case static_cast<int32_t>(TypeIndex::kNone):
      return v;
    case static_cast<int32_t>(TypeIndex::kInt):
      v.kind = WireKind::kInt;
      v.i = r.i64("int");
      return v;
    case static_cast<int32_t>(TypeIndex::kBool):
      v.kind = WireKind::kBool;
      v.i = r.i64("bool") != 0 ? 1 : 0;
      return v;
    case static_cast<int32_t>(TypeIndex::kFloat):
      v.kind = WireKind::kFloat;
      v.f = r.f64("float");
      return v;
    case static_cast<int32_t>(TypeIndex::kOpaquePtr):
      v.kind = WireKind::kOpaquePtr;
      v.i = static_cast<int64_t>(r.u64("opaque_ptr"));
      return v;
    case static_cast<int32_t>(TypeIndex::kDataType):
      v.kind = WireKind::kDataType;
      v.dtype.code = r.u8("dtype.code");
      v.dtype.bits = r.u8("dtype.bits");
      v.dtype.lanes = r.u16("dtype.lanes");
      r.i32("dtype.padding");
      return v;
    case static_cast<int32_t>(TypeIndex::kDevice):
      v.kind = WireKind::kDevice;
      v.device.device_type = read_device_type(r, "device.type");
      v.device.device_id = r.i32("device.id");
      return v;
    case static_cast<int32_t>(TypeIndex::kDLTensorPtr):
      v.kind = WireKind::kTensor;
      v.tensor = read_tensor(r, limits);
      return v;
    case static_cast<int32_t>(TypeIndex::kRawStr):
      v.kind = WireKind::kString;
      v.s = std::string(r.str("raw_str"));
      return v;
    case static_cast<int32_t>(TypeIndex::kByteArrayPtr):
      v.kind = WireKind::kBytes;
      v.s = std::string(r.str("byte_array"));
      return v;
    case static_cast<int32_t>(TypeIndex::kFunction):
      v.kind = WireKind::kFunction;
      v.i = static_cast<int64_t>(r.u64("function_handle"));
      return v;
    case static_cast<int32_t>(TypeIndex::kModule):
      v.kind = WireKind::kModule;
      v.i = static_cast<int64_t>(r.u64("module_handle"));
      return v;
    default:
      break;
  }
  if (index == static_cast<int32_t>(TypeIndex::kSmallStr) || index == static_cast<int32_t>(TypeIndex::kSmallBytes) ||
      index >= 64) {
    return read_object(r, index);
  }
  r.fail(str_cat("unknown type index ", index));
}

void write_seq(Writer& w, std::span<const WireValue> values) {
  w.i32(static_cast<int32_t>(values.size()));
  for (const WireValue& v : values) write_value(w, v);
}

std::vector<WireValue> read_seq(Reader& r, const Limits& limits) {
  int32_t n = r.i32("num_args");
  if (n < 0 || static_cast<uint32_t>(n) > limits.max_args) {
    r.fail(str_cat("num_args ", n, " outside [0, ", limits.max_args, "]"));
  }
  // Every value takes at least its 4-byte type index: a count the bytes cannot hold is a lie.
  if (static_cast<size_t>(n) * 4 > r.remaining()) r.fail(str_cat("truncated: ", n, " values announced"));
  std::vector<WireValue> out;
  out.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) out.push_back(read_value(r, limits));
  return out;
}

}  // namespace anvil::rpc
