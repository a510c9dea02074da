// POSIX implementation of Channel and TCP setup (see transport.h). Every blocking call has a
// deadline (SO_RCVTIMEO for socket reads, poll() otherwise), so no peer can hold a reader or
// writer forever.
#include "anvil/rpc/transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstring>

#include "anvil/rpc/address.h"
#include "anvil/rpc/protocol.h"

namespace anvil::rpc {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Waits until fd is ready for `events`; false on timeout. Retries EINTR with the time left.
bool wait_fd(int fd, short events, int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int wait_ms = timeout_ms;
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      wait_ms = left > 0 ? static_cast<int>(left) : 0;
    }
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, wait_ms);
    if (rc > 0) return true;  // ready, or an error/hangup the next read/write will report
    if (rc == 0) return false;
    if (errno != EINTR) throw ChannelError(str_cat("poll failed: ", errno_text()));
  }
}

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

using Clock = std::chrono::steady_clock;
constexpr size_t kReadBufferBytes = size_t{64} << 10;
constexpr int kSocket = 1;
constexpr int kPipe = 2;

bool is_socket(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK) == 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int ms_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(std::min<int64_t>(left, INT_MAX)) : 0;
}

void set_port(SocketAddress& a, int port) {
  if (a.family() == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&a.storage)->sin_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in6*>(&a.storage)->sin6_port = htons(static_cast<uint16_t>(port));
  }
}

int bound_port(int fd) {
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

}  // namespace

Channel::Channel(int read_fd, int write_fd, std::string peer)
    : read_fd_(read_fd), write_fd_(write_fd), peer_(std::move(peer)) {}

Channel::~Channel() { close(); }

void Channel::move_from(Channel& other) noexcept {
  read_fd_ = std::exchange(other.read_fd_, -1);
  write_fd_ = std::exchange(other.write_fd_, -1);
  peer_ = std::move(other.peer_);
  kind_ = other.kind_;
  blocking_socket_ = other.blocking_socket_;
  receive_timeout_ms_ = other.receive_timeout_ms_;
  rbuf_ = std::move(other.rbuf_);
  rpos_ = std::exchange(other.rpos_, 0);
  rend_ = std::exchange(other.rend_, 0);
  peer_process_ = std::move(other.peer_process_);
}

Channel::Channel(Channel&& other) noexcept { move_from(other); }

Channel& Channel::operator=(Channel&& other) noexcept {
  if (this != &other) {
    close();
    move_from(other);
  }
  return *this;
}

void Channel::close() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0 && write_fd_ != read_fd_) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
  rpos_ = rend_ = 0;
  // Last: the peer may wait for the other end to see the close (a child reaped, a thread joined).
  if (std::shared_ptr<ChannelPeer> peer = std::move(peer_process_)) peer->on_channel_closed();
}

std::pair<int, int> Channel::release() {
  if (buffered() != 0) throw ChannelError(str_cat("cannot hand over a channel with ", buffered(), " unread bytes"));
  return {std::exchange(read_fd_, -1), std::exchange(write_fd_, -1)};
}

void Channel::set_read_buffering(bool on) {
  if (on && !rbuf_) rbuf_ = std::make_unique<char[]>(kReadBufferBytes);
  if (!on && buffered() == 0) {
    rbuf_.reset();
    rpos_ = rend_ = 0;
  }
}

