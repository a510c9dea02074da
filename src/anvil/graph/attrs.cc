// Attribute getters and printing.
#include "anvil/graph/attrs.h"

#include <sstream>

#include "anvil/base/error.h"
#include "anvil/base/python_repr.h"
#include "anvil/ir/printer.h"

namespace anvil::graph {
namespace {

const AttrValue& find(const Attrs& attrs, const std::string& name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) value_error("missing attribute '", name, "'");
  return it->second;
}

template <typename T>
const T& as(const Attrs& attrs, const std::string& name, const char* expected) {
  const AttrValue& v = find(attrs, name);
  const T* p = std::get_if<T>(&v.storage());
  if (p == nullptr) type_error("attribute '", name, "' is ", to_string(v), ", expected ", expected);
  return *p;
}

}  // namespace

std::string to_string(const AttrValue& v) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) os << x;
        else if constexpr (std::is_same_v<T, double>) os << python_float_repr(x);
        else if constexpr (std::is_same_v<T, std::string>) os << ir::quote_string(x);
        else if constexpr (std::is_same_v<T, ir::DataType>) os << x;
        else {
          os << "[";
          for (size_t i = 0; i < x.size(); ++i) {
            if (i) os << ", ";
            if constexpr (std::is_same_v<T, AttrValue::Floats>) os << python_float_repr(x[i]);
            else if constexpr (std::is_same_v<T, AttrValue::Strings>) os << ir::quote_string(x[i]);
            else os << x[i];
          }
          os << "]";
        }
      },
      v.storage());
  return os.str();
}

bool has_attr(const Attrs& attrs, const std::string& name) { return attrs.count(name) != 0; }

int64_t get_int(const Attrs& attrs, const std::string& name) { return as<int64_t>(attrs, name, "an int"); }
int64_t get_int(const Attrs& attrs, const std::string& name, int64_t fallback) {
  return has_attr(attrs, name) ? get_int(attrs, name) : fallback;
}

double get_float(const Attrs& attrs, const std::string& name) {
  const AttrValue& v = find(attrs, name);
  if (const auto* i = std::get_if<int64_t>(&v.storage())) return static_cast<double>(*i);
  return as<double>(attrs, name, "a float");
}
double get_float(const Attrs& attrs, const std::string& name, double fallback) {
  return has_attr(attrs, name) ? get_float(attrs, name) : fallback;
}

std::string get_string(const Attrs& attrs, const std::string& name) {
  return as<std::string>(attrs, name, "a string");
}
std::string get_string(const Attrs& attrs, const std::string& name, const std::string& fallback) {
  return has_attr(attrs, name) ? get_string(attrs, name) : fallback;
}

std::vector<int64_t> get_ints(const Attrs& attrs, const std::string& name) {
  return as<AttrValue::Ints>(attrs, name, "a list of ints");
}
std::vector<int64_t> get_ints(const Attrs& attrs, const std::string& name, const std::vector<int64_t>& fallback) {
  return has_attr(attrs, name) ? get_ints(attrs, name) : fallback;
}

std::vector<double> get_floats(const Attrs& attrs, const std::string& name) {
  return as<AttrValue::Floats>(attrs, name, "a list of floats");
}

std::vector<std::string> get_strings(const Attrs& attrs, const std::string& name) {
  return as<AttrValue::Strings>(attrs, name, "a list of strings");
}

ir::DataType get_dtype(const Attrs& attrs, const std::string& name) {
  return as<ir::DataType>(attrs, name, "a dtype");
}

}  // namespace anvil::graph
