// The proxy's pools and pairing rules (see pairing.h).
#include "anvil/rpc/proxy/pairing.h"

#include <cstdio>

namespace anvil::rpc::proxy {

PairingTable::Decision PairingTable::arrive(PeerId id, Role role, const std::string& match_key) {
  Decision d;
  if (tracker_mode_) {
    if (role == Role::kServer) {
      std::string key = fresh_key(match_key);
      servers_.emplace(key, id);
      by_id_[id] = {role, key};
      d.kind = Decision::kWait;
      d.waiting_key = key;
      return d;
    }
    auto it = servers_.find(match_key);
    if (it == servers_.end()) {
      d.kind = Decision::kMismatch;
      return d;
    }
    d.kind = Decision::kPair;
    d.partner = it->second;
    by_id_.erase(it->second);
    servers_.erase(it);
    return d;
  }
  Role other = role == Role::kServer ? Role::kClient : Role::kServer;
  auto& others = pool(other);
  if (auto it = others.find(match_key); it != others.end()) {
    d.kind = Decision::kPair;
    d.partner = it->second;
    by_id_.erase(it->second);
    others.erase(it);
    return d;
  }
  auto& mine = pool(role);
  if (mine.count(match_key) > 0) {
    d.kind = Decision::kDuplicate;
    return d;
  }
  mine.emplace(match_key, id);
  by_id_[id] = {role, match_key};
  d.kind = Decision::kWait;
  d.waiting_key = match_key;
  return d;
}

bool PairingTable::remove(PeerId id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return false;
  auto& p = pool(it->second.first);
  if (auto w = p.find(it->second.second); w != p.end() && w->second == id) p.erase(w);
  by_id_.erase(it);
  return true;
}

std::optional<std::string> PairingTable::server_key_of(PeerId id) const {
  auto it = by_id_.find(id);
  if (it == by_id_.end() || it->second.first != Role::kServer) return std::nullopt;
  return it->second.second;
}

std::string PairingTable::device_key_of(const std::string& match_key) {
  size_t colon = match_key.rfind(':');
  return colon == std::string::npos ? match_key : match_key.substr(0, colon);
}

std::string PairingTable::rekey_server(const std::string& old_key) {
  auto it = servers_.find(old_key);
  if (it == servers_.end()) return old_key;
  PeerId id = it->second;
  servers_.erase(it);
  std::string key = fresh_key(device_key_of(old_key));
  servers_.emplace(key, id);
  by_id_[id] = {Role::kServer, key};
  return key;
}

std::vector<std::string> PairingTable::server_keys() const {
  std::vector<std::string> out;
  for (const auto& [key, id] : servers_) out.push_back(key);
  return out;
}

std::string PairingTable::fresh_key(const std::string& prefix) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (;;) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%.16g", unit(rng_));
    std::string key = prefix + ":" + suffix;
    if (servers_.count(key) == 0) return key;
  }
}

}  // namespace anvil::rpc::proxy