bool Channel::input_ready() {
  if (buffered() != 0) return true;
  if (read_fd_ < 0) return false;
  pollfd p{read_fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

std::string Channel::loss_note() {
  if (!peer_process_) return "";
  std::string why = peer_process_->loss_reason();
  return why.empty() ? "" : str_cat(" (", why, ")");
}

void Channel::set_receive_timeout(int timeout_ms) {
  if (timeout_ms == receive_timeout_ms_) return;
  timeval tv{};  // {0, 0}: wait forever
  if (timeout_ms >= 0) {
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = (timeout_ms % 1000) * 1000;
    if (timeout_ms == 0) tv.tv_usec = 1;  // 0 would mean forever: the smallest real wait instead
  }
  if (::setsockopt(read_fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
    throw ChannelError(str_cat("setsockopt(SO_RCVTIMEO) failed: ", errno_text()));
  }
  receive_timeout_ms_ = timeout_ms;
}

void Channel::classify() {
  if (kind_ != 0) return;
  kind_ = is_socket(read_fd_) ? kSocket : kPipe;
  if (kind_ == kPipe) {
    // Try first, poll only when it would block: one system call per read when data is there.
    set_nonblocking(read_fd_);
    if (write_fd_ != read_fd_ && write_fd_ >= 0) set_nonblocking(write_fd_);
  } else {
    int flags = ::fcntl(read_fd_, F_GETFL);
    blocking_socket_ = flags >= 0 && (flags & O_NONBLOCK) == 0;
  }
}

size_t Channel::read_some(char* p, size_t cap, int timeout_ms, size_t done, size_t n) {
  classify();
  auto timed_out = [&] {
    return ChannelError(str_cat("read timed out after ", timeout_ms, " ms (", done, " of ", n, " bytes received)"));
  };
  std::optional<Clock::time_point> deadline;  // taken at the first wait: no clock read when data is there
  for (;;) {
    ssize_t got;
    if (kind_ == kSocket) {
      // One blocking recv; the kernel enforces the deadline through SO_RCVTIMEO.
      set_receive_timeout(timeout_ms);
      got = ::recv(read_fd_, p, cap, 0);
    } else {
      got = ::read(read_fd_, p, cap);
    }
    if (got >= 0) return static_cast<size_t>(got);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      throw ChannelError(str_cat("read failed: ", errno_text(), loss_note()));
    }
    if (kind_ == kSocket && blocking_socket_) throw timed_out();  // SO_RCVTIMEO expired
    // A pipe with nothing there yet, or a socket someone made non-blocking: poll with what is
    // left of the deadline.
    if (!deadline) deadline = Clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
    int left = timeout_ms < 0 ? -1 : ms_until(*deadline);
    if (left == 0 || !wait_fd(read_fd_, POLLIN, left)) throw timed_out();
  }
}

template <typename TimeoutFor>
bool Channel::read_exact_with(void* buf, size_t n, bool allow_eof, TimeoutFor timeout_for) {
  if (read_fd_ < 0) throw ChannelError("read on a closed channel");
  auto* out = static_cast<char*>(buf);
  size_t done = std::min(n, buffered());
  if (done != 0) {
    std::memcpy(out, rbuf_.get() + rpos_, done);
    rpos_ += done;
  }
  while (done < n) {
    int timeout = timeout_for(done);
    size_t want = n - done;
    size_t got;
    if (rbuf_ && want < kReadBufferBytes) {
      // Small read: take whatever has arrived (usually the rest of the packet, or more).
      got = read_some(rbuf_.get(), kReadBufferBytes, timeout, done, n);
      size_t use = std::min(got, want);
      std::memcpy(out + done, rbuf_.get(), use);
      rpos_ = use;
      rend_ = got;
    } else {
      got = read_some(out + done, want, timeout, done, n);  // bulk data: straight to its place
    }
    if (got == 0) {
      if (done == 0 && allow_eof) return false;
      throw ChannelError(str_cat("peer closed the connection after ", done, " of ", n, " bytes", loss_note()));
    }
    done += std::min(got, want);
  }
  return true;
}

bool Channel::read_exact(void* buf, size_t n, int first_timeout_ms, int stall_timeout_ms, bool allow_eof) {
  return read_exact_with(buf, n, allow_eof,
                         [&](size_t done) { return done == 0 ? first_timeout_ms : stall_timeout_ms; });
}

bool Channel::read_exact_until(void* buf, size_t n, Clock::time_point deadline, bool allow_eof) {
  return read_exact_with(buf, n, allow_eof, [&](size_t done) {
    int left = ms_until(deadline);
    if (left == 0) {
      throw ChannelError(str_cat("read deadline passed (", done, " of ", n, " bytes received)"));
    }
    return left;
  });
}

void Channel::write_all(const void* buf, size_t n, int timeout_ms) {
  write_all(std::string_view(static_cast<const char*>(buf), n), {}, timeout_ms);
}

void Channel::write_all(std::string_view head, std::string_view tail, int timeout_ms) {
  if (write_fd_ < 0) throw ChannelError("write on a closed channel");
  const size_t n = head.size() + tail.size();
  size_t done = 0;
  auto timed_out = [&] {
    return ChannelError(str_cat("write timed out after ", timeout_ms, " ms (", done, " of ", n, " bytes sent)"));
  };
  classify();
  while (done < n) {
    iovec iov[2];
    int count = 0;
    if (done < head.size()) iov[count++] = {const_cast<char*>(head.data() + done), head.size() - done};
    size_t tail_done = done > head.size() ? done - head.size() : 0;
    if (tail.size() > tail_done) iov[count++] = {const_cast<char*>(tail.data() + tail_done), tail.size() - tail_done};
    ssize_t put;
    if (kind_ == kSocket) {
      // MSG_NOSIGNAL: a vanished peer is an error to report, not a SIGPIPE that kills the process.
      // MSG_DONTWAIT: a blocking send of a large buffer could outlast the deadline; poll only
      // when the socket buffer is full.
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = static_cast<size_t>(count);
      put = ::sendmsg(write_fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    } else {
      put = ::writev(write_fd_, iov, count);  // non-blocking pipe: partial writes, or EAGAIN
    }
    if (put > 0) {
      done += static_cast<size_t>(put);
    } else if (put == 0 || errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_fd(write_fd_, POLLOUT, timeout_ms)) throw timed_out();
    } else if (errno == EPIPE || errno == ECONNRESET) {
      throw ChannelError(str_cat("write failed: ", errno_text(), loss_note()));
    } else if (errno != EINTR) {
      throw ChannelError(str_cat("write failed: ", errno_text()));
    }
  }
}

std::pair<Channel, Channel> channel_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw ChannelError(str_cat("socketpair failed: ", errno_text()));
  }
  return {Channel(fds[0], fds[0], "socketpair"), Channel(fds[1], fds[1], "socketpair")};
}

