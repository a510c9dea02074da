// LocalSession: the server side of one RPC connection — it executes what the client asks for in
// this process. It turns decoded wire values into runtime Values (remote handles and tensor data
// through its tables, see handles.h), calls global functions, encodes results in TVM's return
// encoding (spec §2.7), runs the device syscalls (§2.6.3) and the tensor copies (§2.6.5).
//
// Every method reports a bad request by throwing anvil::Error; the serving loop sends the text
// back as kException and keeps the session. Decoding (and so ProtocolError) happens before.
//
// GetGlobalFunc finds functions in the session's overlay first (SessionFunctions, taken from
// the thread that constructs the session, see ScopedSessionFunctions), then in the registry.
#pragma once

#include <map>
#include <memory>
#include <unordered_map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "anvil/rpc/handles.h"
#include "anvil/rpc/protocol.h"
#include "anvil/rpc/wire.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/value.h"

namespace anvil::rpc {

// Global functions that shadow the registry for the sessions of one server: an in-process
// session (spawn_session.h) binds tvm.rpc.server.* to its own work directory this way instead of
// registering them process-wide.
using SessionFunctions = std::unordered_map<std::string, Function>;

// While it lives, every LocalSession constructed on this thread uses `functions` as its overlay
// (the serving loop constructs the session itself). Restores the previous overlay on exit.
class ScopedSessionFunctions {
 public:
  explicit ScopedSessionFunctions(std::shared_ptr<const SessionFunctions> functions);
  ~ScopedSessionFunctions();
  ScopedSessionFunctions(const ScopedSessionFunctions&) = delete;
  ScopedSessionFunctions& operator=(const ScopedSessionFunctions&) = delete;

 private:
  std::shared_ptr<const SessionFunctions> previous_;
};

class LocalSession {
 public:
  explicit LocalSession(Limits limits);
  ~LocalSession();
  LocalSession(const LocalSession&) = delete;
  LocalSession& operator=(const LocalSession&) = delete;

  // kCallFunc: calls the function behind `handle`; the reply in the §2.7 encoding.
  std::vector<WireValue> call_function(uint64_t handle, std::span<const WireValue> args);
  // Codes 9-21: the single reply value.
  WireValue syscall(RPCCode code, std::span<const WireValue> args);
  // kCopyToRemote: data into dst.data + dst.byte_offset.
  void copy_to_remote(const WireTensor& dst, std::string_view data);
  // kCopyFromRemote: the bytes at src.data + src.byte_offset. CPU memory is returned in place;
  // other devices are staged through *staging.
  std::string_view copy_from_remote(const WireTensor& src, uint64_t nbytes, std::string* staging);

  // Argument conversion and return encoding, public for tests.
  Value to_value(const WireValue& v, size_t index);
  std::vector<WireValue> encode_return(const Value& v);

  const HandleTable& handles() const { return handles_; }
  const AllocationTable& allocations() const { return allocations_; }

 private:
  // syscalls (syscalls.cc)
  WireValue get_global_func(std::span<const WireValue> args);
  WireValue free_handle(std::span<const WireValue> args);
  WireValue dev_get_attr(std::span<const WireValue> args);
  WireValue dev_alloc_data(std::span<const WireValue> args);
  WireValue dev_alloc_data_with_scope(std::span<const WireValue> args);
  WireValue dev_free_data(std::span<const WireValue> args);
  WireValue dev_stream_sync(std::span<const WireValue> args);
  WireValue copy_among_remote(std::span<const WireValue> args);
  WireValue dev_create_stream(std::span<const WireValue> args);
  WireValue dev_free_stream(std::span<const WireValue> args);
  WireValue dev_set_stream(std::span<const WireValue> args);
  WireValue dev_get_current_stream(std::span<const WireValue> args);
  uint64_t allocate(Device dev, uint64_t nbytes, uint64_t alignment, const char* what);

  // A tensor the client can address: compact, and at byte offset 0 off device.
  Tensor addressable(const Tensor& t);
  uint64_t remember(Value v, uint64_t data_key = 0) { return handles_.add(std::move(v), data_key); }

  Limits limits_;
  std::shared_ptr<const SessionFunctions> overlay_;  // may be null
  HandleTable handles_;
  AllocationTable allocations_;
  StreamTable streams_;
  std::map<std::pair<int, int>, uint64_t> current_streams_;  // (device type, id) -> stream value
};

}  // namespace anvil::rpc
