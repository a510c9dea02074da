// The tracker's optional HTTP status port: GET / (HTML page), /summary.json (SUMMARY's dict as
// JSON) and /metrics (Prometheus text). HTTP/1.0-style: one request per connection, requests
// capped at 8 KiB and 5 s, so the status port cannot be used to stall the tracker's loop.
#pragma once

#ifndef ASIO_STANDALONE
#define ASIO_STANDALONE  // Debian's libasio-dev: Asio without Boost
#endif
#include <asio.hpp>

#include <functional>
#include <memory>
#include <string>

namespace anvil::rpc::tracker {

struct StatusSource {
  std::function<std::string()> html;
  std::function<std::string()> summary_json;
  std::function<std::string()> metrics;
};

class HttpStatusServer {
 public:
  // Listens on endpoint (port 0 = any free port); throws asio::system_error on failure.
  HttpStatusServer(asio::io_context& io, const asio::ip::tcp::endpoint& endpoint, StatusSource source);
  int port() const { return port_; }
  void close();

 private:
  void accept_next();

  asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<StatusSource> source_;
  int port_ = 0;
};

// Parses the request head and returns the full HTTP response (exposed for unit tests).
std::string http_status_response(const std::string& request_head, const StatusSource& source);

}  // namespace anvil::rpc::tracker
