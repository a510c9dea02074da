// Target parsing, validation and printing; the tables come from target_kinds.def.
#include "anvil/target/target.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>

#include "anvil/base/error.h"

namespace anvil {
namespace {

enum class KindRole { kHost, kDevice };
struct KindInfo {
  TargetKind kind;
  std::string_view name;
  KindRole role;
};
constexpr KindInfo kKinds[] = {
#define ANVIL_TARGET_KIND(e, name, role) {TargetKind::e, name, KindRole::k##role},
#include "anvil/target/target_kinds.def"
};

struct OptionInfo {
  TargetKind kind;
  std::string_view key;
  TargetOptionType type;
  std::string_view help;
};
constexpr OptionInfo kOptions[] = {
#define ANVIL_TARGET_OPTION(kind, key, type, help) {TargetKind::kind, key, TargetOptionType::k##type, help},
#include "anvil/target/target_kinds.def"
};
constexpr int32_t kNumOptions = static_cast<int32_t>(std::size(kOptions));

std::string_view name_of(TargetKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

std::string host_kind_names() {
  std::string out;
  for (const auto& k : kKinds)
    if (k.role == KindRole::kHost) out += (out.empty() ? "'" : ", '") + std::string(k.name) + "'";
  return out;
}

int32_t option_index(TargetKind kind, std::string_view key) {
  for (int32_t i = 0; i < kNumOptions; ++i)
    if (kOptions[i].kind == kind && kOptions[i].key == key) return i;
  return -1;
}

std::string known_options(TargetKind kind) {
  std::string out;
  for (const auto& o : kOptions) {
    if (o.kind != kind) continue;
    out += out.empty() ? "-" : ", -";
    out += o.key;
  }
  return out.empty() ? "none" : out;
}

std::string type_name(TargetOptionType type) {
  switch (type) {
    case TargetOptionType::kString: return "a string";
    case TargetOptionType::kInt: return "an integer";
    case TargetOptionType::kBool: return "true/false (or the bare flag)";
    case TargetOptionType::kStringList: return "a comma-separated list";
  }
  return "?";
}

// Checks the value's type and the per-option rules; `where` prefixes messages.
void validate(const std::string& where, const OptionInfo& info, const TargetOptionValue& value) {
  bool type_ok = false;
  switch (info.type) {
    case TargetOptionType::kString: type_ok = std::holds_alternative<std::string>(value); break;
    case TargetOptionType::kInt: type_ok = std::holds_alternative<int64_t>(value); break;
    case TargetOptionType::kBool: type_ok = std::holds_alternative<bool>(value); break;
    case TargetOptionType::kStringList: type_ok = std::holds_alternative<std::vector<std::string>>(value); break;
  }
  if (!type_ok) value_error(where, "option '-", info.key, "' expects ", type_name(info.type));
  if (const auto* s = std::get_if<std::string>(&value)) {
    if (s->empty()) value_error(where, "option '-", info.key, "' has an empty value");
    if (s->find_first_of(" \t\n,=") != std::string::npos)
      value_error(where, "option '-", info.key, "' value '", *s, "' contains a space, ',' or '='");
  }
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
    if (list->empty()) value_error(where, "option '-", info.key, "' has an empty list");
    for (const auto& item : *list) {
      if (item.empty() || item.find_first_of(" \t\n,=") != std::string::npos)
        value_error(where, "option '-", info.key, "' has a malformed item '", item, "'");
      if (info.key == "mattr" && item[0] != '+' && item[0] != '-')
        value_error(where, "option '-mattr' item '", item, "' must start with '+' or '-' (e.g. +avx2)");
    }
  }
  if (const auto* n = std::get_if<int64_t>(&value)) {
    if (info.key == "opt-level" && (*n < 0 || *n > 3))
      value_error(where, "option '-opt-level' must be 0, 1, 2 or 3, got ", *n);
    if (info.key != "opt-level" && info.key != "from_device" && *n <= 0)
      value_error(where, "option '-", info.key, "' must be positive, got ", *n);
    if (info.key == "from_device" && *n < 0) value_error(where, "option '-from_device' must be >= 0, got ", *n);
  }
}

TargetOptionValue parse_value(const std::string& where, const OptionInfo& info, std::optional<std::string_view> text) {
  if (!text) {
    if (info.type == TargetOptionType::kBool) return true;
    value_error(where, "option '-", info.key, "' needs a value ('-", info.key, "=...', ", type_name(info.type), ")");
  }
  switch (info.type) {
    case TargetOptionType::kString: return std::string(*text);
    case TargetOptionType::kInt: {
      int64_t n = 0;
      auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
      if (text->empty() || ec != std::errc() || end != text->data() + text->size())
        value_error(where, "option '-", info.key, "' expects an integer, got '", *text, "'");
      return n;
    }
    case TargetOptionType::kBool:
      if (*text == "true" || *text == "1") return true;
      if (*text == "false" || *text == "0") return false;
      value_error(where, "option '-", info.key, "' expects true/false/1/0, got '", *text, "'");
    case TargetOptionType::kStringList: {
      std::vector<std::string> items;
      size_t start = 0;
      while (true) {
        size_t comma = text->find(',', start);
        items.emplace_back(text->substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      return items;
    }
  }
  return std::string(*text);
}

std::string print_value(const TargetOptionValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* n = std::get_if<int64_t>(&value)) return std::to_string(*n);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  std::string out;
  for (const auto& item : std::get<std::vector<std::string>>(value)) out += (out.empty() ? "" : ",") + item;
  return out;
}

}  // namespace

Target::Target(TargetKind kind) : kind_(kind) { finish(); }

Target Target::parse(std::string_view text) {
  std::string where = str_cat("target '", text, "': ");
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) tokens.push_back(text.substr(start, i - start));
  }
  if (tokens.empty()) {
    std::string kinds;
    for (auto k : kind_names()) kinds += (kinds.empty() ? "" : ", ") + std::string(k);
    value_error("target: empty target string (expected one of: ", kinds, ")");
  }
  const KindInfo* kind = nullptr;
  for (const auto& k : kKinds)
    if (k.name == tokens[0]) kind = &k;
  if (kind == nullptr) {
    std::string kinds;
    for (auto k : kind_names()) kinds += (kinds.empty() ? "" : ", ") + std::string(k);
    value_error(where, "unknown target kind '", tokens[0], "' (expected one of: ", kinds, ")");
  }
  Target target(kind->kind);
  // "-host=<kind>": the host target, which takes the rest of the string.
  size_t end = tokens.size();
  std::string host_text;
  for (size_t t = 1; t < tokens.size() && end == tokens.size(); ++t) {
    if (tokens[t] != "-host" && !tokens[t].starts_with("-host=")) continue;
    end = t;
    host_text = std::string(tokens[t].substr(std::min<size_t>(tokens[t].size(), 6)));
    if (host_text.empty())
      value_error(where, "option '-host' needs a target ('-host=llvm ...', the host's options following it)");
    for (size_t h = t + 1; h < tokens.size(); ++h) host_text += " " + std::string(tokens[h]);
  }
  for (size_t t = 1; t < end; ++t) {
    std::string_view token = tokens[t];
    if (token.size() < 2 || token[0] != '-' || token[1] == '-' || token[1] == '=')
      value_error(where, "expected an option of the form -key=value or -flag, got '", token, "'");
    size_t eq = token.find('=');
    std::string_view key = token.substr(1, eq == std::string_view::npos ? std::string_view::npos : eq - 1);
    std::optional<std::string_view> value;
    if (eq != std::string_view::npos) value = token.substr(eq + 1);
    int32_t index = option_index(kind->kind, key);
    if (index < 0)
      value_error(where, "unknown option '-", key, "' for target kind '", kind->name,
                  "' (known: ", known_options(kind->kind), ")");
    if (target.find(key) != nullptr) value_error(where, "option '-", key, "' is given twice");
    TargetOptionValue parsed = parse_value(where, kOptions[index], value);
    validate(where, kOptions[index], parsed);
    target.entries_.push_back({index, std::move(parsed)});
  }
  target.finish();
  if (end == tokens.size()) return target;
  Target host = [&] {
    try {
      return Target::parse(host_text);
    } catch (const Error& e) {
      value_error(where, "its host: ", e.what());
    }
  }();
  return target.with_host(host);
}

