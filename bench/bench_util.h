// Helpers every benchmark shares: the machine's CPU name, JSON string escaping for the summary
// line, and strict parsing of positive integer flags.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

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

// Parses `--name N` flags into the given ints (positive only) and `--help`/`-h`, which calls
// print_help(argv[0]) and exits 0; anything else exits 2 with a message.
inline void parse_int_flags(int argc, char** argv, const std::vector<std::pair<const char*, int*>>& flags,
                            void (*print_help)(const char*)) {
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0) {
      print_help(argv[0]);
      std::exit(0);
    }
    bool known = false;
    for (const auto& [name, target] : flags) {
      if (std::strcmp(arg, name) != 0) continue;
      *target = positive_int(arg, i + 1 < argc ? argv[i + 1] : nullptr);
      ++i;
      known = true;
      break;
    }
    if (!known) {
      std::fprintf(stderr, "unknown argument '%s' (try --help)\n", arg);
      std::exit(2);
    }
  }
}

// The 1-minute load average (NaN when unreadable): other work on the machine skews every
// figure, 2-thread ones most, so benches print it.
inline double load_average() {
  double load = NAN;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = NAN;
    std::fclose(f);
  }
  return load;
}

}  // namespace anvil::bench
