// Who waits for whom at the proxy (spec §5): one pool of waiting servers and one of waiting
// clients, each keyed by match key, plus the rules of both modes. No sockets and no clocks: the
// proxy calls these on every event, and the unit tests call them directly.
//
// Plain mode: a peer pairs with the peer of the other role waiting under the same
// key; otherwise it waits; a second peer of the same role and key is a DUPLICATE.
// Tracker mode: each server waits under a fresh "<device key>:<random>" match key that the
// proxy PUTs to the tracker; a client must present one of those keys, else MISMATCH at once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "anvil/rpc/proxy/handshake_parser.h"

namespace anvil::rpc::proxy {

using PeerId = uint64_t;

class PairingTable {
 public:
  struct Decision {
    enum Kind { kPair, kWait, kDuplicate, kMismatch } kind = kWait;
    PeerId partner = 0;        // kPair
    std::string waiting_key;   // kWait: the key it waits under (tracker mode: the fresh match key)
  };

  explicit PairingTable(bool tracker_mode, uint64_t seed = std::random_device{}())
      : tracker_mode_(tracker_mode), rng_(seed) {}

  // A peer finished its handshake: pair it, park it, or refuse it.
  Decision arrive(PeerId id, Role role, const std::string& match_key);
  // The peer left (closed, timed out). Returns true if it was waiting.
  bool remove(PeerId id);
  bool waiting(PeerId id) const { return by_id_.count(id) > 0; }

  // Tracker mode: the key a waiting server is registered under, and its device key.
  std::optional<std::string> server_key_of(PeerId id) const;
  static std::string device_key_of(const std::string& match_key);  // "k:0.123" -> "k"
  // Tracker mode: gives the server waiting under `old_key` a new random key and returns it.
  std::string rekey_server(const std::string& old_key);
  // Match keys of all waiting servers.
  std::vector<std::string> server_keys() const;
  size_t waiting_count(Role role) const { return pool(role).size(); }

 private:
  std::map<std::string, PeerId>& pool(Role role) { return role == Role::kServer ? servers_ : clients_; }
  const std::map<std::string, PeerId>& pool(Role role) const { return role == Role::kServer ? servers_ : clients_; }
  // TVM's random_key: "<prefix>:<random in [0,1)>", unused in the server pool.
  std::string fresh_key(const std::string& prefix);

  bool tracker_mode_;
  std::mt19937_64 rng_;
  std::map<std::string, PeerId> servers_, clients_;
  std::map<PeerId, std::pair<Role, std::string>> by_id_;
};

}  // namespace anvil::rpc::proxy