void Target::finish() {
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.option < b.option; });
  str_ = std::string(name_of(kind_));
  for (const auto& e : entries_) {
    str_ += " -";
    str_ += kOptions[e.option].key;
    if (const auto* b = std::get_if<bool>(&e.value); b && *b) continue;  // a set flag prints bare
    str_ += "=" + print_value(e.value);
  }
  if (host_ != nullptr) str_ += " -host=" + host_->str();
  hash_ = std::hash<std::string>()(str_);
}

std::string_view Target::kind_name() const { return name_of(kind_); }

const Target::Entry* Target::find(std::string_view key) const {
  for (const auto& e : entries_)
    if (kOptions[e.option].key == key) return &e;
  return nullptr;
}

bool Target::has(std::string_view key) const { return find(key) != nullptr; }

namespace {
template <typename T>
std::optional<T> get_typed(const Target& t, std::string_view key, const TargetOptionValue* value) {
  ANVIL_ICHECK(option_index(t.kind(), key) >= 0, "target kind '", t.kind_name(), "' has no option '-", key, "'");
  if (value == nullptr) return std::nullopt;
  const T* typed = std::get_if<T>(value);
  ANVIL_ICHECK(typed != nullptr, "target option '-", key, "' read with the wrong type");
  return *typed;
}
}  // namespace

