// HTML status page and Prometheus metrics of the tracker (see status_render.h).
#include "anvil/rpc/tracker/status_render.h"

#include <cstdio>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/rpc/tracker/summary_text.h"

namespace anvil::rpc::tracker {
namespace {

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Prometheus label values escape backslash, double quote and newline.
std::string label_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

struct QueueRow {
  std::string key;
  int total = 0;
  std::string free;
  std::string pending;
};

std::vector<QueueRow> queue_rows(const Json& summary) {
  std::vector<QueueRow> rows;
  auto totals = server_totals(summary);
  auto it = summary.find("queue_info");
  if (it == summary.end() || !it->is_object()) return rows;
  for (const auto& [key, entry] : it->items()) {
    auto total = totals.find(key);
    rows.push_back({key, total == totals.end() ? 0 : total->second, py_str(entry.value("free", Json())),
                    py_str(entry.value("pending", Json()))});
  }
  return rows;
}

void add_metric(std::string& out, const char* name, const char* type, const char* help) {
  out += str_cat("# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

std::string render_status_html(const Json& summary, int tracker_port) {
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"refresh\" content=\"2\">\n<title>Anvil RPC tracker</title>\n"
      "<style>body{font-family:sans-serif}table{border-collapse:collapse;margin-bottom:1em}"
      "td,th{border:1px solid #999;padding:2px 8px;text-align:left}</style>\n"
      "</head><body>\n";
  out += str_cat("<h1>Anvil RPC tracker on port ", tracker_port, "</h1>\n");
  out += "<h2>Servers</h2>\n<table id=\"servers\"><tr><th>server-address</th><th>key</th></tr>\n";
  for (const auto& row : server_rows(summary)) {
    out += "<tr><td>" + html_escape(row.address) + "</td><td>" + html_escape(row.key) + "</td></tr>\n";
  }
  out += "</table>\n<h2>Queues</h2>\n<table id=\"queues\"><tr><th>key</th><th>total</th><th>free</th>"
         "<th>pending</th></tr>\n";
  for (const auto& row : queue_rows(summary)) {
    out += str_cat("<tr><td>", html_escape(row.key), "</td><td>", row.total, "</td><td>", html_escape(row.free),
                   "</td><td>", html_escape(row.pending), "</td></tr>\n");
  }
  out += "</table>\n<p>Also: <a href=\"/summary.json\">/summary.json</a>, <a href=\"/metrics\">/metrics</a>"
         " (refreshes every 2 s)</p>\n</body></html>\n";
  return out;
}

std::string render_metrics(const Json& summary, const MetricsSnapshot& m) {
  std::string out;
  auto counter = [&out](const char* name, const char* help, uint64_t value) {
    add_metric(out, name, "counter", help);
    out += str_cat(name, " ", value, "\n");
  };
  add_metric(out, "anvil_tracker_uptime_seconds", "gauge", "Seconds since the tracker started.");
  char uptime[64];
  std::snprintf(uptime, sizeof(uptime), "%.3f", m.uptime_seconds);
  out += str_cat("anvil_tracker_uptime_seconds ", uptime, "\n");
  add_metric(out, "anvil_tracker_connections_open", "gauge", "Tracker connections open now.");
  out += str_cat("anvil_tracker_connections_open ", m.connections_open, "\n");
  counter("anvil_tracker_connections_accepted_total", "Tracker connections accepted.", m.connections_accepted);
  counter("anvil_tracker_messages_total", "Control messages received.", m.state.messages);
  counter("anvil_tracker_puts_total", "PUT messages (servers offered).", m.state.puts);
  counter("anvil_tracker_requests_total", "REQUEST messages (servers asked for).", m.state.requests);
  counter("anvil_tracker_matches_total", "Servers handed to clients.", m.state.matches);
  counter("anvil_tracker_rejected_messages_total", "Messages that closed their connection.",
          m.state.rejected_messages);
  counter("anvil_tracker_values_dropped_total", "Queued servers dropped when their connection closed.",
          m.state.values_dropped_on_close);
  counter("anvil_tracker_requests_dropped_total", "Waiting requests dropped when their client left.",
          m.state.requests_dropped_on_close);
  add_metric(out, "anvil_tracker_connections_closed_total", "counter", "Connections closed, by reason.");
  for (const auto& [reason, count] : m.closes_by_reason) {
    out += str_cat("anvil_tracker_connections_closed_total{reason=\"", label_escape(reason), "\"} ", count, "\n");
  }
  auto rows = queue_rows(summary);
  const char* gauges[][2] = {{"anvil_tracker_queue_free", "Free servers queued, per device key."},
                             {"anvil_tracker_queue_pending", "Requests waiting, per device key."},
                             {"anvil_tracker_queue_servers", "Registered servers, per device key."}};
  for (int g = 0; g < 3; ++g) {
    add_metric(out, gauges[g][0], "gauge", gauges[g][1]);
    for (const auto& row : rows) {
      std::string value = g == 0 ? row.free : g == 1 ? row.pending : std::to_string(row.total);
      out += str_cat(gauges[g][0], "{key=\"", label_escape(row.key), "\"} ", value, "\n");
    }
  }
  return out;
}

}  // namespace anvil::rpc::tracker
