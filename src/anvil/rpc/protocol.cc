// Names of RPC codes and type indices, and the mapping between exceptions and kException texts.
#include "anvil/rpc/protocol.h"

#include <array>

namespace anvil::rpc {

std::string rpc_code_name(int32_t code) {
  switch (code) {
#define ANVIL_RPC_CODE(name, text, value) \
  case value:                             \
    return text;
#include "anvil/rpc/rpc_codes.def"
#undef ANVIL_RPC_CODE
  }
  return str_cat("Unknown(", code, ")");
}

std::string type_index_name(int32_t index) {
  switch (index) {
#define ANVIL_RPC_TYPE_INDEX(name, text, value) \
  case value:                                   \
    return text;
#include "anvil/rpc/type_indices.def"
#undef ANVIL_RPC_TYPE_INDEX
  }
  return str_cat("Unknown(", index, ")");
}

namespace {

// The kind named by a "<Kind>: " prefix, for the kinds Anvil and Python both use.
ErrorKind kind_from_prefix(std::string_view message) {
  struct Entry {
    std::string_view prefix;
    ErrorKind kind;
  };
  static constexpr std::array<Entry, 7> kPrefixes = {{
      {"ValueError: ", ErrorKind::kValue},
      {"TypeError: ", ErrorKind::kType},
      {"IndexError: ", ErrorKind::kIndex},
      {"NotImplementedError: ", ErrorKind::kNotImplemented},
      {"IOError: ", ErrorKind::kIO},
      {"InternalError: ", ErrorKind::kInternal},
      {"AttributeError: ", ErrorKind::kValue},
  }};
  for (const Entry& e : kPrefixes) {
    if (message.starts_with(e.prefix)) return e.kind;
  }
  return ErrorKind::kRuntime;
}

}  // namespace

void throw_remote_error(std::string_view remote_message) {
  if (remote_message.starts_with(kSessionTimeoutPrefix)) {
    throw RPCSessionTimeoutError(std::string(remote_message));
  }
  throw RPCError(kind_from_prefix(remote_message),
                 str_cat("RPCError: Error caught from RPC call:\n", remote_message));
}

std::string exception_text(const std::exception& e) {
  if (const auto* err = dynamic_cast<const Error*>(&e)) {
    // A remote error travelling through a second hop keeps its text as it is.
    if (dynamic_cast<const RPCError*>(err) != nullptr) return err->what();
    return str_cat(error_kind_name(err->kind()), ": ", err->what());
  }
  return str_cat("RuntimeError: ", e.what());
}

}  // namespace anvil::rpc
