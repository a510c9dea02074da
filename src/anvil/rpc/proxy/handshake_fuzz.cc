// libFuzzer target: the proxy's handshake parser on arbitrary input, split into arbitrary reads
// (the first byte of the input chooses the split). It must never crash, read out of bounds or
// accept a key longer than its limit.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "anvil/rpc/proxy/handshake_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t step = data[0] % 16 + 1;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  anvil::rpc::proxy::HandshakeParser p(256);
  for (size_t i = 0; i < in.size(); i += step) p.feed(in.substr(i, step));
  if (p.state() == anvil::rpc::proxy::HandshakeParser::State::kDone && p.key().size() > 256) __builtin_trap();
  return 0;
}
