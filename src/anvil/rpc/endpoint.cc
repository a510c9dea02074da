// Packet framing, server replies and client requests over one connection (see endpoint.h).
#include "anvil/rpc/endpoint.h"

#include <poll.h>

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
  // Length and head in one write: a peer that has closed then fails us on the first write of a
  // request, with whatever it said last still readable (see check_unsolicited).
  Writer w;
  w.u64(head.size() + tail.size());
  w.raw(head);
  int timeout = limits_.stall_timeout_ms;
  channel_.write_all(w.buffer().data(), w.buffer().size(), timeout);
  if (!tail.empty()) channel_.write_all(tail.data(), tail.size(), timeout);
}

void Endpoint::check_unsolicited(std::string_view request) {
  pollfd p{channel_.read_fd(), POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return;
  // The server spoke before being asked: a session timeout or a dying session said goodbye.
  std::optional<std::string> body = recv_packet(limits_.stall_timeout_ms);
  if (!body) throw ChannelError(str_cat("the server closed the session before ", request));
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
  Writer w = packet_writer(RPCCode::kReturn);
  write_seq(w, values);
  send_packet(w.buffer());
}

void Endpoint::send_return_void() {
  WireValue none;
  send_return(std::span<const WireValue>(&none, 1));
}

void Endpoint::send_exception(std::string_view message) { send_packet(exception_body(message)); }

void Endpoint::send_copy_ack(std::string_view data) {
  int32_t code = static_cast<int32_t>(RPCCode::kCopyAck);
  send_packet(std::string_view(reinterpret_cast<const char*>(&code), 4), data);
}

void Endpoint::unexpected_reply(int32_t code, std::string_view request) {
  if (code == static_cast<int32_t>(RPCCode::kShutdown)) {
    throw ChannelError(str_cat("the server shut the session down instead of answering ", request));
  }
  throw ProtocolError(str_cat("unexpected ", rpc_code_name(code), " packet in reply to ", request));
}

std::vector<WireValue> Endpoint::wait_return(std::string_view request) {
  std::optional<std::string> body = recv_packet();
  if (!body) throw ChannelError(str_cat("the server closed the connection before answering ", request));
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
  Writer w = packet_writer(RPCCode::kInitServer);
  w.str(kProtocolVersion);
  write_seq(w, ctor_args);
  send_packet(w.buffer());
  wait_return("InitServer");
}

std::vector<WireValue> Endpoint::call(uint64_t handle, std::span<const WireValue> args) {
  check_unsolicited("CallFunc");
  Writer w = packet_writer(RPCCode::kCallFunc);
  w.u64(handle);
  write_seq(w, args);
  send_packet(w.buffer());
  return wait_return("CallFunc");
}

WireValue Endpoint::syscall(RPCCode code, std::span<const WireValue> args) {
  check_unsolicited(rpc_code_name(static_cast<int32_t>(code)));
  Writer w = packet_writer(code);
  write_seq(w, args);
  send_packet(w.buffer());
  std::vector<WireValue> seq = wait_return(rpc_code_name(static_cast<int32_t>(code)));
  if (seq.size() != 1) {
    throw ProtocolError(str_cat("reply to ", rpc_code_name(static_cast<int32_t>(code)), " holds ", seq.size(),
                                " values instead of 1"));
  }
  return std::move(seq[0]);
}

void Endpoint::copy_to_remote(const WireTensor& dst, std::string_view data) {
  check_unsolicited("CopyToRemote");
  Writer w = packet_writer(RPCCode::kCopyToRemote);
  write_tensor(w, dst);
  w.u64(data.size());
  send_packet(w.buffer(), data);
  wait_return("CopyToRemote");
}

void Endpoint::copy_from_remote(const WireTensor& src, void* out, uint64_t nbytes) {
  check_unsolicited("CopyFromRemote");
  Writer w = packet_writer(RPCCode::kCopyFromRemote);
  write_tensor(w, src);
  w.u64(nbytes);
  send_packet(w.buffer());
  std::optional<uint64_t> len = recv_length(limits_.idle_timeout_ms);
  if (!len) throw ChannelError("the server closed the connection before answering CopyFromRemote");
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
    int32_t code = static_cast<int32_t>(RPCCode::kShutdown);
    send_packet(std::string_view(reinterpret_cast<const char*>(&code), 4));
  } catch (const Error&) {
    // The peer may already be gone; shutting down is best effort.
  }
  channel_.close();
}

}  // namespace anvil::rpc
