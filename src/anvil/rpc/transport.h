// Byte streams for RPC: a Channel over one socket or a pair of pipe descriptors, with a timeout
// on every read and write, plus TCP listen/accept/connect on IPv4 (and "localhost"). Packets and
// handshakes sit on top of this (endpoint.h, handshake.h).
//
// System calls per operation (the RPC round trip is bound by them): a socket read is one
// blocking recv whose deadline is the socket's SO_RCVTIMEO (set only when the timeout changes);
// a write is one non-blocking send (sendmsg for two buffers) that polls only when the socket
// buffer is full. Pipes are switched to O_NONBLOCK and poll only when a read or write would block.
// With read buffering on (Endpoint turns it on), small reads are served from a 64 KiB buffer
// filled by one recv, so a packet's length and body usually cost one system call together.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace anvil::rpc {

// What sits at the other end of a channel when it is more than a socket: a child process
// (connect_popen) or a serving thread (connect_local). The channel tells it when it closes, and
// asks it why the peer went away when the stream ends unexpectedly.
class ChannelPeer {
 public:
  virtual ~ChannelPeer() = default;
  // Called once, after the channel's descriptors are closed: reap the process, join the thread.
  virtual void on_channel_closed() = 0;
  // Why the peer stopped talking ("the server process 123 was killed by signal 9 (Killed)"), or
  // "" when it does not know. Called when a read meets end-of-stream or a write a broken pipe.
  virtual std::string loss_reason() = 0;
};

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
  // The same with one total deadline for all n bytes, however they trickle in (a handshake: a
  // peer sending one byte at a time gets no more time than one sending all at once).
  bool read_exact_until(void* buf, size_t n, std::chrono::steady_clock::time_point deadline, bool allow_eof = false);
  // Writes all n bytes; ChannelError when the peer is gone or does not drain for timeout_ms.
  void write_all(const void* buf, size_t n, int timeout_ms);
  // Writes head then tail with as few system calls as the stream takes (one sendmsg/writev
  // when the buffer has room): a packet and its bulk payload without concatenating them.
  void write_all(std::string_view head, std::string_view tail, int timeout_ms);

  // Read buffering (off by default, so that a handshake never reads past its last byte): small
  // reads then fill an internal buffer with whatever has arrived, up to 64 KiB. Turn it on only
  // where this channel alone consumes the stream from then on (release() refuses to hand over
  // buffered bytes).
  void set_read_buffering(bool on);
  // Bytes received but not yet consumed by read_exact.
  size_t buffered() const { return rend_ - rpos_; }
  // True when a read would return at once: buffered bytes, data, end-of-stream or an error.
  bool input_ready();

  // " (the server process 123 exited with status 1)" when an attached peer knows why the
  // stream ended, else "": appended to the messages of errors that mean the peer is gone.
  std::string loss_note();
  // Ties a peer (child process, serving thread) to this channel's lifetime; see ChannelPeer.
  void attach_peer(std::shared_ptr<ChannelPeer> peer) { peer_process_ = std::move(peer); }

  bool is_open() const { return read_fd_ >= 0; }
  int read_fd() const { return read_fd_; }
  int write_fd() const { return write_fd_; }
  // "127.0.0.1:5000" for TCP peers, else what the creator passed.
  const std::string& peer() const { return peer_; }
  void close();
  // Gives the descriptors up without closing them (for handing a socket to a child process).
  // ChannelError when buffered input would be lost with them.
  std::pair<int, int> release();

 private:
  // One read of up to cap bytes into p: > 0 bytes, or 0 at end-of-stream. ChannelError on a
  // timeout or an error (`done`/`n` only word the message).
  size_t read_some(char* p, size_t cap, int timeout_ms, size_t done, size_t n);
  // read_exact's loop: timeout_for(done) is the wait allowed for the next bytes.
  template <typename TimeoutFor>
  bool read_exact_with(void* buf, size_t n, bool allow_eof, TimeoutFor timeout_for);
  // Socket or pipe, found out on first use; pipes are made non-blocking then.
  void classify();
  // The socket's receive timeout, set only when it changes.
  void set_receive_timeout(int timeout_ms);
  void move_from(Channel& other) noexcept;

  int read_fd_ = -1;
  int write_fd_ = -1;
  std::string peer_;
  int kind_ = 0;                   // 0 unknown, 1 socket, 2 pipe or other non-socket
  bool blocking_socket_ = false;   // a socket without O_NONBLOCK: EAGAIN from recv is a timeout
  int receive_timeout_ms_ = -2;    // SO_RCVTIMEO currently set (-2: not yet set)
  std::unique_ptr<char[]> rbuf_;   // read buffer (when buffering is on)
  size_t rpos_ = 0, rend_ = 0;
  std::shared_ptr<ChannelPeer> peer_process_;
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
  // host: an IPv4 or IPv6 literal ("0.0.0.0", "::1") or a name ("localhost" is 127.0.0.1),
  // resolved by address.h. ChannelError when it does not resolve or no port is free.
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

// Connects to host:port (an IPv4/IPv6 literal or a name: each of its addresses in turn) within
// timeout_ms. ChannelError naming the address on failure.
Channel tcp_connect(const std::string& host, int port, int timeout_ms);

// The address of the local end of a connected socket ("127.0.0.1", "::1").
std::string local_address(int fd);

}  // namespace anvil::rpc
