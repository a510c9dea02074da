// A tracker connection's I/O: handshake, framing, limits, timeouts (see connection.h).
#include "anvil/rpc/tracker/connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "anvil/rpc/log.h"
#include "anvil/rpc/tracker/messages.h"

namespace anvil::rpc::tracker {

Connection::Connection(asio::ip::tcp::socket socket, ConnId id, std::string peer_ip, ConnectionOwner& owner,
                       const ConnectionLimits& limits)
    : socket_(std::move(socket)),
      id_(id),
      peer_ip_(std::move(peer_ip)),
      owner_(owner),
      limits_(limits),
      read_timer_(socket_.get_executor()),
      write_timer_(socket_.get_executor()) {
  asio::error_code ec;
  auto remote = socket_.remote_endpoint(ec);
  if (!ec) peer_port_ = remote.port();
}

std::string Connection::name() const { return str_cat("TCPSocket: ('", peer_ip_, "', ", peer_port_, ")"); }

void Connection::start() {
  asio::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  socket_.set_option(asio::socket_base::keep_alive(true), ec);
  // Idle connections are legal (see connection.h); probe them so a vanished peer's queued
  // servers and requests are dropped within minutes instead of the kernel's two hours.
  int fd = socket_.native_handle();
  int idle = 60, interval = 10, count = 6;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  arm_read_deadline(limits_.handshake_timeout, "handshake_timeout");
  read_more();
}

void Connection::read_more() {
  if (closed_) return;
  socket_.async_read_some(asio::buffer(chunk_),
                          [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
                            self->on_read(ec, n);
                          });
}

void Connection::on_read(const asio::error_code& ec, std::size_t n) {
  if (closed_) return;
  if (ec) {
    if (ec == asio::error::eof || ec == asio::error::connection_reset) {
      close("eof", "");
    } else {
      close("io_error", str_cat(name(), ": read failed: ", ec.message()));
    }
    return;
  }
  inbuf_.append(chunk_.data(), n);
  if (process_input()) read_more();
}

bool Connection::process_input() {
  bool consumed_frame = false;
  if (!handshaken_) {
    if (inbuf_.size() < 4) return true;
    // TVM closes when the first read is not exactly the 4 magic bytes; bytes that follow the
    // magic in the same segment are kept here instead, as the spec advises.
    int32_t magic = read_i32_le(reinterpret_cast<const unsigned char*>(inbuf_.data()));
    if (magic != kTrackerMagic) {
      close("bad_magic", str_cat("Invalid magic ", magic, " from ", name(), "; closing connection"));
      return false;
    }
    inbuf_.erase(0, 4);
    handshaken_ = true;
    consumed_frame = true;
    send(encode_i32_le(kTrackerMagic));
    if (closed_) return false;
  }
  while (inbuf_.size() >= 4) {
    int32_t size = read_i32_le(reinterpret_cast<const unsigned char*>(inbuf_.data()));
    if (size <= 0 || static_cast<std::size_t>(size) > kMaxFrameBytes) {
      close("frame_size", str_cat("Invalid msg_size ", size, " from ", name(), "; closing connection"));
      return false;
    }
    auto total = 4 + static_cast<std::size_t>(size);
    if (inbuf_.size() < total) break;
    std::string payload = inbuf_.substr(4, static_cast<std::size_t>(size));
    inbuf_.erase(0, total);
    consumed_frame = true;
    owner_.on_frame(id_, payload);
    if (closed_ || close_when_flushed_) return false;
  }
  if (inbuf_.empty()) {
    disarm_read_deadline();
  } else if (consumed_frame || !read_deadline_armed_) {
    // A new frame has begun: its remaining bytes are due within frame_timeout.
    arm_read_deadline(limits_.frame_timeout, "frame_timeout");
  }
  return true;
}

void Connection::arm_read_deadline(std::chrono::milliseconds timeout, std::string_view category) {
  uint64_t gen = ++read_deadline_gen_;
  read_deadline_armed_ = true;
  read_timer_.expires_after(timeout);
  read_timer_.async_wait([self = shared_from_this(), gen, category, timeout](const asio::error_code& ec) {
    if (ec || self->closed_ || gen != self->read_deadline_gen_) return;
    self->close(category, str_cat(self->name(), ": ", category, ": no complete ",
                                  category == "handshake_timeout" ? "magic" : "message", " within ",
                                  timeout.count(), " ms; closing connection"));
  });
}

void Connection::disarm_read_deadline() {
  if (!read_deadline_armed_) return;
  ++read_deadline_gen_;
  read_deadline_armed_ = false;
  read_timer_.cancel();
}

void Connection::send(std::string frame) {
  if (closed_) return;
  out_bytes_ += frame.size();
  if (out_bytes_ > limits_.max_write_backlog) {
    close("write_backlog", str_cat(name(), ": peer does not read its replies (", out_bytes_,
                                   " bytes queued); closing connection"));
    return;
  }
  outq_.push_back(std::move(frame));
  if (!writing_) write_next();
}

void Connection::write_next() {
  if (closed_ || outq_.empty()) {
    if (!closed_ && close_when_flushed_) close("closed", "");
    return;
  }
  writing_ = true;
  uint64_t gen = ++write_gen_;
  write_timer_.expires_after(limits_.write_timeout);
  write_timer_.async_wait([self = shared_from_this(), gen](const asio::error_code& ec) {
    if (ec || self->closed_ || !self->writing_ || gen != self->write_gen_) return;
    self->close("write_timeout", str_cat(self->name(), ": write timed out; closing connection"));
  });
  asio::async_write(socket_, asio::buffer(outq_.front()),
                    [self = shared_from_this()](const asio::error_code& ec, std::size_t) {
                      self->writing_ = false;
                      self->write_timer_.cancel();
                      if (self->closed_) return;
                      if (ec) {
                        self->close("io_error", str_cat(self->name(), ": write failed: ", ec.message()));
                        return;
                      }
                      self->out_bytes_ -= self->outq_.front().size();
                      self->outq_.pop_front();
                      self->write_next();
                    });
}

void Connection::close_after_flush() {
  if (closed_) return;
  close_when_flushed_ = true;
  if (!writing_ && outq_.empty()) close("closed", "");
}

void Connection::close(std::string_view category, const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  if (!reason.empty()) log_warning(reason);
  asio::error_code ec;
  read_timer_.cancel();
  write_timer_.cancel();
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  outq_.clear();
  owner_.on_closed(id_, category);
}

}  // namespace anvil::rpc::tracker
