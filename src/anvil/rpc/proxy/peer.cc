// A proxy connection: handshake, wait, relay, close (see peer.h). Everything runs on the proxy's
// one io_context thread; handlers hold a shared_ptr so a Peer lives until its last one ran.
#include "anvil/rpc/proxy/peer.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "anvil/rpc/log.h"
#include "anvil/rpc/protocol.h"

namespace anvil::rpc::proxy {
namespace {

constexpr auto kCloseGrace = std::chrono::seconds(10);

std::string i32_bytes(int32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

// Dead peers (a phone that lost its network) are noticed within about two minutes.
void enable_keepalive(asio::ip::tcp::socket& s) {
  asio::error_code ec;
  s.set_option(asio::socket_base::keep_alive(true), ec);
  int idle = 60, interval = 10, count = 6;
  int fd = s.native_handle();
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  s.set_option(asio::ip::tcp::no_delay(true), ec);
}

}  // namespace

Peer::Peer(asio::ip::tcp::socket socket, PeerId id, PeerOwner& owner, uint32_t max_key_bytes)
    : socket_(std::move(socket)), id_(id), owner_(owner), parser_(max_key_bytes),
      timer_(socket_.get_executor()) {
  asio::error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  address_ = ec ? "?" : str_cat(ep.address().to_string(), ":", ep.port());
  enable_keepalive(socket_);
}

std::string Peer::name() const {
  if (parser_.state() != HandshakeParser::State::kDone) return str_cat("connection from ", address_);
  return str_cat(parser_.role() == Role::kServer ? "server" : "client", " '", parser_.match_key(), "' from ",
                 address_);
}

void Peer::start(std::chrono::milliseconds handshake_timeout) {
  timer_.expires_after(handshake_timeout);
  timer_.async_wait([self = shared_from_this(), handshake_timeout](const asio::error_code& ec) {
    if (ec || self->state_ != State::kHandshake) return;
    if (self->parser_.state() == HandshakeParser::State::kDone) return;
    self->close(str_cat("handshake not complete within ", handshake_timeout.count(), " ms"));
  });
  read_more();
}

void Peer::wait_for_partner(std::chrono::milliseconds timeout, std::function<void()> on_expire) {
  state_ = State::kWaiting;
  timer_.cancel();
  if (timeout.count() > 0) {
    timer_.expires_after(timeout);
    timer_.async_wait([self = shared_from_this(), on_expire = std::move(on_expire)](const asio::error_code& ec) {
      if (!ec && self->state_ == State::kWaiting) on_expire();
    });
  }
  read_more();
}

void Peer::pair(const std::shared_ptr<Peer>& a, const std::shared_ptr<Peer>& b) {
  a->partner_ = b;
  b->partner_ = a;
  for (const auto& [self, other] : {std::pair{a, b}, std::pair{b, a}}) {
    self->state_ = State::kRelaying;
    self->timer_.cancel();
    const std::string& key = other->parser_.key();
    self->write(i32_bytes(kRPCCodeSuccess) + i32_bytes(static_cast<int32_t>(key.size())) + key);
  }
  a->read_more();
  b->read_more();
}

void Peer::refuse(int32_t code, const std::string& reason) {
  log_info("RPCProxy: ", name(), ": ", reason);
  write(i32_bytes(code));
  close_after_flush();
}

void Peer::close(const std::string& reason) {
  if (state_ == State::kClosed) return;
  if (!reason.empty()) log_warning("RPCProxy: closing ", name(), ": ", reason);
  shut();
}

void Peer::read_more() {
  if (reading_ || state_ == State::kClosing || state_ == State::kClosed) return;
  reading_ = true;
  socket_.async_read_some(asio::buffer(buf_), [self = shared_from_this()](const asio::error_code& ec, size_t n) {
    self->on_read(ec, n);
  });
}

void Peer::on_read(const asio::error_code& ec, size_t n) {
  reading_ = false;
  if (state_ == State::kClosing || state_ == State::kClosed) return;
  if (ec) {
    bool eof = ec == asio::error::eof;
    switch (state_) {
      case State::kHandshake:
        close(eof ? "closed during the handshake" : str_cat("read failed during the handshake: ", ec.message()));
        break;
      case State::kWaiting:
        log_info("RPCProxy: ", name(), " left before being paired");
        close("");
        break;
      default:  // relaying: the session is over; flush what the partner still has for us
        if (!eof) log_info("RPCProxy: ", name(), ": ", ec.message());
        if (auto p = partner_.lock()) p->close_after_flush();
        close_after_flush();
        break;
    }
    return;
  }
  std::string_view data(buf_.data(), n);
  switch (state_) {
    case State::kHandshake: {
      HandshakeParser::State s = parser_.feed(data);
      if (s == HandshakeParser::State::kError) {
        close(parser_.error());
      } else if (s == HandshakeParser::State::kDone) {
        timer_.cancel();
        owner_.on_handshake(shared_from_this());
        // The owner paired, parked or refused us; paired and parked peers keep reading.
        if (state_ == State::kWaiting || state_ == State::kRelaying) read_more();
      } else {
        read_more();
      }
      break;
    }
    case State::kWaiting:
      close(str_cat("Invalid RPC protocol, too many bytes: ", n, " bytes before being paired"));
      break;
    case State::kRelaying: {
      std::shared_ptr<Peer> p = partner_.lock();
      if (!p || p->state_ != State::kRelaying) {
        close_after_flush();
        break;
      }
      p->write(std::string(data), [self = shared_from_this()] { self->read_more(); });
      break;
    }
    default:
      break;
  }
}

void Peer::write(std::string bytes, std::function<void()> then) {
  if (state_ == State::kClosed) return;
  outq_.push_back(Pending{std::move(bytes), std::move(then)});
  if (!writing_) write_next();
}

void Peer::write_next() {
  if (outq_.empty()) {
    writing_ = false;
    if (state_ == State::kClosing) shut();
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(outq_.front().bytes),
                    [self = shared_from_this()](const asio::error_code& ec, size_t) {
                      if (self->state_ == State::kClosed) return;
                      if (ec) {
                        self->writing_ = false;
                        if (auto p = self->partner_.lock()) p->close_after_flush();
                        self->close(self->state_ == State::kClosing ? "" : str_cat("write failed: ", ec.message()));
                        return;
                      }
                      std::function<void()> then = std::move(self->outq_.front().then);
                      self->outq_.pop_front();
                      if (then) then();
                      self->write_next();
                    });
}

void Peer::close_after_flush() {
  if (state_ == State::kClosing || state_ == State::kClosed) return;
  state_ = State::kClosing;
  if (!writing_) {
    shut();
    return;
  }
  timer_.expires_after(kCloseGrace);
  timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (!ec) self->shut();
  });
}

void Peer::shut() {
  if (state_ == State::kClosed) return;
  auto keep = shared_from_this();  // the owner may drop its reference in on_closed
  state_ = State::kClosed;
  timer_.cancel();
  asio::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  outq_.clear();
  std::shared_ptr<Peer> p = partner_.lock();
  partner_.reset();
  if (!owner_notified_) {
    owner_notified_ = true;
    owner_.on_closed(*this);
  }
  if (p) p->close_after_flush();
}

}  // namespace anvil::rpc::proxy
