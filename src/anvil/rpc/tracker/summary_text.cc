// text_summary() formatting (see summary_text.h).
#include "anvil/rpc/tracker/summary_text.h"

#include <algorithm>

#include "anvil/base/error.h"

namespace anvil::rpc::tracker {
namespace {

// Python's f"{text:<{width}}": pads with spaces to `width` code points, never truncates.
std::string pad_right(const std::string& text, std::size_t width) {
  std::size_t len = utf8_length(text);
  return len >= width ? text : text + std::string(width - len, ' ');
}

// ':'.join(map(str, addr)): a list joins its items; a string (iterated by Python) its
// characters; anything else is a Python error, shown here as the value itself.
std::string join_addr(const Json& addr) {
  std::string out;
  if (addr.is_array()) {
    for (std::size_t i = 0; i < addr.size(); ++i) {
      if (i) out += ':';
      out += py_str(addr[i]);
    }
  } else if (addr.is_string()) {
    const auto& text = addr.get_ref<const std::string&>();
    for (std::size_t i = 0; i < text.size(); ++i) {
      bool lead = (static_cast<unsigned char>(text[i]) & 0xC0u) != 0x80u;
      if (lead && i) out += ':';
      out += text[i];
    }
  } else {
    out = py_str(addr);
  }
  return out;
}

const Json& field(const Json& object, const char* name) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(name);
  return it == object.end() ? kNull : *it;
}

}  // namespace

std::vector<ServerRow> server_rows(const Json& summary) {
  std::vector<ServerRow> rows;
  const Json& infos = field(summary, "server_info");
  if (!infos.is_array()) return rows;
  for (const auto& info : infos) {
    const Json& key = field(info, "key");
    rows.push_back({join_addr(field(info, "addr")), key.is_string() ? key.get<std::string>() : py_str(key)});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ServerRow& a, const ServerRow& b) { return a.key < b.key; });
  return rows;
}

std::map<std::string, int> server_totals(const Json& summary) {
  std::map<std::string, int> totals;
  for (const auto& row : server_rows(summary)) {
    auto first = row.key.find(':');
    if (first == std::string::npos) continue;  // TVM would raise IndexError here
    auto second = row.key.find(':', first + 1);
    ++totals[row.key.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1)];
  }
  return totals;
}

std::string text_summary(const Json& summary) {
  const std::string dashes30(30, '-');
  std::string res = "Server List\n" + dashes30 + "\nserver-address           key\n" + dashes30 + "\n";
  for (const auto& row : server_rows(summary)) res += pad_right(row.address, 21) + "    " + row.key + "\n";
  res += dashes30 + "\n\n";

  auto totals = server_totals(summary);
  const Json& queue_info = field(summary, "queue_info");
  std::vector<std::string> keys;
  if (queue_info.is_object()) {
    for (const auto& [key, value] : queue_info.items()) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  std::size_t max_key_len = 0;
  for (const auto& key : keys) max_key_len = std::max(max_key_len, utf8_length(key));

  std::string title = pad_right("key", max_key_len) + "   total  free  pending\n";
  std::string separator = std::string(utf8_length(title), '-') + "\n";
  res += "Queue Status\n" + separator + title + separator;
  for (const auto& key : keys) {
    auto it = totals.find(key);
    int total = it == totals.end() ? 0 : it->second;
    const Json& entry = queue_info[key];
    std::string free_text = py_str(field(entry, "free"));
    std::string pending_text = py_str(field(entry, "pending"));
    bool has_pending = field(entry, "pending").is_number() ? field(entry, "pending").get<double>() != 0 : true;
    if (total || has_pending) {
      res += pad_right(key, max_key_len) + "   " + pad_right(std::to_string(total), 5) + "  " +
             pad_right(free_text, 4) + "  " + pad_right(pending_text, 7) + "\n";
    }
  }
  res += separator;
  return res;
}

std::string query_output(const std::string& host, int port, const Json& summary) {
  return str_cat("Tracker address ", host, ":", port, "\n\n", text_summary(summary), "\n");
}

}  // namespace anvil::rpc::tracker
