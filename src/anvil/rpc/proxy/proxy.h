// The RPC proxy (TVM's `python -m tvm.exec.rpc_proxy`, without the websocket/browser half):
// servers and clients both dial it, it pairs them by key and relays bytes both ways. One
// thread, one Asio event loop; see docs/rpc.md "Proxy" and spec §5.
//
//   Proxy proxy(options);  // binds the first free port of [port, port_end); throws on none
//   proxy.run();           // serves until stop() or SIGINT/SIGTERM (with handle_signals)
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace anvil::rpc::proxy {

struct ProxyOptions {
  std::string host = "127.0.0.1";  // TVM's rpc_proxy default
  int port = 9090;
  int port_end = 9199;             // exclusive; port_end <= port means "port only"
  std::string tracker;             // "host:port": register waiting servers there (tracker mode)
  std::string custom_addr;         // address the tracker hands out for this proxy (default: its peer IP)
  std::chrono::milliseconds timeout_client{600'000};  // a client waiting for its server (plain mode)
  std::chrono::milliseconds timeout_server{600'000};  // a server waiting for a client (plain mode)
  std::chrono::milliseconds handshake_timeout{10'000};
  uint32_t max_key_bytes = 4096;
  size_t max_connections = 4096;
  bool handle_signals = false;
};

class Proxy {
 public:
  explicit Proxy(ProxyOptions options);
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  int port() const;
  void run();
  // Thread-safe: makes run() return after closing every connection.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anvil::rpc::proxy
