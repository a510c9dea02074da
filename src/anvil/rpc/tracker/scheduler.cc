// PriorityScheduler (see scheduler.h).
#include "anvil/rpc/tracker/scheduler.h"

#include <algorithm>

namespace anvil::rpc::tracker {

std::vector<Match> PriorityScheduler::schedule() {
  std::vector<Match> matches;
  while (!values_.empty() && !requests_.empty()) {
    Match match{std::move(values_.front()), *requests_.begin()};
    values_.pop_front();
    requests_.erase(requests_.begin());
    matches.push_back(std::move(match));
  }
  return matches;
}

std::size_t PriorityScheduler::remove_values_of(ConnId conn) {
  auto before = values_.size();
  values_.erase(std::remove_if(values_.begin(), values_.end(),
                               [conn](const QueuedValue& v) { return v.conn == conn; }),
                values_.end());
  return before - values_.size();
}

std::size_t PriorityScheduler::remove_requests_of(ConnId conn) {
  return std::erase_if(requests_, [conn](const QueuedRequest& r) { return r.conn == conn; });
}

}  // namespace anvil::rpc::tracker
