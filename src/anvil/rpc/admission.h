// The RPC server's connections between accept and their session: many at once, none holding up
// the others. Each one reads TVM's handshake (magic, key length, key), is answered when the
// server is free to match it (the tracker's match key changes after each session), then, with
// an auth token, does the challenge-response of auth.h. All of that must finish within one
// deadline, Limits::handshake_timeout_ms counted from accept, however slowly the bytes arrive.
// The clock stops while a connection has sent everything it must and only waits for the running
// session to end (as a client waiting in the listen backlog would), so a queued client is not
// cut off by someone else's long session.
//
// Single-threaded and non-blocking: the server's loop calls step() (one poll() over the
// listening socket and every pending connection), answer_waiting() when no session runs, and
// take_ready() for the next session. Writes are a few bytes into a fresh socket's buffer.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "anvil/rpc/protocol.h"
#include "anvil/rpc/transport.h"

namespace anvil::rpc {

class Admission {
 public:
  // At most this many connections are pending at once (each costs one descriptor). When a new
  // one arrives at the limit, the oldest one still reading its handshake is dropped to make room;
  // when all of them are waiting for the server, the new one is refused.
  static constexpr size_t kDefaultMaxPending = 256;

  // A connection whose handshake (and authentication) is complete: its session may start.
  struct Ready {
    Channel conn;
    std::string peer;
    std::string client_key;  // the whole key, "client:k -timeout=10"
  };

  Admission(Limits limits, std::string auth_token, size_t max_pending = kDefaultMaxPending);
  ~Admission();
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // Takes a connection just accepted; its deadline starts now.
  void add(Channel conn);
  // Waits up to timeout_ms (less when a deadline comes sooner) for input on the pending
  // connections and on listen_fd (-1: none), reads what arrived, closes connections that failed
  // or ran out of time (each logged with its reason). Returns true when listen_fd is readable.
  bool step(int timeout_ms, int listen_fd);
  // The server is free: answers every connection whose key is complete (MISMATCH closes it;
  // SUCCESS sends "server:<server_key>" plus a fresh auth nonce when a token is set).
  void answer_waiting(const std::string& match_key, const std::string& server_key);
  // The connection that completed its handshake first, if any.
  std::optional<Ready> take_ready();

  size_t size() const { return pending_.size(); }
  // In a forked session child: closes every pending descriptor (the child must not keep a
  // connection alive that the server closes).
  void close_all();

 private:
  struct Pending;
  void read_progress(Pending& p);
  void piece_complete(Pending& p);
  void fail(Pending& p, const std::string& reason);
  void send(Pending& p, const std::string& bytes);
  void make_room();

  Limits limits_;
  std::string auth_token_;
  size_t max_pending_;
  uint64_t ready_counter_ = 0;
  std::vector<std::unique_ptr<Pending>> pending_;
};

}  // namespace anvil::rpc
