// The serving loop and the client requests over a socketpair, in one process: calls with every
// argument kind, returned objects and tensors, copies both ways, tolerant FreeHandle, and hostile
// packets that must end the connection with a reason (and nothing worse).
#include "anvil/rpc/endpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "anvil/rpc/serving.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"

namespace anvil::rpc {
namespace {

class ServedConnection {
 public:
  explicit ServedConnection(Limits limits = Limits{}) {
    register_runtime_functions();
    auto [client, server] = channel_pair();
    server_ = std::thread([this, limits, ch = std::move(server)]() mutable {
      Endpoint ep(std::move(ch), limits);
      result_ = serve_connection(ep);
    });
    client_ = std::make_unique<Endpoint>(std::move(client), limits);
  }
  ~ServedConnection() {
    client_->close();
    if (server_.joinable()) server_.join();
  }
  Endpoint& client() { return *client_; }
  // Waits for the server to stop and returns why it did.
  ServeResult finish() {
    if (server_.joinable()) server_.join();
    return result_;
  }
  uint64_t global(const std::string& name) {
    WireValue arg = WireValue::string(name);
    return client_->syscall(RPCCode::kGetGlobalFunc, std::span<const WireValue>(&arg, 1)).handle();
  }

 private:
  std::thread server_;
  ServeResult result_;
  std::unique_ptr<Endpoint> client_;
};

WireTensor cpu_tensor(uint64_t data, std::vector<int64_t> shape, DLDataType dtype = {kDLFloat, 32, 1}) {
  WireTensor t;
  t.data = data;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

TEST(EndpointTest, EchoesEveryScalarKind) {
  ServedConnection s;
  s.client().init_server();
  uint64_t echo = s.global("testing.echo");
  ASSERT_NE(echo, 0u);
  std::vector<std::pair<WireValue, int64_t>> cases = {
      {WireValue::integer(7), 1},           {WireValue::boolean(true), 2},
      {WireValue::floating(1.5), 3},        {WireValue::data_type({kDLInt, 8, 1}), 5},
      {WireValue::dev({kDLCPU, 0}), 6},     {WireValue::string("xyz"), 11},
      {WireValue::string("a longer string"), 65}, {WireValue::bytes("123", true), 12},
      {WireValue::none(), 0},
  };
  for (auto& [arg, type] : cases) {
    std::vector<WireValue> reply = s.client().call(echo, std::span<const WireValue>(&arg, 1));
    ASSERT_EQ(reply.size(), 2u) << arg.describe();
    EXPECT_EQ(reply[0].i, type) << arg.describe();
    EXPECT_EQ(reply[1].kind, arg.kind) << arg.describe();
    EXPECT_EQ(reply[1].s, arg.s);
  }
  s.client().shutdown();
  ServeResult r = s.finish();
  EXPECT_TRUE(r.clean) << r.reason;
}

TEST(EndpointTest, MissingGlobalIsANullHandle) {
  ServedConnection s;
  s.client().init_server();
  EXPECT_EQ(s.global("no.such.function"), 0u);
}

TEST(EndpointTest, RemoteErrorsBecomeRPCErrorWithTheKind) {
  ServedConnection s;
  s.client().init_server();
  uint64_t echo = s.global("testing.echo");
  try {
    s.client().call(echo, {});  // wrong arity
    FAIL();
  } catch (const RPCError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_NE(std::string(e.what()).find("RPCError: Error caught from RPC call:\nTypeError: "), std::string::npos);
  }
  // The session survives the error.
  WireValue arg = WireValue::integer(1);
  EXPECT_EQ(s.client().call(echo, std::span<const WireValue>(&arg, 1))[1].i, 1);
}

TEST(EndpointTest, ProtocolVersionAndDoubleInitAreRefused) {
  ServedConnection s;
  s.client().init_server();
  EXPECT_THROW(s.client().init_server(), RPCError);
  Writer w;
  w.i32(static_cast<int32_t>(RPCCode::kInitServer));
  w.str("0.7.0");
  w.i32(0);
  ServedConnection s2;
  s2.client().send_packet(w.buffer());
  std::optional<std::string> reply = s2.client().recv_packet();
  ASSERT_TRUE(reply);
  EXPECT_NE(reply->find("Client protocol version mismatch"), std::string::npos);
}

TEST(EndpointTest, TensorCopiesBothWaysWithOffsets) {
  ServedConnection s;
  s.client().init_server();
  WireTensor proto = cpu_tensor(0, {4, 8});
  WireValue args[] = {WireValue::tensor_ptr(proto), WireValue::none()};
  uint64_t data = s.client().syscall(RPCCode::kDevAllocDataWithScope, args).handle();
  ASSERT_NE(data, 0u);
  std::vector<float> host(32);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
  WireTensor t = cpu_tensor(data, {4, 8});
  // Two chunks, as a client with a small packet limit sends them.
  t.byte_offset = 0;
  s.client().copy_to_remote(t, std::string_view(reinterpret_cast<const char*>(host.data()), 64));
  t.byte_offset = 64;
  s.client().copy_to_remote(t, std::string_view(reinterpret_cast<const char*>(host.data()) + 64, 64));
  std::vector<float> back(32, -1.f);
  t.byte_offset = 0;
  s.client().copy_from_remote(t, back.data(), 128);
  EXPECT_EQ(back, host);
  // A view passed to a function: element 8 onward (one row down).
  uint64_t echo = s.global("testing.echo");
  WireTensor view = cpu_tensor(data, {3, 8});
  view.byte_offset = 32;
  WireValue arg = WireValue::tensor_ptr(view);
  std::vector<WireValue> reply = s.client().call(echo, std::span<const WireValue>(&arg, 1));
  ASSERT_EQ(reply.size(), 3u);
  EXPECT_EQ(reply[0].i, 70);
  EXPECT_EQ(reply[1].tensor.byte_offset, 0u);
  EXPECT_EQ(reply[1].tensor.data, data + 32);
  float first = 0;
  s.client().copy_from_remote(reply[1].tensor, &first, 4);
  EXPECT_EQ(first, host[8]);
  // Free the returned tensor, then the data; both tolerate a repeat.
  WireValue h = WireValue::opaque(reply[2].handle());
  s.client().syscall(RPCCode::kFreeHandle, std::span<const WireValue>(&h, 1));
  s.client().syscall(RPCCode::kFreeHandle, std::span<const WireValue>(&h, 1));
  WireValue free_args[] = {WireValue::dev({kDLCPU, 0}), WireValue::opaque(data)};
  s.client().syscall(RPCCode::kDevFreeData, free_args);
  s.client().syscall(RPCCode::kDevFreeData, free_args);
  EXPECT_THROW(s.client().copy_from_remote(t, back.data(), 4), RPCError);
}

TEST(EndpointTest, CopiesOutsideAnAllocationAreRefused) {
  ServedConnection s;
  s.client().init_server();
  WireValue args[] = {WireValue::dev({kDLCPU, 0}), WireValue::integer(64), WireValue::integer(64),
                      WireValue::data_type({kDLFloat, 32, 1})};
  uint64_t data = s.client().syscall(RPCCode::kDevAllocData, args).handle();
  WireTensor t = cpu_tensor(data, {16});
  t.byte_offset = 60;
  EXPECT_THROW(s.client().copy_to_remote(t, std::string(8, 'x')), RPCError);
  t.byte_offset = UINT64_MAX - 2;
  EXPECT_THROW(s.client().copy_to_remote(t, std::string(8, 'x')), RPCError);
  char buf[8];
  WireTensor stray = cpu_tensor(reinterpret_cast<uint64_t>(&buf), {2});
  EXPECT_THROW(s.client().copy_from_remote(stray, buf, 8), RPCError);
  WireValue huge[] = {WireValue::dev({kDLCPU, 0}), WireValue::integer(INT64_MAX), WireValue::integer(64),
                      WireValue::data_type({kDLFloat, 32, 1})};
  EXPECT_THROW(s.client().syscall(RPCCode::kDevAllocData, huge), RPCError);
  // Still serving.
  EXPECT_NE(s.global("testing.echo"), 0u);
}

TEST(EndpointTest, UnknownHandlesAreRefusedOrIgnored) {
  ServedConnection s;
  s.client().init_server();
  EXPECT_THROW(s.client().call(0x12345, {}), RPCError);
  WireValue stray = WireValue::opaque(0x7fff0000);
  EXPECT_NO_THROW(s.client().syscall(RPCCode::kFreeHandle, std::span<const WireValue>(&stray, 1)));
  uint64_t echo = s.global("testing.echo");
  WireValue obj = WireValue::object_ref(0x999);
  EXPECT_THROW(s.client().call(echo, std::span<const WireValue>(&obj, 1)), RPCError);
}

// ---- hostile packets end the connection, with a reason ----

ServeResult send_raw_and_finish(const std::string& raw, Limits limits = Limits{}) {
  ServedConnection s(limits);
  s.client().channel().write_all(raw.data(), raw.size(), 1000);
  // Half-close our side so a server waiting for more bytes sees EOF.
  ::shutdown(s.client().channel().write_fd(), SHUT_WR);
  return s.finish();
}

TEST(EndpointTest, OversizedLengthClosesTheConnection) {
  Limits limits;
  limits.max_packet_bytes = 1024;
  Writer w;
  w.u64(1025);
  w.i32(3);
  ServeResult r = send_raw_and_finish(w.take(), limits);
  EXPECT_FALSE(r.clean);
  EXPECT_NE(r.reason.find("exceeds the limit"), std::string::npos) << r.reason;
}

TEST(EndpointTest, TruncatedPacketClosesTheConnection) {
  Writer w;
  w.u64(100);
  w.i32(static_cast<int32_t>(RPCCode::kInitServer));
  ServeResult r = send_raw_and_finish(w.take());
  EXPECT_FALSE(r.clean);
  EXPECT_NE(r.reason.find("peer closed"), std::string::npos) << r.reason;
}

TEST(EndpointTest, BadTypeIndexClosesTheConnection) {
  Writer body;
  body.i32(static_cast<int32_t>(RPCCode::kInitServer));
  body.str(kProtocolVersion);
  body.i32(1);
  body.i32(42);  // no such type index
  ServeResult r = send_raw_and_finish(frame_packet(body.buffer()));
  EXPECT_FALSE(r.clean);
  EXPECT_NE(r.reason.find("unknown type index 42"), std::string::npos) << r.reason;
}

TEST(EndpointTest, UnknownCodeClosesTheConnection) {
  Writer body;
  body.i32(99);
  ServeResult r = send_raw_and_finish(frame_packet(body.buffer()));
  EXPECT_FALSE(r.clean);
  EXPECT_NE(r.reason.find("Unknown(99)"), std::string::npos) << r.reason;
}

TEST(EndpointTest, ZeroLengthPacketsAreIgnored) {
  std::string raw(8, '\0');
  Writer body;
  body.i32(static_cast<int32_t>(RPCCode::kShutdown));
  raw += frame_packet(body.buffer());
  ServeResult r = send_raw_and_finish(raw);
  EXPECT_TRUE(r.clean) << r.reason;
}

TEST(EndpointTest, StalledPacketTimesOut) {
  Limits limits;
  limits.stall_timeout_ms = 100;
  ServedConnection s(limits);
  Writer w;
  w.u64(64);
  w.i32(3);
  s.client().channel().write_all(w.buffer().data(), w.buffer().size(), 1000);
  ServeResult r = s.finish();  // the client keeps the socket open but sends nothing more
  EXPECT_FALSE(r.clean);
  EXPECT_NE(r.reason.find("timed out"), std::string::npos) << r.reason;
}

// Read buffering: two packets that arrive in one segment are both delivered, in order, and the
// second is not lost in the buffer.
TEST(EndpointFraming, PacketsArrivingTogetherAreAllReceived) {
  auto [a, b] = channel_pair();
  const std::string first("\x01\x00\x00\x00first", 9), second("\x02\x00\x00\x00second", 10);
  std::string both = frame_packet(first) + frame_packet(second);
  a.write_all(both.data(), both.size(), 1000);
  Endpoint ep(std::move(b), Limits{});
  EXPECT_EQ(ep.recv_packet(1000), first);
  EXPECT_TRUE(ep.channel().input_ready());  // the second packet is already buffered
  EXPECT_EQ(ep.recv_packet(1000), second);
  EXPECT_EQ(ep.channel().buffered(), 0u);
  a.close();
  EXPECT_FALSE(ep.recv_packet(1000).has_value());  // a clean close between packets
}

// A pipe pair: non-blocking reads and writes with a payload larger than the pipe buffer, and a
// read deadline that holds.
TEST(ChannelPipes, LargeTransferAndReadTimeout) {
  int ab[2], ba[2];
  ASSERT_EQ(::pipe(ab), 0);
  ASSERT_EQ(::pipe(ba), 0);
  Channel left(ba[0], ab[1], "left"), right(ab[0], ba[1], "right");
  std::string payload(1 << 20, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>((i * 131) & 0xff);
  std::thread writer([&] { left.write_all(payload, "tail", 5000); });
  std::string got(payload.size() + 4, '\0');
  right.read_exact(got.data(), got.size(), 5000, 5000);
  writer.join();
  EXPECT_EQ(got, payload + "tail");
  char byte = 0;
  try {
    right.read_exact(&byte, 1, 50, 50);
    FAIL() << "read returned without data";
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
}

// A socket read deadline (SO_RCVTIMEO) holds too, and a later read still works.
TEST(ChannelSockets, ReadTimeoutThenData) {
  auto [a, b] = channel_pair();
  char byte = 0;
  EXPECT_THROW(b.read_exact(&byte, 1, 50, 50), ChannelError);
  a.write_all("x", 1, 1000);
  EXPECT_TRUE(b.read_exact(&byte, 1, 1000, 1000));
  EXPECT_EQ(byte, 'x');
}

}  // namespace
}  // namespace anvil::rpc
