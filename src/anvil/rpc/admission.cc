// Pending connections of the RPC server, each a small state machine driven by poll() (see
// admission.h).
#include "anvil/rpc/admission.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "anvil/rpc/auth.h"
#include "anvil/rpc/handshake.h"
#include "anvil/rpc/log.h"

namespace anvil::rpc {
namespace {

using Clock = std::chrono::steady_clock;

// What a connection is doing: reading one piece (magic, key length, key; the auth answer's
// length, its body), or waiting with everything sent (for the server to be free, for its
// session).
enum class Stage { kMagic, kKeyLength, kKey, kKeyDone, kAuthLength, kAuthBody, kReady };

bool is_reading(Stage s) { return s != Stage::kKeyDone && s != Stage::kReady; }

int ms_until(Clock::time_point t) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return left > 0 ? static_cast<int>(std::min<int64_t>(left, INT_MAX)) : 0;
}

}  // namespace

struct Admission::Pending {
  Channel conn;
  std::string peer;
  Stage stage = Stage::kMagic;
  Clock::time_point accepted;
  Clock::time_point deadline;       // for the reading stages
  Clock::time_point waiting_since;  // in kKeyDone and kReady: the clock stopped here
  std::string got;                  // bytes of the piece being read
  size_t want = 4;                  // its size
  std::string key;
  std::string nonce;                // the server nonce sent in the answer (auth only)
  uint64_t ready_order = 0;
  bool dead = false;
};

Admission::Admission(Limits limits, std::string auth_token, size_t max_pending)
    : limits_(limits), auth_token_(std::move(auth_token)), max_pending_(std::max<size_t>(max_pending, 1)) {}

Admission::~Admission() = default;

void Admission::add(Channel conn) {
  if (pending_.size() >= max_pending_) make_room();
  if (pending_.size() >= max_pending_) {
    log_warning("connection from ", conn.peer(), " refused: ", pending_.size(),
                " connections already wait for a session (the limit)");
    return;
  }
  auto p = std::make_unique<Pending>();
  p->peer = conn.peer();
  p->conn = std::move(conn);
  p->accepted = Clock::now();
  p->deadline = p->accepted + std::chrono::milliseconds(limits_.handshake_timeout_ms);
  pending_.push_back(std::move(p));
}

void Admission::make_room() {
  Pending* oldest = nullptr;
  for (auto& p : pending_) {
    if (!p->dead && is_reading(p->stage) && (oldest == nullptr || p->accepted < oldest->accepted)) oldest = p.get();
  }
  if (oldest == nullptr) return;
  fail(*oldest, str_cat("dropped to make room: ", pending_.size(),
                        " connections are pending (the limit) and this one is the oldest still in its handshake"));
  std::erase_if(pending_, [](const auto& p) { return p->dead; });
}

void Admission::fail(Pending& p, const std::string& reason) {
  log_warning("connection from ", p.peer, " refused: ", reason);
  p.conn.close();
  p.dead = true;
}

void Admission::send(Pending& p, const std::string& bytes) {
  // A few bytes into a socket that has sent nothing yet: the kernel buffer takes them at once.
  p.conn.write_all(bytes.data(), bytes.size(), std::max(1, std::min(ms_until(p.deadline), 1000)));
}

