// Byte streams for RPC: a Channel over one socket or a pair of pipe descriptors, with a timeout
// on every read and write, plus TCP listen/accept/connect on IPv4 (and "localhost"). Packets and
// handshakes sit on top of this (endpoint.h, handshake.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace anvil::rpc {

class Channel {
 public:
  Channel() = default;
  // Takes ownership of the descriptors; read_fd == write_fd for a socket.
  Channel(int read_fd, int write_fd, std::string peer = "");
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  Channel(Channel&& other) noexcept;
  Channel& operator=(Channel&& other) noexcept;

  // Reads exactly n bytes. The first byte must arrive within first_timeout_ms and each later one
  // within stall_timeout_ms of the previous (-1 = wait forever). Returns false only when
  // allow_eof is set and the peer closed before the first byte; throws ChannelError on a timeout,
  // an error, or a close after the first byte.
  bool read_exact(void* buf, size_t n, int first_timeout_ms, int stall_timeout_ms, bool allow_eof = false);
  // Writes all n bytes; ChannelError when the peer is gone or does not drain for timeout_ms.
  void write_all(const void* buf, size_t n, int timeout_ms);

  bool is_open() const { return read_fd_ >= 0; }
  int read_fd() const { return read_fd_; }
  int write_fd() const { return write_fd_; }
  // "127.0.0.1:5000" for TCP peers, else what the creator passed.
  const std::string& peer() const { return peer_; }
  void close();
  // Gives the descriptors up without closing them (for handing a socket to a child process).
  std::pair<int, int> release();

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::string peer_;
};

// Two connected channels (a socketpair): for tests, and for talking to a child process.
std::pair<Channel, Channel> channel_pair();

class TcpListener {
 public:
  TcpListener() = default;
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  TcpListener(TcpListener&& other) noexcept;
  TcpListener& operator=(TcpListener&& other) noexcept;

  // Binds host:port for the first free port in [port, port_end) (port_end <= port: just port).
  // host: an IPv4 literal, "localhost" or "0.0.0.0". ChannelError when no port is free.
  static TcpListener bind(const std::string& host, int port, int port_end, int backlog = 1);

  int port() const { return port_; }
  int fd() const { return fd_; }
  // The next connection, or nullopt when none arrives within timeout_ms (-1 = wait forever).
  std::optional<Channel> accept(int timeout_ms);
  void close();

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Connects to host:port within timeout_ms. ChannelError naming the address on failure.
Channel tcp_connect(const std::string& host, int port, int timeout_ms);

// The IPv4 address of the local end of a connected socket ("127.0.0.1").
std::string local_address(int fd);

}  // namespace anvil::rpc
