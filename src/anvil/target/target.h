// Target: what code is generated for — a parsed, immutable, hashable set of options.
//
// Text form (TVM's): `<kind> -key=value -flag ...`, e.g.
//   llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon -num-cores=4 -opt-level=3 -fast-math
//   c        vulkan -from_device=0 -max_push_constants_size=128        cuda -arch=sm_90        opencl
// The kinds and the options each accepts are listed once, in target_kinds.def; anything else
// is a ValueError naming the bad part. A Target keeps what was written: "llvm" stays "llvm"
// (meaning: the host), and the LLVM back end resolves defaults (codegen/llvm/llvm_target.h).
// str() is canonical — options in the order target_kinds.def lists them — so
// parse(t.str()) == t, and equal targets have equal strings and hashes.
//
// Host and device: a target of a Host kind ("llvm", "c") is its own host. A Device kind
// ("vulkan", "cuda", "opencl") may name the host target its launching code (the VM's host code)
// is built for; without one the host is "llvm" (this CPU). In text the host comes last and takes
// the rest of the string: `vulkan -from_device=0 -host=llvm -mcpu=znver4` (Python:
// Target("vulkan -from_device=0", host="llvm -mcpu=znver4")). The host is part of str(), ==
// and hash(); a host that was not written is not printed, so "vulkan" != "vulkan -host=llvm"
// although both have the host "llvm".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace anvil {

enum class TargetKind : int32_t {
#define ANVIL_TARGET_KIND(e, name, role) e,
#include "anvil/target/target_kinds.def"
};

enum class TargetOptionType : int32_t { kString, kInt, kBool, kStringList };

// One value: string, integer, flag or comma-separated list, as the option's type says.
using TargetOptionValue = std::variant<std::string, int64_t, bool, std::vector<std::string>>;

class Target {
 public:
  // Parses the text form; throws ValueError (unknown kind or option, missing or malformed
  // value, repeated option) with a message that quotes the target and the offending option.
  static Target parse(std::string_view text);
  // A target of `kind` with no options.
  explicit Target(TargetKind kind);

  TargetKind kind() const { return kind_; }
  std::string_view kind_name() const;

  bool has(std::string_view key) const;
  // Typed getters: nullopt when the option is absent. Asking for a key the kind does not know,
  // or with the wrong type, is an internal error (a bug in the caller, not user input).
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::vector<std::string>> get_list(std::string_view key) const;
  // The value of any type (for generic readers: Python's Target.attrs).
  std::optional<TargetOptionValue> get(std::string_view key) const;

  // A copy with one option set (validated like parsed text) or removed; the host is kept.
  Target with(std::string_view key, TargetOptionValue value) const;
  Target without(std::string_view key) const;

  // True for the kinds whose code runs on the host CPU ("llvm", "c"; Role Host in target_kinds.def).
  static bool is_host_kind(TargetKind kind);
  bool is_host_kind() const { return is_host_kind(kind_); }
  // The host target: the target itself for a host kind; for a device kind the host written
  // (with_host, "-host=..."), else Target(kLLVM) ("llvm", this CPU).
  Target host() const;
  // Whether a host was written (device kinds only; a host kind never stores one).
  bool has_host() const { return host_ != nullptr; }
  // A copy with `host` as its host. ValueError when `host` is not of a host kind or names a host
  // itself; for a host kind, when `host` differs from the target (equal: the target unchanged).
  Target with_host(const Target& host) const;
  Target without_host() const;

  const std::string& str() const { return str_; }
  size_t hash() const { return hash_; }
  bool operator==(const Target& other) const { return str_ == other.str_; }

  // The option keys a kind accepts, in canonical order (for help texts and messages).
  static std::vector<std::string_view> option_keys(TargetKind kind);
  static std::vector<std::string_view> kind_names();

 private:
  struct Entry {
    int32_t option;  // index into the option table of target_kinds.def
    TargetOptionValue value;
  };
  void finish();  // sort entries, build str_ and hash_
  const Entry* find(std::string_view key) const;

  TargetKind kind_;
  std::vector<Entry> entries_;
  std::shared_ptr<const Target> host_;  // written host of a device target, else null
  std::string str_;
  size_t hash_ = 0;
};

}  // namespace anvil

template <>
struct std::hash<anvil::Target> {
  size_t operator()(const anvil::Target& t) const noexcept { return t.hash(); }
};
