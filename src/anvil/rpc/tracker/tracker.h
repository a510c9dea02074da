// The RPC tracker server: TVM's tracker protocol on an event-driven Asio loop (one thread),
// plus an optional HTTP status port (HTML page, /summary.json, Prometheus /metrics).
//
//   Tracker tracker(options);   // binds the first free port of [port, port_end); throws on none
//   tracker.run();               // serves until stop(), a STOP with the stop key, or a signal
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "anvil/rpc/tracker/connection.h"
#include "anvil/rpc/tracker/tracker_state.h"

namespace anvil::rpc::tracker {

struct TrackerOptions {
  std::string host = "0.0.0.0";
  int port = 9190;
  int port_end = 9199;               // exclusive; an empty range means "port only"
  std::optional<int> http_port;      // status page; 0 = any free port; absent = none
  std::string stop_key;              // STOP must carry it; empty = a random key
  std::size_t max_connections = 4096;
  ConnectionLimits connection;
  StateLimits state;
  bool handle_signals = false;       // stop cleanly on SIGINT/SIGTERM (the CLI sets it)
};

class Tracker {
 public:
  // Binds the ports; throws anvil::Error (I/O) when none is free or the host is invalid.
  explicit Tracker(TrackerOptions options);
  ~Tracker();
  Tracker(const Tracker&) = delete;
  Tracker& operator=(const Tracker&) = delete;

  int port() const;
  int http_port() const;  // 0 when there is no status port
  const std::string& stop_key() const;

  // Serves on the calling thread until stopped.
  void run();
  // Thread-safe: closes every connection and makes run() return.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anvil::rpc::tracker
