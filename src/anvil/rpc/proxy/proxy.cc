// The proxy's event loop (see proxy.h): accepts connections, hands finished handshakes to the
// PairingTable, pairs or parks or refuses, and in tracker mode keeps the tracker told about
// every waiting server (PUT "<key>:<random>", UPDATE_INFO "server:proxy[k1,k2]", and a poll of
// GET_PENDING_MATCHKEYS every 2 s that re-keys a server whose key was handed out but whose
// client did not come within 5 s — TVM's timings).
#include "anvil/rpc/proxy/proxy.h"

#include <map>
#include <set>
#include <unordered_map>

#include "anvil/base/error.h"
#include "anvil/rpc/address.h"
#include "anvil/rpc/asio_listen.h"
#include "anvil/rpc/log.h"
#include "anvil/rpc/protocol.h"
#include "anvil/rpc/proxy/pairing.h"
#include "anvil/rpc/proxy/peer.h"
#include "anvil/rpc/proxy/tracker_reporter.h"
#include "anvil/rpc/tracker_codes.h"

namespace anvil::rpc::proxy {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;
constexpr auto kTrackerPeriod = std::chrono::seconds(2);
constexpr auto kAllocTimeout = std::chrono::seconds(5);
using enum TrackerCode;  // tracker_codes.def

}  // namespace

struct Proxy::Impl : PeerOwner {
  explicit Impl(ProxyOptions opts)
      : options(std::move(opts)), acceptor(io), signals(io), tick_timer(io), table(!options.tracker.empty()) {
    if (!options.tracker.empty()) tracker = std::make_unique<TrackerReporter>(io, options.tracker);
  }

  void bind() {
    auto address = resolve_host(io, options.host, "proxy");
    bound_port = listen_on_first_free_port(acceptor, address, options.host, options.port, options.port_end, "proxy");
    log_info("RPCProxy: client port bind to ", format_host_port(options.host, bound_port));
    if (tracker) {
      log_info("RPCProxy: tracker mode: registering servers with tracker ", tracker->address());
      tracker->on_connected = [this] { on_tracker_connected(); };
      tracker->on_lost = [](const std::string& why) {
        log_warning("RPCProxy: lost tracker connection: ", why, "; retrying in 2 s");
      };
      tracker->connect();
    }
    accept_next();
    schedule_tick();
    if (options.handle_signals) {
      signals.add(SIGINT);
      signals.add(SIGTERM);
      signals.async_wait([this](const asio::error_code& ec, int signal) {
        if (ec) return;
        log_info("RPCProxy: signal ", signal, ": stopping");
        begin_stop();
      });
    }
  }

