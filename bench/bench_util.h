// Helpers every benchmark shares: the machine's CPU name, JSON string escaping for the summary
// line, and strict parsing of positive integer flags.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace anvil::bench {

inline std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

inline std::string json_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

// Parses a positive integer flag value; exits with a message otherwise.
inline int positive_int(const char* flag, const char* text) {
  char* end = nullptr;
  long value = text ? std::strtol(text, &end, 10) : 0;
  if (text == nullptr || *end != '\0' || value <= 0 || value > 1'000'000'000) {
    std::fprintf(stderr, "%s: expected a positive integer, got '%s'\n", flag, text ? text : "");
    std::exit(2);
  }
  return static_cast<int>(value);
}

}  // namespace anvil::bench
