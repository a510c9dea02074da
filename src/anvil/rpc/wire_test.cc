// Wire encoding: every value kind round-trips, the bytes match the spec's worked examples, and
// hostile inputs (truncation, lying counts and lengths, unknown indices) throw ProtocolError.
#include "anvil/rpc/wire.h"

#include <gtest/gtest.h>

#include "anvil/rpc/endpoint.h"

namespace anvil::rpc {
namespace {

std::string hex(std::string_view bytes) {
  static const char* kDigits = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out += ' ';
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

WireValue round_trip(const WireValue& v) {
  Writer w;
  write_value(w, v);
  std::string bytes = w.take();
  Reader r(bytes, "test");
  WireValue out = read_value(r, Limits{});
  r.expect_end();
  return out;
}

TEST(WireTest, ScalarsRoundTrip) {
  EXPECT_EQ(round_trip(WireValue::integer(-42)).i, -42);
  EXPECT_EQ(round_trip(WireValue::integer(INT64_MIN)).i, INT64_MIN);
  EXPECT_EQ(round_trip(WireValue::boolean(true)).kind, WireKind::kBool);
  EXPECT_EQ(round_trip(WireValue::boolean(true)).i, 1);
  EXPECT_DOUBLE_EQ(round_trip(WireValue::floating(2.5)).f, 2.5);
  EXPECT_EQ(round_trip(WireValue::opaque(0xdeadbeef00ull)).handle(), 0xdeadbeef00ull);
  EXPECT_EQ(round_trip(WireValue::none()).kind, WireKind::kNone);
  WireValue dt = round_trip(WireValue::data_type(DLDataType{kDLFloat, 16, 4}));
  EXPECT_EQ(dt.kind, WireKind::kDataType);
  EXPECT_EQ(dt.dtype.bits, 16);
  EXPECT_EQ(dt.dtype.lanes, 4);
  WireValue dev = round_trip(WireValue::dev(DLDevice{kDLCUDA, 3}));
  EXPECT_EQ(dev.device.device_type, kDLCUDA);
  EXPECT_EQ(dev.device.device_id, 3);
}

TEST(WireTest, StringsAndBytesRoundTripInBothForms) {
  for (bool object : {false, true}) {
    WireValue s = round_trip(WireValue::string(std::string("a\0b", 3), object));
    EXPECT_EQ(s.kind, WireKind::kString);
    EXPECT_EQ(s.s, std::string("a\0b", 3));
    EXPECT_EQ(s.type_index, object ? 65 : 8);
    WireValue b = round_trip(WireValue::bytes("xyz", object));
    EXPECT_EQ(b.kind, WireKind::kBytes);
    EXPECT_EQ(b.s, "xyz");
    EXPECT_EQ(b.type_index, object ? 66 : 9);
  }
}

TEST(WireTest, HandlesRoundTrip) {
  EXPECT_EQ(round_trip(WireValue::function(7)).kind, WireKind::kFunction);
  EXPECT_EQ(round_trip(WireValue::module(8)).handle(), 8u);
  WireValue obj = round_trip(WireValue::object_ref(9));
  EXPECT_EQ(obj.kind, WireKind::kObjectRef);
  EXPECT_EQ(obj.handle(), 9u);
}

TEST(WireTest, TensorRoundTripsWithByteOffset) {
  WireTensor t;
  t.data = 0x1000;
  t.device = {kDLCPU, 0};
  t.dtype = {kDLFloat, 32, 1};
  t.shape = {3, 4};
  t.byte_offset = 16;
  WireValue v = round_trip(WireValue::tensor_ptr(t));
  ASSERT_EQ(v.kind, WireKind::kTensor);
  EXPECT_EQ(v.tensor.data, 0x1000u);
  EXPECT_EQ(v.tensor.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(v.tensor.byte_offset, 16u);
  EXPECT_EQ(v.tensor.nbytes(), 48u);
  EXPECT_EQ(t.encoded_size(), 48u);
}

TEST(WireTest, PythonObjectEncodingsDecode) {
  // A Python str sent raw: i32 11, u32 65, u64 2, "x1" (spec §2.4).
  Writer w;
  w.i32(11);
  w.u32(65);
  w.str("x1");
  std::string bytes = w.take();
  Reader r(bytes, "test");
  WireValue v = read_value(r, Limits{});
  EXPECT_EQ(v.kind, WireKind::kString);
  EXPECT_EQ(v.s, "x1");
  EXPECT_EQ(v.type_index, 11);
}

TEST(WireTest, MatchesSpecWorkedExamples) {
  // GetGlobalFunc("rpc.test.addone"): packet_nbytes 35.
  Writer w;
  w.i32(static_cast<int32_t>(RPCCode::kGetGlobalFunc));
  WireValue name = WireValue::string("rpc.test.addone");
  write_seq(w, std::span<const WireValue>(&name, 1));
  std::string framed = frame_packet(w.buffer());
  EXPECT_EQ(hex(framed.substr(0, 28)),
            "23 00 00 00 00 00 00 00 09 00 00 00 01 00 00 00 08 00 00 00 0F 00 00 00 00 00 00 00");
  // Exception "abc": 23 bytes, RawStr.
  EXPECT_EQ(hex(frame_packet(exception_body("abc"))),
            "17 00 00 00 00 00 00 00 05 00 00 00 01 00 00 00 08 00 00 00 03 00 00 00 00 00 00 00 61 62 63");
}

// ---- hostile inputs ----

void expect_protocol_error(const std::string& bytes, const std::string& needle) {
  Reader r(bytes, "test");
  try {
    read_seq(r, Limits{});
    r.expect_end();
    FAIL() << "decoding did not fail";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(WireTest, TruncatedValueIsRefused) {
  Writer w;
  w.i32(1);
  w.i32(1);     // Int
  w.i32(1234);  // only 4 of its 8 bytes
  expect_protocol_error(w.take(), "truncated");
}

TEST(WireTest, LyingArgumentCountIsRefused) {
  Writer w;
  w.i32(1'000'000);  // over max_args
  expect_protocol_error(w.take(), "num_args");
  Writer w2;
  w2.i32(1000);  // within max_args but the bytes are not there
  w2.i32(0);
  expect_protocol_error(w2.take(), "truncated");
  Writer w3;
  w3.i32(-1);
  expect_protocol_error(w3.take(), "num_args");
}

TEST(WireTest, LyingStringLengthIsRefused) {
  Writer w;
  w.i32(1);
  w.i32(8);
  w.u64(uint64_t{1} << 62);
  w.raw("abc");
  expect_protocol_error(w.take(), "truncated");
}

TEST(WireTest, UnknownTypeIndicesAreRefused) {
  for (int32_t index : {10, 13, 40, 63, -1, INT32_MIN}) {
    Writer w;
    w.i32(1);
    w.i32(index);
    w.u64(0);
    expect_protocol_error(w.take(), index == 10 ? "unknown type index" : "unknown type index");
  }
  // Object encodings with an inner index other than Str/Bytes/RPCObjectRef.
  for (uint32_t inner : {64u, 69u, 70u, 71u, 1000u}) {
    Writer w;
    w.i32(1);
    w.i32(70);
    w.u32(inner);
    w.u64(0);
    expect_protocol_error(w.take(), "cannot travel over RPC");
  }
}

TEST(WireTest, TensorLimitsAreEnforced) {
  auto tensor_bytes = [](int32_t ndim, int64_t dim) {
    Writer w;
    w.i32(1);
    w.i32(7);
    w.u64(0x1000);
    w.i32(1);
    w.i32(0);
    w.i32(ndim);
    w.u8(2);
    w.u8(32);
    w.u16(1);
    for (int i = 0; i < std::max(ndim, 0) && i < 4; ++i) w.i64(dim);
    w.u64(0);
    return w.take();
  };
  expect_protocol_error(tensor_bytes(-1, 1), "ndim");
  expect_protocol_error(tensor_bytes(65, 1), "ndim");
  expect_protocol_error(tensor_bytes(40, 1), "truncated");
  expect_protocol_error(tensor_bytes(2, -5), "negative dimension");
  WireTensor huge;
  huge.shape = {INT64_MAX, INT64_MAX};
  EXPECT_THROW(huge.nbytes(), ProtocolError);
}

TEST(WireTest, OutOfRangeDeviceTypesAreRefused) {
  for (int32_t type : {-1, 16, 32, 0x800001}) {
    Writer w;
    w.i32(1);
    w.i32(6);
    w.i32(type);
    w.i32(0);
    expect_protocol_error(w.take(), "device type");
  }
}

TEST(WireTest, TrailingBytesAreRefused) {
  Writer w;
  w.i32(0);
  w.raw("x");
  expect_protocol_error(w.take(), "trailing");
}

}  // namespace
}  // namespace anvil::rpc