  void accept_next() {
    acceptor.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
      if (stopping || ec == asio::error::operation_aborted) return;
      if (!ec) on_accept(std::move(socket));
      accept_next();
    });
  }

  void on_accept(asio::ip::tcp::socket socket) {
    if (peers.size() >= options.max_connections) {
      log_warning("RPCProxy: refusing a connection: ", peers.size(), " connections open (limit)");
      asio::error_code ec;
      socket.close(ec);
      return;
    }
    PeerId id = next_id++;
    auto peer = std::make_shared<Peer>(std::move(socket), id, *this, options.max_key_bytes);
    peers.emplace(id, peer);
    peer->start(options.handshake_timeout);
  }

  void on_handshake(const std::shared_ptr<Peer>& peer) override {
    const HandshakeParser& hs = peer->parser();
    Role role = hs.role();
    const char* role_name = role == Role::kServer ? "server" : "client";
    PairingTable::Decision d = table.arrive(peer->id(), role, hs.match_key());
    switch (d.kind) {
      case PairingTable::Decision::kPair: {
        auto it = peers.find(d.partner);
        if (it == peers.end()) {  // cannot happen: closed peers leave the table first
          peer->close("internal: partner vanished");
          return;
        }
        std::shared_ptr<Peer> partner = it->second;
        if (tracker) alloc_time.erase(hs.match_key());  // the server's registered key
        log_info("RPCProxy: paired ", partner->name(), " with ", peer->name());
        Peer::pair(partner, peer);
        return;
      }
      case PairingTable::Decision::kWait: {
        std::chrono::milliseconds timeout{0};  // tracker mode: servers wait as long as they like
        if (!tracker) timeout = role == Role::kServer ? options.timeout_server : options.timeout_client;
        PeerId id = peer->id();
        peer->wait_for_partner(timeout, [this, id, timeout] {
          if (!table.remove(id)) return;
          auto it = peers.find(id);
          if (it == peers.end()) return;
          it->second->refuse(kRPCCodeMismatch, str_cat("no matching peer within ", timeout.count() / 1000.0,
                                                       " s; answered MISMATCH"));
        });
        log_info("RPCProxy: ", peer->name(), " waits under key '", d.waiting_key, "'");
        if (tracker && role == Role::kServer) put_key(d.waiting_key);
        return;
      }
      case PairingTable::Decision::kDuplicate:
        peer->refuse(kRPCCodeDuplicate,
                     str_cat("another ", role_name, " already waits under key '", hs.match_key(), "'; answered DUPLICATE"));
        return;
      case PairingTable::Decision::kMismatch:
        peer->refuse(kRPCCodeMismatch, str_cat("no server waits under key '", hs.match_key(), "'; answered MISMATCH"));
        return;
    }
  }

  void on_closed(Peer& peer) override {
    std::optional<std::string> key = table.server_key_of(peer.id());
    if (key) alloc_time.erase(*key);
    table.remove(peer.id());
    peers.erase(peer.id());
    if (key && tracker && tracker->connected() && !stopping) {
      // The tracker still offers the departed server's key and has no message to withdraw one,
      // but it drops every value of a connection that closes: reconnect and register the rest.
      log_info("RPCProxy: registered server ", *key, " left; re-registering the others with the tracker");
      tracker->close();
      tracker->connect();
    }
  }

  // ---- tracker mode ----

  void put_key(const std::string& key) {
    if (!tracker || !tracker->connected()) return;  // on_tracker_connected PUTs every key
    std::string device = PairingTable::device_key_of(key);
    Json custom = options.custom_addr.empty() ? Json(nullptr) : Json(options.custom_addr);
    tracker->call(Json::array({kPut, device, Json::array({bound_port, key}), custom}), [key](std::optional<Json> r) {
      if (r && *r != Json(kSuccess)) log_warning("RPCProxy: tracker answered PUT of ", key, " with ", r->dump());
    });
    if (device_keys.insert(device).second) {
      std::string list;
      for (const std::string& k : device_keys) list += (list.empty() ? "" : ",") + k;
      Json info = {{"key", "server:proxy[" + list + "]"}, {"addr", Json::array({custom, bound_port})}};
      tracker->call(Json::array({kUpdateInfo, info}), [](std::optional<Json> r) {
        if (r && *r != Json(kSuccess)) log_warning("RPCProxy: tracker answered UPDATE_INFO with ", r->dump());
      });
    }
  }

  void on_tracker_connected() {
    log_info("RPCProxy: connected to tracker ", tracker->address());
    device_keys.clear();  // a new connection has no info yet
    alloc_time.clear();
    // Keys PUT on a lost connection may have been handed out meanwhile: register under new ones.
    for (const std::string& key : table.server_keys()) put_key(table.rekey_server(key));
  }

  void poll_tracker() {
    tracker->call(Json::array({kGetPendingMatchkeys}), [this](std::optional<Json> reply) {
      if (!reply || !reply->is_array()) return;
      std::set<std::string> pending;
      for (const Json& k : *reply) {
        if (k.is_string()) pending.insert(k.get<std::string>());
      }
      auto now = Clock::now();
      for (const std::string& key : table.server_keys()) {
        if (pending.count(key) > 0) {
          alloc_time.erase(key);
          continue;
        }
        auto [it, fresh] = alloc_time.emplace(key, now);
        if (fresh || now - it->second <= kAllocTimeout) continue;
        alloc_time.erase(it);
        std::string renamed = table.rekey_server(key);
        log_info("RPCProxy: no client came for ", key, " within 5 s; registering it as ", renamed);
        put_key(renamed);
      }
    });
  }

  void schedule_tick() {
    tick_timer.expires_after(kTrackerPeriod);
    tick_timer.async_wait([this](const asio::error_code& ec) {
      if (ec || stopping) return;
      if (tracker) {
        if (tracker->connected()) {
          poll_tracker();
        } else {
          tracker->connect();
        }
      }
      schedule_tick();
    });
  }

  void begin_stop() {
    if (stopping) return;
    stopping = true;
    asio::error_code ec;
    acceptor.close(ec);
    signals.cancel(ec);
    tick_timer.cancel();
    if (tracker) tracker->close();
    std::vector<std::shared_ptr<Peer>> open;
    for (auto& [id, peer] : peers) open.push_back(peer);
    for (auto& peer : open) peer->close("");
    io.stop();
  }

  ProxyOptions options;
  asio::io_context io{1};
  asio::ip::tcp::acceptor acceptor;
  asio::signal_set signals;
  asio::steady_timer tick_timer;
  PairingTable table;
  std::unique_ptr<TrackerReporter> tracker;
  std::unordered_map<PeerId, std::shared_ptr<Peer>> peers;
  std::set<std::string> device_keys;
  std::map<std::string, Clock::time_point> alloc_time;
  PeerId next_id = 1;
  int bound_port = 0;
  bool stopping = false;
};

Proxy::Proxy(ProxyOptions options) : impl_(std::make_unique<Impl>(std::move(options))) { impl_->bind(); }
Proxy::~Proxy() = default;
int Proxy::port() const { return impl_->bound_port; }
void Proxy::run() {
  impl_->io.run();
  log_info("RPCProxy: stopped");
}
void Proxy::stop() {
  asio::post(impl_->io, [impl = impl_.get()] { impl->begin_stop(); });
}

}  // namespace anvil::rpc::proxy
