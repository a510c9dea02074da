// libFuzzer target over the tracker's handling of outside input: message parsing, the
// protocol state machine driven by several connections, and everything rendered from the
// resulting state (SUMMARY reply, text_summary, status page, metrics).
//
// Input: lines; the first byte of a line picks a connection (4 of them), the rest is one
// frame's payload. A line whose payload is "x" closes and reopens that connection.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "anvil/rpc/tracker/messages.h"
#include "anvil/rpc/tracker/status_render.h"
#include "anvil/rpc/tracker/summary_text.h"
#include "anvil/rpc/tracker/tracker_state.h"

using namespace anvil::rpc::tracker;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  // The whole input as one message: parse, and check that replies we would build from it
  // are valid ASCII JSON that reads back to the same value.
  try {
    Message msg = parse_message(input);
    if (auto* info = std::get_if<UpdateInfoRequest>(&msg.body)) {
      std::string text = py_dumps(info->info);
      for (char c : text) {
        if (static_cast<unsigned char>(c) > 0x7E) std::abort();
      }
      if (Json::parse(text) != info->info) std::abort();
    }
  } catch (const MessageError&) {
  }

  StateLimits limits;
  limits.max_values_per_conn = 8;
  limits.max_requests_per_conn = 8;
  limits.max_info_bytes = 512;
  limits.max_keys = 6;
  TrackerState state("tracker:fuzz", limits);
  for (ConnId c = 0; c < 4; ++c) state.open(c, "127.0.0.1");
  std::size_t start = 0;
  while (start < input.size()) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view line = input.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    ConnId conn = static_cast<unsigned char>(line[0]) % 4;
    std::string_view payload = line.substr(1);
    if (payload == "x") {
      state.close(conn);
      state.open(conn, "10.0.0.1");
      continue;
    }
    HandleResult result = state.handle(conn, payload);
    for (const auto& out : result.out) {
      if (Json::parse(out.text, nullptr, false).is_discarded()) std::abort();
    }
    if (result.close_sender) {
      state.close(conn);
      state.open(conn, "127.0.0.1");
    }
  }
  Json summary = state.summary();
  if (Json::parse(py_dumps(summary)) != summary) std::abort();
  (void)text_summary(summary);
  (void)render_status_html(summary, 9190);
  (void)render_metrics(summary, MetricsSnapshot{});
  return 0;
}
