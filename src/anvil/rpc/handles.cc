// Handle, allocation and stream tables of a serving session (see handles.h).
#include "anvil/rpc/handles.h"

#include "anvil/base/error.h"

namespace anvil::rpc {

uint64_t HandleTable::add(Value v, uint64_t data_key) {
  uint64_t id = next_;
  next_ += 16;
  entries_.emplace(id, Entry{std::move(v), data_key});
  return id;
}

const Value* HandleTable::find(uint64_t id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second.value;
}

bool HandleTable::release(uint64_t id, uint64_t* data_key) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  *data_key = it->second.data_key;
  entries_.erase(it);
  return true;
}

uint64_t AllocationTable::add_allocation(Device dev, void* ptr, uint64_t nbytes, std::shared_ptr<void> owner) {
  uint64_t key = reinterpret_cast<uint64_t>(ptr);
  Region& r = regions_[key];
  r.device = dev;
  r.nbytes = std::max(r.nbytes, nbytes);
  r.client_owned = true;
  r.allocation = std::move(owner);
  return key;
}

uint64_t AllocationTable::add_tensor(const Tensor& t) {
  uint64_t key = reinterpret_cast<uint64_t>(t.data());
  auto [it, fresh] = regions_.try_emplace(key);
  Region& r = it->second;
  if (fresh || r.device == t.device()) {
    r.device = t.device();
    r.nbytes = std::max<uint64_t>(r.nbytes, t.nbytes());
  }
  r.tensor_refs += 1;
  // Holding the tensor keeps its memory alive while the client may still address it.
  r.tensor_owners.push_back(std::shared_ptr<void>(new Tensor(t), [](void* p) { delete static_cast<Tensor*>(p); }));
  return key;
}

void AllocationTable::release_tensor(uint64_t key) {
  auto it = regions_.find(key);
  if (it == regions_.end()) return;
  Region& r = it->second;
  if (r.tensor_refs > 0) r.tensor_refs -= 1;
  if (!r.tensor_owners.empty()) r.tensor_owners.pop_back();
  if (r.tensor_refs == 0 && !r.client_owned) regions_.erase(it);
}

bool AllocationTable::free_allocation(uint64_t key) {
  auto it = regions_.find(key);
  if (it == regions_.end()) return false;
  Region& r = it->second;
  if (r.tensor_refs > 0) {
    // Still the data of a tensor the client holds: that handle keeps it until it is freed.
    r.client_owned = false;
    r.allocation.reset();  // the tensors' owners keep the memory alive
    return true;
  }
  regions_.erase(it);
  return true;
}

const AllocationTable::Region& AllocationTable::region(uint64_t key, const char* what) const {
  auto it = regions_.find(key);
  if (it == regions_.end()) {
    value_error(what, ": data address 0x", std::hex, key, std::dec,
                " was not allocated by this session (nor returned to it)");
  }
  return it->second;
}

void* AllocationTable::checked_range(uint64_t key, uint64_t offset, uint64_t nbytes, Device dev,
                                     const char* what) const {
  const Region& r = region(key, what);
  if (!(r.device == dev)) {
    value_error(what, ": data 0x", std::hex, key, std::dec, " lives on ", r.device, ", not on ", dev);
  }
  if (offset > r.nbytes || nbytes > r.nbytes - offset) {
    value_error(what, ": bytes [", offset, ", ", offset + nbytes, ") fall outside the ", r.nbytes,
                "-byte region at 0x", std::hex, key);
  }
  return reinterpret_cast<void*>(key);
}

Tensor AllocationTable::resolve(const WireTensor& t, const char* what) const {
  uint64_t nbytes = t.nbytes();
  Device dev = Device::from_dl(t.device);
  if (t.data == 0) {
    if (nbytes != 0) value_error(what, ": null data for a tensor of ", nbytes, " bytes");
    return Tensor::empty(t.shape, DataType(t.dtype), dev);
  }
  checked_range(t.data, t.byte_offset, nbytes, dev, what);
  const Region& r = region(t.data, what);
  // Share the region's first owner: the tensor keeps the memory alive for as long as a callee
  // holds on to it, even past a DevFreeData.
  std::shared_ptr<void> owner = r.allocation ? r.allocation
                              : r.tensor_owners.empty() ? nullptr : r.tensor_owners.front();
  return Tensor::wrap(reinterpret_cast<void*>(t.data), t.shape, DataType(t.dtype), dev, std::move(owner), {},
                      t.byte_offset);
}

Stream StreamTable::lookup(uint64_t value, Device dev, const char* what) const {
  if (value == 0) return nullptr;
  auto it = streams_.find(value);
  if (it == streams_.end()) value_error(what, ": stream 0x", std::hex, value, " was not created by this session");
  if (!(it->second == dev)) value_error(what, ": stream belongs to ", it->second, ", not ", dev);
  return reinterpret_cast<Stream>(value);
}

void StreamTable::free_all() {
  for (auto& [value, dev] : streams_) {
    try {
      DeviceAPI::get(dev)->free_stream(dev, reinterpret_cast<Stream>(value));
    } catch (const Error&) {
      // The session is ending; a stream that cannot be freed is reclaimed with the process.
    }
  }
  streams_.clear();
}

}  // namespace anvil::rpc
