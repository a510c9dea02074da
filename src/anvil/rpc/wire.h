// Byte-level encoding of RPC packet bodies: little-endian integers, PackedSeq values (spec §2.3,
// §2.4) and WireDLTensor (§2.5). WireValue is the protocol's own view of one argument — remote
// handles are plain numbers here; turning them into runtime objects is the session's job.
//
// The decoder works on one complete packet held in memory, so every length it reads is checked
// against the bytes that are really there; anything malformed throws ProtocolError.
#pragma once

#include <dlpack/dlpack.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/rpc/protocol.h"

namespace anvil::rpc {

static_assert(std::endian::native == std::endian::little, "the RPC encoder assumes a little-endian host");

// Appends little-endian fields to a growing byte string.
class Writer {
 public:
  void i32(int32_t v) { put(&v, 4); }
  void u32(uint32_t v) { put(&v, 4); }
  void i64(int64_t v) { put(&v, 8); }
  void u64(uint64_t v) { put(&v, 8); }
  void f64(double v) { put(&v, 8); }
  void u8(uint8_t v) { put(&v, 1); }
  void u16(uint16_t v) { put(&v, 2); }
  void raw(std::string_view bytes) { buf_.append(bytes); }
  void str(std::string_view s) {  // u64 length, then the bytes
    u64(s.size());
    raw(s);
  }
  std::string& buffer() { return buf_; }
  std::string take() { return std::move(buf_); }

 private:
  void put(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  std::string buf_;
};

// Reads little-endian fields from a byte span; running past the end throws ProtocolError naming
// `what` (the packet being decoded) and the field.
class Reader {
 public:
  Reader(std::string_view data, std::string_view what) : data_(data), what_(what) {}

  int32_t i32(const char* field) { return get<int32_t>(field); }
  uint32_t u32(const char* field) { return get<uint32_t>(field); }
  int64_t i64(const char* field) { return get<int64_t>(field); }
  uint64_t u64(const char* field) { return get<uint64_t>(field); }
  double f64(const char* field) { return get<double>(field); }
  uint8_t u8(const char* field) { return get<uint8_t>(field); }
  uint16_t u16(const char* field) { return get<uint16_t>(field); }
  std::string_view raw(uint64_t n, const char* field);
  std::string_view str(const char* field) { return raw(u64(field), field); }

  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }
  // ProtocolError when bytes are left over: a packet must be consumed exactly.
  void expect_end();
  [[noreturn]] void fail(const std::string& message) const;

 private:
  template <typename T>
  T get(const char* field) {
    T v;
    std::memcpy(&v, raw(sizeof(T), field).data(), sizeof(T));
    return v;
  }
  std::string_view data_;
  size_t pos_ = 0;
  std::string_view what_;
};

// DLTensor as it travels: no strides (always compact), data is the owner's opaque address.
struct WireTensor {
  uint64_t data = 0;
  DLDevice device{kDLCPU, 0};
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
  uint64_t byte_offset = 0;

  // Elements times element size of the whole tensor; ProtocolError on overflow.
  uint64_t nbytes() const;
  // 32 + 8 * ndim: the encoded size.
  size_t encoded_size() const { return 32 + 8 * shape.size(); }
};

// What a decoded argument is, after the outer/inner type indices are resolved.
enum class WireKind : int32_t {
  kNone,
  kInt,
  kBool,
  kFloat,
  kOpaquePtr,  // raw pointers, streams, handles from syscalls
  kDataType,
  kDevice,
  kTensor,
  kString,
  kBytes,
  kFunction,   // remote function handle (68)
  kModule,     // remote module handle (73)
  kObjectRef,  // remote object handle (115)
};

struct WireValue {
  WireKind kind = WireKind::kNone;
  // The outer type index as received; when sending it picks the form: strings go as RawStr (8)
  // unless this is 11/65 (object encoding), bytes as ByteArrayPtr (9) unless 12/66.
  int32_t type_index = 0;
  int64_t i = 0;  // Int, Bool (0/1), and handles/pointers as their u64 bit pattern
  double f = 0;
  DLDevice device{kDLCPU, 0};
  DLDataType dtype{kDLFloat, 32, 1};
  std::string s;  // strings and bytes
  WireTensor tensor;

  uint64_t handle() const { return static_cast<uint64_t>(i); }

  static WireValue none() { return {}; }
  static WireValue integer(int64_t v) { return make(WireKind::kInt, TypeIndex::kInt, v); }
  static WireValue boolean(bool v) { return make(WireKind::kBool, TypeIndex::kBool, v ? 1 : 0); }
  static WireValue floating(double v);
  static WireValue opaque(uint64_t p) { return make(WireKind::kOpaquePtr, TypeIndex::kOpaquePtr, static_cast<int64_t>(p)); }
  static WireValue data_type(DLDataType t);
  static WireValue dev(DLDevice d);
  static WireValue string(std::string v, bool as_object = false);
  static WireValue bytes(std::string v, bool as_object = false);
  static WireValue tensor_ptr(WireTensor t);
  static WireValue function(uint64_t h) { return make(WireKind::kFunction, TypeIndex::kFunction, static_cast<int64_t>(h)); }
  static WireValue module(uint64_t h) { return make(WireKind::kModule, TypeIndex::kModule, static_cast<int64_t>(h)); }
  static WireValue object_ref(uint64_t h) { return make(WireKind::kObjectRef, TypeIndex::kRPCObjectRef, static_cast<int64_t>(h)); }

  // "Int(3)", "RawStr(5 bytes)", ...: for error messages and logs.
  std::string describe() const;

 private:
  static WireValue make(WireKind k, TypeIndex t, int64_t v) {
    WireValue w;
    w.kind = k;
    w.type_index = static_cast<int32_t>(t);
    w.i = v;
    return w;
  }
};

void write_tensor(Writer& w, const WireTensor& t);
WireTensor read_tensor(Reader& r, const Limits& limits);

void write_value(Writer& w, const WireValue& v);
WireValue read_value(Reader& r, const Limits& limits);

void write_seq(Writer& w, std::span<const WireValue> values);
std::vector<WireValue> read_seq(Reader& r, const Limits& limits);

}  // namespace anvil::rpc
