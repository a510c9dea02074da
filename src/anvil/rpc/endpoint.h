// Endpoint: one RPC connection after the handshake. It frames packets (u64 length + body, spec
// §2.1) with the size and time limits of Limits, builds the server's replies (kReturn,
// kException, kCopyAck), and performs the client's requests one at a time (kInitServer,
// kCallFunc, syscalls, copies, kShutdown), turning kException replies into RPCError.
//
// An Endpoint is not thread-safe; the client session serialises requests with a mutex.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/rpc/protocol.h"
#include "anvil/rpc/transport.h"
#include "anvil/rpc/wire.h"

namespace anvil::rpc {

class Endpoint {
 public:
  // Turns the channel's read buffering on: from here on only packets travel on it.
  Endpoint(Channel channel, Limits limits) : channel_(std::move(channel)), limits_(limits) {
    channel_.set_read_buffering(true);
  }

  Channel& channel() { return channel_; }
  const Limits& limits() const { return limits_; }
  bool is_open() const { return channel_.is_open(); }
  void close() { channel_.close(); }

  // ---- framing ----
  // Writes u64(len(head) + len(tail)), head, tail: a copy's data goes out without concatenation.
  void send_packet(std::string_view head, std::string_view tail = {});
  // The same without copying head: start_packet clears the endpoint's own packet buffer, puts a
  // placeholder length and the code in it and returns it for the body; finish_packet fills in
  // the length and writes buffer and tail in one go. The buffer is reused, so a request or a
  // reply costs no allocation once it has grown to size.
  Writer& start_packet(RPCCode code);
  void finish_packet(std::string_view tail = {});
  // The next non-empty packet body (starting with its i32 code), or nullopt when the peer closed
  // cleanly between packets. The first byte must come within first_timeout_ms (default: the
  // idle timeout). ProtocolError for a length over max_packet_bytes or under 4; ChannelError for
  // a timeout or a close mid-packet. Memory grows with the bytes that really arrive.
  std::optional<std::string> recv_packet(std::optional<int> first_timeout_ms = std::nullopt);

  // ---- server replies ----
  void send_return(std::span<const WireValue> values);
  void send_return_void();
  void send_exception(std::string_view message);
  void send_copy_ack(std::string_view data);

  // ---- client requests ----
  // kInitServer with the protocol version and optional session-constructor arguments.
  void init_server(std::span<const WireValue> ctor_args = {});
  // kCallFunc; the reply PackedSeq in the §2.7 return encoding.
  std::vector<WireValue> call(uint64_t handle, std::span<const WireValue> args);
  // A syscall (codes 9-21); its single return value.
  WireValue syscall(RPCCode code, std::span<const WireValue> args);
  // kCopyToRemote: `data` goes to dst.data + dst.byte_offset.
  void copy_to_remote(const WireTensor& dst, std::string_view data);
  // kCopyFromRemote: nbytes from src.data + src.byte_offset into out.
  void copy_from_remote(const WireTensor& src, void* out, uint64_t nbytes);
  // kShutdown (best effort: errors are ignored), then close.
  void shutdown();

 private:
  // Reads a u64 length, skipping zero-length packets; nullopt on a clean close.
  std::optional<uint64_t> recv_length(int first_timeout_ms);
  std::string recv_body(uint64_t length);
  // Before a request: if the server already sent something (its goodbye kException after a
  // session timeout, or EOF), raise that instead of writing into a closed connection.
  void check_unsolicited(std::string_view request);
  // Waits for the reply to a request: kReturn's PackedSeq, or throws for kException.
  std::vector<WireValue> wait_return(std::string_view request);
  [[noreturn]] void unexpected_reply(int32_t code, std::string_view request);

  Channel channel_;
  Limits limits_;
  Writer packet_;  // the packet being built (start_packet / finish_packet)
};

// Body of a kException packet carrying `message` (exposed for tests and the session-timeout
// path, which writes it on a socket it owns without an Endpoint).
std::string exception_body(std::string_view message);
// u64 length + body: a whole framed packet.
std::string frame_packet(std::string_view body);

}  // namespace anvil::rpc
