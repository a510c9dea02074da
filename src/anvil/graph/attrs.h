// Operator attributes: a sorted map from names to ints, floats, strings, lists of those and
// dtypes — what an operator call carries besides its tensor arguments (strides, axes, epsilon).
//
//   Attrs a{{"strides", AttrValue::ints({2, 2})}, {"epsilon", AttrValue(1e-5)}};
//   std::vector<int64_t> s = get_ints(a, "strides", {1, 1});   // default when absent
//   double eps = get_float(a, "epsilon");                       // ValueError when absent
//
// Getters that find a value of another kind throw TypeError naming the attribute.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "anvil/ir/dtype.h"

namespace anvil::graph {

class AttrValue {
 public:
  using Ints = std::vector<int64_t>;
  using Floats = std::vector<double>;
  using Strings = std::vector<std::string>;
  using Storage = std::variant<int64_t, double, std::string, Ints, Floats, Strings, ir::DataType>;

  AttrValue() = default;
  AttrValue(int64_t v) : v_(v) {}                          // NOLINT(google-explicit-constructor)
  AttrValue(int v) : v_(static_cast<int64_t>(v)) {}        // NOLINT(google-explicit-constructor)
  AttrValue(bool v) : v_(static_cast<int64_t>(v)) {}       // NOLINT(google-explicit-constructor)
  AttrValue(double v) : v_(v) {}                           // NOLINT(google-explicit-constructor)
  AttrValue(std::string v) : v_(std::move(v)) {}           // NOLINT(google-explicit-constructor)
  AttrValue(const char* v) : v_(std::string(v)) {}         // NOLINT(google-explicit-constructor)
  AttrValue(ir::DataType v) : v_(v) {}                     // NOLINT(google-explicit-constructor)
  static AttrValue ints(Ints v) { return AttrValue(Storage(std::move(v))); }
  static AttrValue floats(Floats v) { return AttrValue(Storage(std::move(v))); }
  static AttrValue strings(Strings v) { return AttrValue(Storage(std::move(v))); }

  const Storage& storage() const { return v_; }
  bool operator==(const AttrValue& o) const { return v_ == o.v_; }

 private:
  explicit AttrValue(Storage v) : v_(std::move(v)) {}
  Storage v_ = int64_t{0};
};

using Attrs = std::map<std::string, AttrValue>;

// The attribute's text as the printer writes it: 3, 1e-05, "nearest", [1, 2], float32.
std::string to_string(const AttrValue& v);

bool has_attr(const Attrs& attrs, const std::string& name);
// Without a default: ValueError "missing attribute 'axis'". With one: the default when absent.
int64_t get_int(const Attrs& attrs, const std::string& name);
int64_t get_int(const Attrs& attrs, const std::string& name, int64_t fallback);
double get_float(const Attrs& attrs, const std::string& name);  // an int attribute converts
double get_float(const Attrs& attrs, const std::string& name, double fallback);
std::string get_string(const Attrs& attrs, const std::string& name);
std::string get_string(const Attrs& attrs, const std::string& name, const std::string& fallback);
std::vector<int64_t> get_ints(const Attrs& attrs, const std::string& name);
std::vector<int64_t> get_ints(const Attrs& attrs, const std::string& name, const std::vector<int64_t>& fallback);
std::vector<double> get_floats(const Attrs& attrs, const std::string& name);
std::vector<std::string> get_strings(const Attrs& attrs, const std::string& name);
ir::DataType get_dtype(const Attrs& attrs, const std::string& name);

}  // namespace anvil::graph
