// What a serving session has handed out to its client, so that nothing the client sends back is
// trusted blindly:
//   HandleTable     - objects (functions, modules, tensors, other objects) behind opaque ids;
//                     freeing an unknown id is a no-op (TVM v0.22/0.23 clients free data
//                     pointers by mistake, spec §2.9).
//   AllocationTable - device memory the client may address through DLTensor.data: allocations
//                     it asked for (DevAllocData*) and the data of tensors returned to it. Every
//                     access is bounds-checked against the region, so a client cannot make the
//                     server touch memory it was not given.
//   StreamTable     - device streams the client created.
// Everything left is released when the session ends.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "anvil/runtime/device_api.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/value.h"
#include "anvil/rpc/wire.h"

namespace anvil::rpc {

class HandleTable {
 public:
  // Stores v and returns a fresh non-zero id. `data_key`, when non-zero, is the AllocationTable
  // key of a returned tensor's data, released together with the handle.
  uint64_t add(Value v, uint64_t data_key = 0);
  // The value behind id, or nullptr.
  const Value* find(uint64_t id) const;
  // Drops id. Returns false (and does nothing) for an unknown id; *data_key gets the linked key.
  bool release(uint64_t id, uint64_t* data_key);
  size_t size() const { return entries_.size(); }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    Value value;
    uint64_t data_key;
  };
  std::unordered_map<uint64_t, Entry> entries_;
  // Ids are opaque, start high and step by 16, so they never look like small integers and never
  // repeat within a session.
  uint64_t next_ = 0x10000;
};

class AllocationTable {
 public:
  // Memory the client allocated (DevAllocData, DevAllocDataWithScope): freed by DevFreeData or
  // at the end of the session. Returns its key (the address).
  uint64_t add_allocation(Device dev, void* ptr, uint64_t nbytes, std::shared_ptr<void> owner);
  // The data of a tensor returned to the client; the key is the address of element 0 and the
  // region its nbytes. Reference-counted per returned handle (see release_tensor).
  uint64_t add_tensor(const Tensor& t);
  void release_tensor(uint64_t key);
  // DevFreeData. false for an unknown key (ignored by the caller).
  bool free_allocation(uint64_t key);

  // The tensor a client DLTensor denotes: its data must be a key of this table, its device the
  // region's, and byte_offset + nbytes inside the region. ValueError otherwise.
  Tensor resolve(const WireTensor& t, const char* what) const;
  // Host-visible byte range [key + offset, key + offset + nbytes) of a region on `dev`, checked;
  // returns the region's base pointer (device memory is addressed with base + offset).
  void* checked_range(uint64_t key, uint64_t offset, uint64_t nbytes, Device dev, const char* what) const;

  size_t size() const { return regions_.size(); }
  void clear() { regions_.clear(); }

 private:
  struct Region {
    Device device;
    uint64_t nbytes = 0;
    bool client_owned = false;  // DevAllocData made it; DevFreeData may drop it
    int tensor_refs = 0;        // returned tensors' handles still pointing at it
    std::shared_ptr<void> allocation;                  // frees client-allocated memory
    std::vector<std::shared_ptr<void>> tensor_owners;  // one per returned tensor handle
  };
  const Region& region(uint64_t key, const char* what) const;
  std::map<uint64_t, Region> regions_;
};

class StreamTable {
 public:
  void add(Device dev, Stream s) { streams_[reinterpret_cast<uint64_t>(s)] = dev; }
  // The stream for a client value: 0 is the default stream; anything else must be known.
  Stream lookup(uint64_t value, Device dev, const char* what) const;
  bool remove(uint64_t value) { return streams_.erase(value) > 0; }
  // Frees every stream still open (end of session).
  void free_all();

 private:
  std::map<uint64_t, Device> streams_;
};

}  // namespace anvil::rpc
