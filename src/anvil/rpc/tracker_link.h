// The server's side of TVM's tracker protocol (spec §4.1-4.5): connect and exchange the tracker
// magic, UPDATE_INFO once per connection, PUT a fresh match key "<key>:<random>" whenever the
// server is free, poll GET_PENDING_MATCHKEYS while idle and rotate a key that a client took but
// never used. Every failure is logged and retried later; none of them stops the server.
#pragma once

#include <chrono>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "anvil/rpc/transport.h"

namespace anvil::rpc {

class TrackerLink {
 public:
  // tracker: "host:port" (split on the last ':'). ValueError when it cannot be parsed.
  TrackerLink(const std::string& tracker, std::string key, int listen_port, std::string custom_addr);

  // Called from the accept loop (several times a second): connects when due, polls the pending
  // keys every 2 s, rotates a lost key after ~8 s.
  void tick();
  // The match key a client must present now (the rpc key itself before the first PUT).
  std::string match_key() const;
  // A session ended: PUT a fresh key so the tracker hands this server out again.
  void after_session();

  bool connected() const { return channel_.is_open(); }

 private:
  void connect();
  void put_new_key();
  // Sends one JSON request and returns the JSON reply text. Throws on any failure.
  std::string request(const std::string& json);
  void drop(const std::string& why);

  std::string host_;
  int port_ = 0;
  std::string key_;
  int listen_port_;
  std::string custom_addr_;
  Channel channel_;
  std::string match_key_;
  std::set<std::string> used_keys_;
  int missing_ticks_ = 0;
  std::chrono::steady_clock::time_point next_connect_{};
  std::chrono::steady_clock::time_point next_poll_{};
  std::mt19937_64 rng_;
};

}  // namespace anvil::rpc
