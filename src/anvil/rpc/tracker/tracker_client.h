// A small blocking tracker client (what `anvil-rpc query` and the tests use): connect, magic
// exchange, then one JSON request and its reply at a time. Every wait is bounded by a timeout
// and every reply by a size limit; failures throw anvil::Error (I/O).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "anvil/rpc/tracker/py_json.h"

namespace anvil::rpc::tracker {

class TrackerClient {
 public:
  TrackerClient(const std::string& host, int port, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~TrackerClient();
  TrackerClient(const TrackerClient&) = delete;
  TrackerClient& operator=(const TrackerClient&) = delete;

  // Sends one request (as Python's json.dumps would) and returns the parsed reply.
  Json call(const Json& request);
  // SUMMARY's dict; throws if the tracker does not answer [0, {...}].
  Json summary();

  void send_raw(const std::string& bytes);
  // Reads one framed reply's text (up to max_reply_bytes).
  std::string recv_frame();

 private:
  void recv_exact(char* data, std::size_t n);

  int fd_ = -1;
  std::string where_;
  std::chrono::milliseconds timeout_;
  std::size_t max_reply_bytes_ = 64u << 20;  // SUMMARY of a big farm is far below this
};

}  // namespace anvil::rpc::tracker
