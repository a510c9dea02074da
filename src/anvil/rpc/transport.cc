// POSIX implementation of Channel and TCP setup (see transport.h). Every blocking call goes
// through poll() with a deadline, so no peer can hold a reader or writer forever.
#include "anvil/rpc/transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstring>

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

sockaddr_in parse_ipv4(const std::string& host, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string h = host == "localhost" ? "127.0.0.1" : host;
  if (::inet_pton(AF_INET, h.c_str(), &addr.sin_addr) != 1) {
    throw ChannelError(str_cat("'", host, "' is not an IPv4 address (or 'localhost')"));
  }
  return addr;
}

std::string address_text(const sockaddr_in& addr) {
  char buf[INET_ADDRSTRLEN] = {0};
  ::inet_ntop(AF_INET, &addr.sin_addr, buf, sizeof buf);
  return str_cat(buf, ":", ntohs(addr.sin_port));
}

}  // namespace

Channel::Channel(int read_fd, int write_fd, std::string peer)
    : read_fd_(read_fd), write_fd_(write_fd), peer_(std::move(peer)) {}

Channel::~Channel() { close(); }

Channel::Channel(Channel&& other) noexcept
    : read_fd_(std::exchange(other.read_fd_, -1)),
      write_fd_(std::exchange(other.write_fd_, -1)),
      peer_(std::move(other.peer_)) {}

Channel& Channel::operator=(Channel&& other) noexcept {
  if (this != &other) {
    close();
    read_fd_ = std::exchange(other.read_fd_, -1);
    write_fd_ = std::exchange(other.write_fd_, -1);
    peer_ = std::move(other.peer_);
  }
  return *this;
}

void Channel::close() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0 && write_fd_ != read_fd_) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
}

std::pair<int, int> Channel::release() {
  return {std::exchange(read_fd_, -1), std::exchange(write_fd_, -1)};
}

bool Channel::read_exact(void* buf, size_t n, int first_timeout_ms, int stall_timeout_ms, bool allow_eof) {
  if (read_fd_ < 0) throw ChannelError("read on a closed channel");
  auto* out = static_cast<char*>(buf);
  size_t done = 0;
  while (done < n) {
    int timeout = done == 0 ? first_timeout_ms : stall_timeout_ms;
    auto timed_out = [&] {
      return ChannelError(str_cat("read timed out after ", timeout, " ms (", done, " of ", n, " bytes received)"));
    };
    // Try first and poll only when nothing is there: a request/reply exchange then costs one
    // system call per read instead of two (poll + read).
    ssize_t got = ::recv(read_fd_, out + done, n - done, MSG_DONTWAIT);
    if (got < 0 && errno == ENOTSOCK) {  // a pipe: wait, then a read that cannot block
      if (!wait_fd(read_fd_, POLLIN, timeout)) throw timed_out();
      got = ::read(read_fd_, out + done, n - done);
    }
    if (got > 0) {
      done += static_cast<size_t>(got);
    } else if (got == 0) {
      if (done == 0 && allow_eof) return false;
      throw ChannelError(str_cat("peer closed the connection after ", done, " of ", n, " bytes"));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_fd(read_fd_, POLLIN, timeout)) throw timed_out();
    } else if (errno != EINTR) {
      throw ChannelError(str_cat("read failed: ", errno_text()));
    }
  }
  return true;
}

void Channel::write_all(const void* buf, size_t n, int timeout_ms) {
  if (write_fd_ < 0) throw ChannelError("write on a closed channel");
  const auto* in = static_cast<const char*>(buf);
  size_t done = 0;
  auto timed_out = [&] {
    return ChannelError(str_cat("write timed out after ", timeout_ms, " ms (", done, " of ", n, " bytes sent)"));
  };
  while (done < n) {
    // MSG_NOSIGNAL: a vanished peer is an error to report, not a SIGPIPE that kills the process.
    // MSG_DONTWAIT: a blocking send of a large buffer could outlast the deadline; poll only
    // when the socket buffer is full.
    ssize_t put = ::send(write_fd_, in + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (put < 0 && errno == ENOTSOCK) {
      // A pipe: after POLLOUT, up to PIPE_BUF bytes go in without blocking.
      if (!wait_fd(write_fd_, POLLOUT, timeout_ms)) throw timed_out();
      put = ::write(write_fd_, in + done, std::min<size_t>(n - done, PIPE_BUF));
    }
    if (put > 0) {
      done += static_cast<size_t>(put);
    } else if (put == 0 || errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_fd(write_fd_, POLLOUT, timeout_ms)) throw timed_out();
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
  if (port < 0 || port_end > 65536) throw ChannelError(str_cat("port range [", port, ", ", port_end, ") is invalid"));
  std::string last_error;
  for (int p = port; p < port_end; ++p) {
    sockaddr_in addr = parse_ipv4(host, p);
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw ChannelError(str_cat("socket failed: ", errno_text()));
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd, backlog) == 0) {
      sockaddr_in bound{};
      socklen_t len = sizeof bound;
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
      TcpListener l;
      l.fd_ = fd;
      l.port_ = ntohs(bound.sin_port);
      return l;
    }
    last_error = errno_text();
    ::close(fd);
  }
  throw ChannelError(str_cat("cannot bind ", host, " on any port in [", port, ", ", port_end, "): ", last_error));
}

std::optional<Channel> TcpListener::accept(int timeout_ms) {
  if (fd_ < 0) throw ChannelError("accept on a closed listener");
  if (!wait_fd(fd_, POLLIN, timeout_ms)) return std::nullopt;
  sockaddr_in peer{};
  socklen_t len = sizeof peer;
  int fd = ::accept(fd_, reinterpret_cast<sockaddr*>(&peer), &len);
  if (fd < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) return std::nullopt;
    throw ChannelError(str_cat("accept failed: ", errno_text()));
  }
  set_cloexec(fd);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return Channel(fd, fd, address_text(peer));
}

Channel tcp_connect(const std::string& host, int port, int timeout_ms) {
  sockaddr_in addr = parse_ipv4(host, port);
  std::string where = str_cat(host, ":", port);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw ChannelError(str_cat("socket failed: ", errno_text()));
  Channel ch(fd, fd, where);  // closes fd on any error below
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) throw ChannelError(str_cat("cannot connect to ", where, ": ", errno_text()));
    if (!wait_fd(fd, POLLOUT, timeout_ms)) throw ChannelError(str_cat("connecting to ", where, " timed out"));
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) throw ChannelError(str_cat("cannot connect to ", where, ": ", std::strerror(err)));
  }
  // Blocking from here on: every read and write is guarded by poll() with a deadline.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return ch;
}

std::string local_address(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  char buf[INET_ADDRSTRLEN] = {0};
  ::inet_ntop(AF_INET, &addr.sin_addr, buf, sizeof buf);
  return buf;
}

}  // namespace anvil::rpc
