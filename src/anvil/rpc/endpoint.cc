// Packet framing, server replies and client requests over one connection (see endpoint.h).
#include "anvil/rpc/endpoint.h"

#include <algorithm>
#include <cstring>

namespace anvil::rpc {
namespace {

constexpr size_t kReadChunk = size_t{1} << 20;

Writer packet_writer(RPCCode code) {
  Writer w;
  w.i32(static_cast<int32_t>(code));
  return w;
}

}  // namespace

std::string exception_body(std::string_view message) {
  Writer w = packet_writer(RPCCode::kException);
  WireValue v = WireValue::string(std::string(message));
  write_seq(w, std::span<const WireValue>(&v, 1));
  return w.take();
}

std::string frame_packet(std::string_view body) {
  Writer w;
  w.u64(body.size());
  w.raw(body);
  return w.take();
}

void Endpoint::send_packet(std::string_view head, std::string_view tail) {
  // Length, head and tail in one write when the stream has room: a peer that has closed then
  // fails us on the first write of a request, with whatever it said last still readable (see
  // check_unsolicited).
  std::string& buf = packet_.buffer();
  buf.clear();
  packet_.u64(head.size() + tail.size());
  packet_.raw(head);
  channel_.write_all(buf, tail, limits_.stall_timeout_ms);
}

Writer& Endpoint::start_packet(RPCCode code) {
  packet_.buffer().clear();
  packet_.u64(0);  // the length, filled in by finish_packet
  packet_.i32(static_cast<int32_t>(code));
  return packet_;
}

void Endpoint::finish_packet(std::string_view tail) {
  std::string& buf = packet_.buffer();
  uint64_t length = buf.size() - 8 + tail.size();
  std::memcpy(buf.data(), &length, 8);
  channel_.write_all(buf, tail, limits_.stall_timeout_ms);
}

void Endpoint::check_unsolicited(std::string_view request) {
  if (!channel_.input_ready()) return;
  // The server spoke before being asked: a session timeout or a dying session said goodbye.
  std::optional<std::string> body = recv_packet(limits_.stall_timeout_ms);
  if (!body) throw ChannelError(str_cat("the server closed the session before ", request, channel_.loss_note()));
  Reader r(*body, "unsolicited packet");
  int32_t code = r.i32("code");
  if (code == static_cast<int32_t>(RPCCode::kException)) {
    std::vector<WireValue> seq = read_seq(r, limits_);
    throw_remote_error(!seq.empty() && seq[0].kind == WireKind::kString ? seq[0].s : "(no message)");
  }
  unexpected_reply(code, request);
}

std::optional<uint64_t> Endpoint::recv_length(int first_timeout_ms) {
  for (;;) {
    uint64_t len = 0;
    if (!channel_.read_exact(&len, 8, first_timeout_ms, limits_.stall_timeout_ms, /*allow_eof=*/true)) {
      return std::nullopt;
    }
    if (len == 0) continue;  // allowed and ignored (spec §2.1)
    if (len < 4) throw ProtocolError(str_cat("packet of ", len, " bytes is too short to hold a code"));
    if (len > limits_.max_packet_bytes) {
      throw ProtocolError(str_cat("packet of ", len, " bytes exceeds the limit of ", limits_.max_packet_bytes));
    }
    return len;
  }
}

std::string Endpoint::recv_body(uint64_t length) {
  // Grow with the data actually received, so a lying length costs the liar, not us.
  std::string body;
  size_t total = static_cast<size_t>(length);
  while (body.size() < total) {
    size_t start = body.size();
    size_t n = std::min(kReadChunk, total - start);
    body.resize(start + n);
    channel_.read_exact(body.data() + start, n, limits_.stall_timeout_ms, limits_.stall_timeout_ms);
  }
  return body;
}

std::optional<std::string> Endpoint::recv_packet(std::optional<int> first_timeout_ms) {
  std::optional<uint64_t> len = recv_length(first_timeout_ms.value_or(limits_.idle_timeout_ms));
  if (!len) return std::nullopt;
  return recv_body(*len);
}

void Endpoint::send_return(std::span<const WireValue> values) {
  write_seq(start_packet(RPCCode::kReturn), values);
  finish_packet();
}

void Endpoint::send_return_void() {
  WireValue none;
  send_return(std::span<const WireValue>(&none, 1));
}

void Endpoint::send_exception(std::string_view message) {
  Writer& w = start_packet(RPCCode::kException);
  w.i32(1);  // a PackedSeq of one string
  w.i32(static_cast<int32_t>(TypeIndex::kRawStr));
  w.str(message);
  finish_packet();
}

void Endpoint::send_copy_ack(std::string_view data) {
  start_packet(RPCCode::kCopyAck);
  finish_packet(data);
}

void Endpoint::unexpected_reply(int32_t code, std::string_view request) {
  if (code == static_cast<int32_t>(RPCCode::kShutdown)) {
    throw ChannelError(str_cat("the server shut the session down instead of answering ", request));
  }
  throw ProtocolError(str_cat("unexpected ", rpc_code_name(code), " packet in reply to ", request));
}

std::vector<WireValue> Endpoint::wait_return(std::string_view request) {
  std::optional<std::string> body = recv_packet();
  if (!body) throw ChannelError(str_cat("the server closed the connection before answering ", request, channel_.loss_note()));
  Reader r(*body, str_cat("reply to ", request));
  int32_t code = r.i32("code");
  if (code == static_cast<int32_t>(RPCCode::kException)) {
    std::vector<WireValue> seq = read_seq(r, limits_);
    if (seq.empty() || seq[0].kind != WireKind::kString) throw_remote_error("(the server sent no message)");
    throw_remote_error(seq[0].s);
  }
  if (code != static_cast<int32_t>(RPCCode::kReturn)) unexpected_reply(code, request);
  std::vector<WireValue> seq = read_seq(r, limits_);
  r.expect_end();
  return seq;
}

void Endpoint::init_server(std::span<const WireValue> ctor_args) {
  check_unsolicited("InitServer");
  Writer& w = start_packet(RPCCode::kInitServer);
  w.str(kProtocolVersion);
  write_seq(w, ctor_args);
  finish_packet();
  wait_return("InitServer");
}

std::vector<WireValue> Endpoint::call(uint64_t handle, std::span<const WireValue> args) {
  check_unsolicited("CallFunc");
  Writer& w = start_packet(RPCCode::kCallFunc);
  w.u64(handle);
  write_seq(w, args);
  finish_packet();
  return wait_return("CallFunc");
}

WireValue Endpoint::syscall(RPCCode code, std::span<const WireValue> args) {
  check_unsolicited(rpc_code_name(static_cast<int32_t>(code)));
  write_seq(start_packet(code), args);
  finish_packet();
  std::vector<WireValue> seq = wait_return(rpc_code_name(static_cast<int32_t>(code)));
  if (seq.size() != 1) {
    throw ProtocolError(str_cat("reply to ", rpc_code_name(static_cast<int32_t>(code)), " holds ", seq.size(),
                                " values instead of 1"));
  }
  return std::move(seq[0]);
}

void Endpoint::copy_to_remote(const WireTensor& dst, std::string_view data) {
  check_unsolicited("CopyToRemote");
  Writer& w = start_packet(RPCCode::kCopyToRemote);
  write_tensor(w, dst);
  w.u64(data.size());
  finish_packet(data);
  wait_return("CopyToRemote");
}

void Endpoint::copy_from_remote(const WireTensor& src, void* out, uint64_t nbytes) {
  check_unsolicited("CopyFromRemote");
  Writer& w = start_packet(RPCCode::kCopyFromRemote);
  write_tensor(w, src);
  w.u64(nbytes);
  finish_packet();
  std::optional<uint64_t> len = recv_length(limits_.idle_timeout_ms);
  if (!len) throw ChannelError(str_cat("the server closed the connection before answering CopyFromRemote", channel_.loss_note()));
  int32_t code = 0;
  channel_.read_exact(&code, 4, limits_.stall_timeout_ms, limits_.stall_timeout_ms);
  if (code == static_cast<int32_t>(RPCCode::kCopyAck)) {
    if (*len - 4 != nbytes) {
      throw ProtocolError(str_cat("CopyAck carries ", *len - 4, " bytes but ", nbytes, " were asked for"));
    }
    if (nbytes > 0) channel_.read_exact(out, nbytes, limits_.stall_timeout_ms, limits_.stall_timeout_ms);
    return;
  }
  std::string rest = recv_body(*len - 4);
  Reader r(rest, "reply to CopyFromRemote");
  if (code != static_cast<int32_t>(RPCCode::kException)) unexpected_reply(code, "CopyFromRemote");
  std::vector<WireValue> seq = read_seq(r, limits_);
  throw_remote_error(!seq.empty() && seq[0].kind == WireKind::kString ? seq[0].s : "(the server sent no message)");
}

void Endpoint::shutdown() {
  if (!channel_.is_open()) return;
  try {
    start_packet(RPCCode::kShutdown);
    finish_packet();
  } catch (const Error&) {
    // The peer may already be gone; shutting down is best effort.
  }
  channel_.close();
}

}  // namespace anvil::rpc
