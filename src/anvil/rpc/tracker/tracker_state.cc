// Tracker protocol logic (see tracker_state.h).
#include "anvil/rpc/tracker/tracker_state.h"

#include <algorithm>

#include "anvil/base/error.h"

namespace anvil::rpc::tracker {

TrackerState::TrackerState(std::string stop_key, StateLimits limits)
    : stop_key_(std::move(stop_key)), limits_(limits) {}

void TrackerState::open(ConnId conn, std::string peer_ip) { conns_[conn].peer_ip = std::move(peer_ip); }

HandleResult TrackerState::handle(ConnId conn, std::string_view payload) {
  auto it = conns_.find(conn);
  HandleResult result;
  if (it == conns_.end()) {
    result.close_sender = true;
    result.close_reason = "message on a connection the tracker does not know";
    return result;
  }
  ++counters_.messages;
  try {
    Message msg = parse_message(payload);
    result = dispatch(conn, it->second, msg);
  } catch (const MessageError& err) {
    result.close_sender = true;
    result.close_reason = err.what();
  }
  if (result.close_sender) ++counters_.rejected_messages;
  return result;
}

PriorityScheduler* TrackerState::scheduler_for(const std::string& key) {
  auto it = schedulers_.find(key);
  if (it != schedulers_.end()) return &it->second;
  if (schedulers_.size() >= limits_.max_keys) {
    // Forget idle queues before refusing: they only remember a key someone once used.
    std::erase_if(key_order_, [this](const std::string& k) {
      auto s = schedulers_.find(k);
      if (!s->second.empty()) return false;
      schedulers_.erase(s);
      return true;
    });
    if (schedulers_.size() >= limits_.max_keys) return nullptr;
  }
  key_order_.push_back(key);
  return &schedulers_[key];
}

void TrackerState::run_schedule(PriorityScheduler& scheduler, HandleResult& result) {
  for (Match& match : scheduler.schedule()) {
    ++counters_.matches;
    auto server = conns_.find(match.value.conn);
    if (server != conns_.end()) {
      --server->second.queued_values;
      std::erase(server->second.pending_matchkeys, match.value.matchkey);
    }
    auto client = conns_.find(match.request.conn);
    if (client != conns_.end()) --client->second.queued_requests;
    result.out.push_back({match.request.conn, reply_match(match.value.addr, match.value.port, match.value.matchkey)});
  }
}

HandleResult TrackerState::dispatch(ConnId conn, ConnState& state, const Message& msg) {
  HandleResult result;
  auto reject = [&result](std::string reason) {
    result.close_sender = true;
    result.close_reason = std::move(reason);
    return result;
  };
  switch (msg.code) {
    case TrackerCode::kPing:
      result.out.push_back({conn, reply_code(TrackerCode::kSuccess)});
      break;
    case TrackerCode::kStop: {
      bool ok = !stop_key_.empty() && std::get<StopRequest>(msg.body).stop_key == stop_key_;
      result.out.push_back({conn, reply_code(ok ? TrackerCode::kSuccess : TrackerCode::kFail)});
      result.stop = ok;
      break;
    }
    case TrackerCode::kPut: {
      const auto& put = std::get<PutRequest>(msg.body);
      if (state.queued_values >= limits_.max_values_per_conn) {
        return reject(str_cat("PUT: connection already has ", state.queued_values, " queued servers (limit)"));
      }
      PriorityScheduler* scheduler = scheduler_for(put.key);
      if (!scheduler) return reject(str_cat("PUT: tracker already holds ", limits_.max_keys, " device keys"));
      ++counters_.puts;
      if (std::find(state.pending_matchkeys.begin(), state.pending_matchkeys.end(), put.matchkey) ==
          state.pending_matchkeys.end()) {
        state.pending_matchkeys.push_back(put.matchkey);
      }
      ++state.queued_values;
      Json addr = put.custom_addr ? Json(*put.custom_addr) : Json(state.peer_ip);
      scheduler->put(QueuedValue{conn, std::move(addr), put.port, put.matchkey});
      result.out.push_back({conn, reply_code(TrackerCode::kSuccess)});
      run_schedule(*scheduler, result);
      break;
    }
    case TrackerCode::kRequest: {
      const auto& req = std::get<RequestRequest>(msg.body);
      if (state.queued_requests >= limits_.max_requests_per_conn) {
        return reject(str_cat("REQUEST: connection already waits on ", state.queued_requests, " requests (limit)"));
      }
      PriorityScheduler* scheduler = scheduler_for(req.key);
      if (!scheduler) return reject(str_cat("REQUEST: tracker already holds ", limits_.max_keys, " device keys"));
      ++counters_.requests;
      ++state.queued_requests;
      scheduler->request(conn, req.priority);
      run_schedule(*scheduler, result);
      break;
    }
    case TrackerCode::kUpdateInfo: {
      Json info = std::get<UpdateInfoRequest>(msg.body).info;
      if (info["addr"][0].is_null()) info["addr"][0] = state.peer_ip;
      Json merged = state.info;
      merged.update(info);
      auto size = py_dumps(merged).size();
      if (size > limits_.max_info_bytes) {
        return reject(str_cat("UPDATE_INFO: info of ", size, " bytes exceeds ", limits_.max_info_bytes));
      }
      state.info = std::move(merged);
      result.out.push_back({conn, reply_code(TrackerCode::kSuccess)});
      break;
    }
    case TrackerCode::kSummary:
      result.out.push_back({conn, reply_summary(summary())});
      break;
    case TrackerCode::kGetPendingMatchkeys:
      result.out.push_back({conn, reply_matchkeys(state.pending_matchkeys)});
      break;
    default:
      return reject(str_cat("unexpected tracker code ", static_cast<int>(msg.code)));
  }
  return result;
}

void TrackerState::close(ConnId conn) {
  if (conns_.erase(conn) == 0) return;
  // Unlike TVM (which keeps a server's entries unless it sent UPDATE_INFO, and keeps dead
  // requests until scheduling reaches them), everything of a closed connection goes now, so
  // no client is ever handed a server that is gone and `pending` counts live requests only.
  for (auto& [key, scheduler] : schedulers_) {
    counters_.values_dropped_on_close += scheduler.remove_values_of(conn);
    counters_.requests_dropped_on_close += scheduler.remove_requests_of(conn);
  }
}

Json TrackerState::summary() const {
  Json queue_info = Json::object();
  for (const auto& key : key_order_) {
    const auto& scheduler = schedulers_.at(key);
    queue_info[key] = Json{{"free", scheduler.free_count()}, {"pending", scheduler.pending_count()}};
  }
  Json server_info = Json::array();
  for (const auto& [id, state] : conns_) {
    auto key = state.info.find("key");
    if (key != state.info.end() && key->is_string() && key->get_ref<const std::string&>().starts_with("server")) {
      server_info.push_back(state.info);
    }
  }
  Json out = Json::object();
  out["queue_info"] = std::move(queue_info);
  out["server_info"] = std::move(server_info);
  return out;
}

}  // namespace anvil::rpc::tracker