TcpListener::~TcpListener() { close(); }

TcpListener::TcpListener(TcpListener&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(other.port_) {}

TcpListener& TcpListener::operator=(TcpListener&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    port_ = other.port_;
  }
  return *this;
}

void TcpListener::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

TcpListener TcpListener::bind(const std::string& host, int port, int port_end, int backlog) {
  if (port_end <= port) port_end = port + 1;
  if (port < 0 || port > kMaxPort || port_end > kMaxPort + 1) {
    throw ChannelError(str_cat("port range [", port, ", ", port_end, ") is invalid (ports are 0..", kMaxPort, ")"));
  }
  std::vector<SocketAddress> addresses = resolve_address(host, port, /*passive=*/true);
  std::string last_error;
  for (int p = port; p < port_end; ++p) {
    for (SocketAddress& addr : addresses) {
      set_port(addr, p);
      int fd = ::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) throw ChannelError(str_cat("socket failed: ", errno_text()));
      int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(fd, addr.get(), addr.length) == 0 && ::listen(fd, backlog) == 0) {
        TcpListener l;
        l.fd_ = fd;
        l.port_ = bound_port(fd);
        return l;
      }
      last_error = errno_text();
      ::close(fd);
    }
  }
  throw ChannelError(str_cat("cannot bind ", host, " on any port in [", port, ", ", port_end, "): ", last_error));
}

std::optional<Channel> TcpListener::accept(int timeout_ms) {
  if (fd_ < 0) throw ChannelError("accept on a closed listener");
  if (!wait_fd(fd_, POLLIN, timeout_ms)) return std::nullopt;
  sockaddr_storage peer{};
  socklen_t len = sizeof peer;
  int fd = ::accept(fd_, reinterpret_cast<sockaddr*>(&peer), &len);
  if (fd < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) return std::nullopt;
    throw ChannelError(str_cat("accept failed: ", errno_text()));
  }
  set_cloexec(fd);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return Channel(fd, fd, address_text(reinterpret_cast<sockaddr*>(&peer), len));
}

Channel tcp_connect(const std::string& host, int port, int timeout_ms) {
  std::string where = format_host_port(host, port);
  if (port < 1 || port > kMaxPort) throw ChannelError(str_cat("cannot connect to ", where, ": port out of range"));
  std::vector<SocketAddress> addresses = resolve_address(host, port, /*passive=*/false);
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last_error;
  int fd = -1;
  for (const SocketAddress& addr : addresses) {  // each address of a name in turn, within the one deadline
    fd = ::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) throw ChannelError(str_cat("socket failed: ", errno_text()));
    int err = 0;
    if (::connect(fd, addr.get(), addr.length) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        if (!wait_fd(fd, POLLOUT, timeout_ms < 0 ? -1 : ms_until(deadline))) {
          ::close(fd);
          throw ChannelError(str_cat("connecting to ", where, " timed out"));
        }
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      }
    }
    if (err == 0) break;
    last_error = std::strerror(err);
    ::close(fd);
    fd = -1;
  }
  if (fd < 0) throw ChannelError(str_cat("cannot connect to ", where, ": ", last_error));
  Channel ch(fd, fd, where);  // closes fd on any error below
  // Blocking from here on: every read and write is guarded by poll() with a deadline.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return ch;
}

std::string local_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  return address_host(reinterpret_cast<sockaddr*>(&addr), len);
}

}  // namespace anvil::rpc
