// JSON text exactly as Python's json.dumps writes it (separators ", " and ": ", ensure_ascii,
// float repr), plus Python's str() of JSON scalars. TVM's tracker and its clients compare and
// print what Python produces, so replies and the query table must match byte for byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace anvil::rpc::tracker {

// Objects keep insertion order, as Python dicts do (UPDATE_INFO merges, SUMMARY prints them).
using Json = nlohmann::ordered_json;

// json.dumps(value): ASCII-only output, so its byte length equals Python's len().
std::string py_dumps(const Json& value);

// str(value) for what json.loads would give: "None", "True", 12, 1.5, 'raw text';
// containers fall back to py_dumps (close to, but not exactly, Python's repr).
std::string py_str(const Json& value);

// Python's repr of a float: shortest round-trip digits, "1.0", "1e+16", "inf"/"nan" spelled
// as json.dumps does when as_json is true ("Infinity", "NaN").
std::string py_float_repr(double value, bool as_json);

// Number of code points of UTF-8 text (Python's len() of the decoded str).
std::size_t utf8_length(std::string_view text);

// Largest nesting depth of arrays/objects in JSON text, ignoring brackets inside strings.
// Cheap pre-check so hostile input cannot drive recursive code (dump, destruction) deep.
int json_nesting_depth(std::string_view text);

}  // namespace anvil::rpc::tracker
