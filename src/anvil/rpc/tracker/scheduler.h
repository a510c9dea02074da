// One device key's queue (TVM's PriorityScheduler): free servers wait FIFO, requests are served
// highest priority first and first-come-first-served among equal priorities. The tracker owns
// one per key and acts on the matches it returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "anvil/rpc/tracker/py_json.h"

namespace anvil::rpc::tracker {

using ConnId = uint64_t;

// A free server, as PUT it: where clients should connect and the key they must present.
struct QueuedValue {
  ConnId conn = 0;  // the server's tracker connection
  Json addr;        // custom address or the connection's peer IP (a string)
  Json port;
  std::string matchkey;
};

struct QueuedRequest {
  ConnId conn = 0;  // the requesting client's connection
  double priority = 1;
  uint64_t seq = 0;  // arrival order, for FIFO among equal priorities
};

struct Match {
  QueuedValue value;
  QueuedRequest request;
};

class PriorityScheduler {
 public:
  void put(QueuedValue value) { values_.push_back(std::move(value)); }
  void request(ConnId conn, double priority) { requests_.insert(QueuedRequest{conn, priority, next_seq_++}); }

  // Pairs the oldest free server with the best request while both exist.
  std::vector<Match> schedule();

  // Drop everything a closed connection left here; return how many were dropped.
  std::size_t remove_values_of(ConnId conn);
  std::size_t remove_requests_of(ConnId conn);

  std::size_t free_count() const { return values_.size(); }
  std::size_t pending_count() const { return requests_.size(); }
  bool empty() const { return values_.empty() && requests_.empty(); }

 private:
  struct Order {
    bool operator()(const QueuedRequest& a, const QueuedRequest& b) const {
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.seq < b.seq;
    }
  };
  std::deque<QueuedValue> values_;
  std::set<QueuedRequest, Order> requests_;
  uint64_t next_seq_ = 0;
};

}  // namespace anvil::rpc::tracker
