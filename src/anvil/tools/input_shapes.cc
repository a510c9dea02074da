// Parsing of --input-shapes.
#include <cctype>

#include "anvil/base/error.h"
#include "anvil/tools/anvil_commands.h"

namespace anvil::tools {
namespace {

std::vector<int64_t> parse_dims(const std::string& name, std::string dims) {
  if (!dims.empty() && dims.front() == '[') {
    if (dims.back() != ']') value_error("--input-shapes: '", name, ":", dims, "': missing ']'");
    dims = dims.substr(1, dims.size() - 2);
  }
  std::vector<int64_t> out;
  if (dims.empty()) return out;  // a 0-d input: "x:" or "x:[]"
  size_t i = 0;
  while (i <= dims.size()) {
    size_t j = dims.find_first_of("x,", i);
    if (j == std::string::npos) j = dims.size();
    std::string d = dims.substr(i, j - i);
    bool ok = !d.empty() && (d == "-1" || d.find_first_not_of("0123456789") == std::string::npos) && d.size() < 12;
    if (!ok) value_error("--input-shapes: '", name, "': bad dimension '", d, "' (expected a number >= 0, or -1 to keep the model's)");
    out.push_back(std::stoll(d));
    i = j + 1;
  }
  return out;
}

}  // namespace

std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::string& text) {
  // Entries end at ',' or ' ' outside brackets; a name may itself hold ':' ("input:0:1x3").
  std::vector<std::string> entries(1);
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth == 0 && (c == ',' || c == ' ')) {
      if (!entries.back().empty()) entries.emplace_back();
      continue;
    }
    entries.back() += c;
  }
  if (entries.back().empty()) entries.pop_back();
  std::map<std::string, std::vector<int64_t>> out;
  for (const std::string& entry : entries) {
    size_t colon = entry.rfind(':', entry.find('['));
    if (colon == std::string::npos || colon == 0)
      value_error("--input-shapes: '", entry, "' is not name:dims (e.g. x:1x3x224x224 or x:[1,3,224,224])");
    std::string name = entry.substr(0, colon);
    if (out.count(name)) value_error("--input-shapes: input '", name, "' is given twice");
    out[name] = parse_dims(name, entry.substr(colon + 1));
  }
  return out;
}

}  // namespace anvil::tools