std::optional<std::string> Target::get_string(std::string_view key) const {
  const Entry* e = find(key);
  return get_typed<std::string>(*this, key, e ? &e->value : nullptr);
}
std::optional<int64_t> Target::get_int(std::string_view key) const {
  const Entry* e = find(key);
  return get_typed<int64_t>(*this, key, e ? &e->value : nullptr);
}
std::optional<bool> Target::get_bool(std::string_view key) const {
  const Entry* e = find(key);
  return get_typed<bool>(*this, key, e ? &e->value : nullptr);
}
std::optional<std::vector<std::string>> Target::get_list(std::string_view key) const {
  const Entry* e = find(key);
  return get_typed<std::vector<std::string>>(*this, key, e ? &e->value : nullptr);
}

std::optional<TargetOptionValue> Target::get(std::string_view key) const {
  ANVIL_ICHECK(option_index(kind_, key) >= 0, "target kind '", kind_name(), "' has no option '-", key, "'");
  const Entry* e = find(key);
  if (e == nullptr) return std::nullopt;
  return e->value;
}

Target Target::with(std::string_view key, TargetOptionValue value) const {
  std::string where = str_cat("target '", str_, "': ");
  int32_t index = option_index(kind_, key);
  if (index < 0)
    value_error(where, "unknown option '-", key, "' for target kind '", kind_name(), "' (known: ", known_options(kind_), ")");
  validate(where, kOptions[index], value);
  Target out = without(key);
  out.entries_.push_back({index, std::move(value)});
  out.finish();
  return out;
}

Target Target::without(std::string_view key) const {
  Target out = *this;
  std::erase_if(out.entries_, [&](const Entry& e) { return kOptions[e.option].key == key; });
  out.finish();
  return out;
}

bool Target::is_host_kind(TargetKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.role == KindRole::kHost;
  return false;
}

Target Target::host() const {
  if (is_host_kind()) return *this;
  if (host_ != nullptr) return *host_;
  return Target(TargetKind::kLLVM);
}

Target Target::with_host(const Target& host) const {
  std::string where = str_cat("target '", str_, "' with host '", host.str(), "': ");
  if (!host.is_host_kind())
    value_error(where, "a host target must be of a host kind (", host_kind_names(), "), not '", host.kind_name(), "'");
  if (host.has_host()) value_error(where, "a host target cannot have a host itself");
  if (is_host_kind()) {
    if (host == *this) return *this;
    value_error(where, "a target of kind '", kind_name(), "' is its own host; only device targets take a host");
  }
  Target out = *this;
  out.host_ = std::make_shared<const Target>(host);
  out.finish();
  return out;
}

Target Target::without_host() const {
  Target out = *this;
  out.host_ = nullptr;
  out.finish();
  return out;
}

std::vector<std::string_view> Target::option_keys(TargetKind kind) {
  std::vector<std::string_view> keys;
  for (const auto& o : kOptions)
    if (o.kind == kind) keys.push_back(o.key);
  return keys;
}

std::vector<std::string_view> Target::kind_names() {
  std::vector<std::string_view> names;
  for (const auto& k : kKinds) names.push_back(k.name);
  return names;
}

}  // namespace anvil