bool Admission::step(int timeout_ms, int listen_fd) {
  std::vector<pollfd> fds;
  fds.reserve(pending_.size() + 1);
  if (listen_fd >= 0) fds.push_back({listen_fd, POLLIN, 0});
  size_t first = fds.size();
  int wait_ms = timeout_ms;
  for (auto& p : pending_) {
    short events = POLLRDHUP;  // waiting: notice a peer that gives up
    if (is_reading(p->stage)) {
      events = POLLIN;
      int left = ms_until(p->deadline);
      wait_ms = wait_ms < 0 ? left : std::min(wait_ms, left);
    }
    fds.push_back({p->conn.read_fd(), events, 0});
  }
  int rc = ::poll(fds.data(), fds.size(), wait_ms);
  if (rc < 0 && errno != EINTR) log_warning("poll failed: ", std::strerror(errno));
  bool listener_ready = rc > 0 && listen_fd >= 0 && (fds[0].revents & POLLIN) != 0;
  if (rc > 0) {
    for (size_t i = 0; i < pending_.size(); ++i) {
      Pending& p = *pending_[i];
      short revents = fds[first + i].revents;
      if (revents == 0) continue;
      if (is_reading(p.stage)) {
        read_progress(p);
      } else if ((revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
        fail(p, p.stage == Stage::kReady ? "closed the connection while waiting for the running session to end"
                                         : "closed the connection while waiting for the server's answer");
      }
    }
  }
  auto now = Clock::now();
  for (auto& p : pending_) {
    if (p->dead || !is_reading(p->stage) || now < p->deadline) continue;
    bool auth = p->stage == Stage::kAuthLength || p->stage == Stage::kAuthBody;
    const char* what = p->stage == Stage::kMagic      ? "the magic"
                       : p->stage == Stage::kKeyLength ? "the key length"
                       : p->stage == Stage::kKey       ? "the key"
                                                       : "the answer";
    fail(*p, str_cat(auth ? "authentication failed: timed out: " : "handshake timed out: ",
                     "not complete within the ", limits_.handshake_timeout_ms,
                     " ms handshake deadline counted from accept (", p->got.size(), " of ", p->want, " bytes of ",
                     what, " received)"));
  }
  std::erase_if(pending_, [](const auto& p) { return p->dead; });
  return listener_ready;
}

void Admission::read_progress(Pending& p) {
  char buf[4096];
  while (!p.dead && is_reading(p.stage)) {
    size_t room = std::min(sizeof buf, p.want - p.got.size());
    ssize_t n = room == 0 ? 0 : ::recv(p.conn.read_fd(), buf, room, MSG_DONTWAIT);
    if (room == 0) {
      piece_complete(p);  // an empty key
      continue;
    }
    if (n > 0) {
      p.got.append(buf, static_cast<size_t>(n));
      if (p.got.size() == p.want) piece_complete(p);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n == 0) {
      bool nothing = p.stage == Stage::kMagic && p.got.empty();
      bool auth = p.stage == Stage::kAuthLength || p.stage == Stage::kAuthBody;
      fail(p, nothing ? "peer closed before sending the magic"
              : auth  ? "authentication failed: the client closed the connection instead of answering the challenge"
                      : "handshake failed: peer closed the connection in the middle of the handshake");
    } else {
      fail(p, str_cat("handshake failed: read failed: ", std::strerror(errno)));
    }
  }
}

void Admission::piece_complete(Pending& p) {
  std::string piece = std::move(p.got);
  p.got.clear();
  int32_t word = 0;
  if (piece.size() >= 4) std::memcpy(&word, piece.data(), 4);
  try {
    switch (p.stage) {
      case Stage::kMagic:
        if (std::string problem = check_hello_header(word, 0, limits_); !problem.empty()) return fail(p, problem);
        p.stage = Stage::kKeyLength;
        p.want = 4;
        return;
      case Stage::kKeyLength:
        if (std::string problem = check_hello_header(kRPCMagic, word, limits_); !problem.empty()) {
          return fail(p, problem);
        }
        p.stage = Stage::kKey;
        p.want = static_cast<size_t>(word);
        return;
      case Stage::kKey:
        p.key = std::move(piece);
        p.stage = Stage::kKeyDone;
        p.waiting_since = Clock::now();
        return;
      case Stage::kAuthLength: {
        uint64_t length = 0;
        std::memcpy(&length, piece.data(), 8);
        if (std::optional<AuthVerdict> bad = check_auth_length(length)) {
          try {
            send(p, bad->send);
          } catch (const Error&) {
          }
          return fail(p, bad->reason);
        }
        p.stage = Stage::kAuthBody;
        p.want = static_cast<size_t>(length);
        return;
      }
      case Stage::kAuthBody: {
        AuthVerdict v = check_auth_answer(piece, auth_token_, p.nonce);
        if (!v.ok) {
          try {
            send(p, v.send);
          } catch (const Error&) {
          }
          return fail(p, v.reason);
        }
        send(p, v.send);
        p.stage = Stage::kReady;
        p.ready_order = ++ready_counter_;
        p.waiting_since = Clock::now();
        return;
      }
      case Stage::kKeyDone:
      case Stage::kReady:
        return;
    }
  } catch (const Error& e) {
    fail(p, str_cat("handshake failed: ", e.what()));
  }
}

void Admission::answer_waiting(const std::string& match_key, const std::string& server_key) {
  for (auto& p : pending_) {
    if (p->dead || p->stage != Stage::kKeyDone) continue;
    p->deadline += Clock::now() - p->waiting_since;  // the clock ran only while it was reading
    std::string key = server_key;
    if (!auth_token_.empty()) {
      p->nonce = random_bytes(kAuthNonceBytes);
      key += auth_nonce_option(p->nonce);
    }
    HelloAnswer answer = answer_hello(p->key, match_key, key);
    try {
      send(*p, answer.send);
    } catch (const Error& e) {
      fail(*p, str_cat("handshake failed: ", e.what()));
      continue;
    }
    if (!answer.ok) {
      fail(*p, answer.reason);
    } else if (auth_token_.empty()) {
      p->stage = Stage::kReady;
      p->ready_order = ++ready_counter_;
      p->waiting_since = Clock::now();
    } else {
      p->stage = Stage::kAuthLength;
      p->want = 8;
    }
  }
  std::erase_if(pending_, [](const auto& p) { return p->dead; });
}

std::optional<Admission::Ready> Admission::take_ready() {
  auto best = pending_.end();
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if ((*it)->stage == Stage::kReady && (best == pending_.end() || (*it)->ready_order < (*best)->ready_order)) {
      best = it;
    }
  }
  if (best == pending_.end()) return std::nullopt;
  Ready r{std::move((*best)->conn), std::move((*best)->peer), std::move((*best)->key)};
  pending_.erase(best);
  return r;
}

void Admission::close_all() {
  for (auto& p : pending_) p->conn.close();
  pending_.clear();
}

}  // namespace anvil::rpc
