// Tensor creation, views, copies and DLPack exchange.
#include "anvil/runtime/tensor.h"

#include <cstring>

#include "anvil/base/error.h"
#include "anvil/runtime/device_api.h"

namespace anvil {
namespace {

void check_element_type(DataType dtype, const char* op) {
  if (!dtype.is_tensor_element())
    value_error(op, ": a tensor cannot hold elements of type ", dtype,
                " (supported: bool, int8-64, uint8-64, float16/32/64, bfloat16)");
}

int64_t checked_numel(std::span<const int64_t> shape, const char* op) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) value_error(op, ": dimension ", i, " of shape ", shape_to_string(shape), " is negative");
    if (shape[i] != 0 && n > INT64_MAX / shape[i]) value_error(op, ": shape ", shape_to_string(shape), " is too large");
    n *= shape[i];
  }
  return n;
}

// Builds a node whose DLTensor points at its own shape/strides vectors.
Ref<TensorNode> make_node(void* data, std::span<const int64_t> shape, std::span<const int64_t> strides,
                          DataType dtype, Device device, uint64_t byte_offset, std::shared_ptr<void> owner) {
  auto node = make_object<TensorNode>();
  node->shape.assign(shape.begin(), shape.end());
  node->strides.assign(strides.begin(), strides.end());
  node->owner = std::move(owner);
  node->dl.data = data;
  node->dl.device = device.dl();
  node->dl.ndim = static_cast<int32_t>(shape.size());
  node->dl.dtype = dtype.dl();
  node->dl.shape = node->shape.data();
  node->dl.strides = node->strides.empty() ? nullptr : node->strides.data();
  node->dl.byte_offset = byte_offset;
  return node;
}

// Row-major strides for a shape.
std::vector<int64_t> compact_strides(std::span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i];
  }
  return strides;
}

// Copies an n-d strided host region element by element (innermost run as one memcpy when both
// sides are unit-stride there).
void strided_host_copy(const char* src, const int64_t* src_strides, char* dst, const int64_t* dst_strides,
                       const int64_t* shape, int ndim, size_t elem) {
  if (ndim == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  if (ndim == 1 && src_strides[0] == 1 && dst_strides[0] == 1) {
    std::memcpy(dst, src, static_cast<size_t>(shape[0]) * elem);
    return;
  }
  for (int64_t i = 0; i < shape[0]; ++i)
    strided_host_copy(src + i * src_strides[0] * static_cast<int64_t>(elem), src_strides + 1,
                      dst + i * dst_strides[0] * static_cast<int64_t>(elem), dst_strides + 1, shape + 1,
                      ndim - 1, elem);
}

}  // namespace

std::string shape_to_string(std::span<const int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

Tensor Tensor::empty(std::span<const int64_t> shape, DataType dtype, Device device, Allocator* allocator) {
  check_element_type(dtype, "Tensor::empty");
  size_t nbytes = static_cast<size_t>(checked_numel(shape, "Tensor::empty")) * dtype.bytes();
  std::shared_ptr<void> owner;
  void* data = nullptr;
  if (allocator != nullptr) {
    if (!(allocator->device() == device))
      value_error("Tensor::empty: allocator for ", allocator->device(), " cannot allocate on ", device);
    MemoryBlock block = allocator->alloc(nbytes, kAllocAlignment);
    data = block.data;
    owner = std::shared_ptr<void>(data, [allocator, block](void*) { allocator->free(block); });
  } else {
    DeviceAPI* api = DeviceAPI::get(device);
    data = api->alloc(device, nbytes, kAllocAlignment);
    owner = std::shared_ptr<void>(data, [api, device](void* p) { api->free(device, p); });
  }
  return Tensor(make_node(data, shape, {}, dtype, device, 0, std::move(owner)));
}

Tensor Tensor::wrap(void* data, std::span<const int64_t> shape, DataType dtype, Device device,
                    std::shared_ptr<void> owner, std::span<const int64_t> strides, uint64_t byte_offset) {
  check_element_type(dtype, "Tensor::wrap");
  checked_numel(shape, "Tensor::wrap");
  if (!strides.empty() && strides.size() != shape.size())
    value_error("Tensor::wrap: ", strides.size(), " strides given for a ", shape.size(), "-d shape");
  // Compact strides are dropped so is_contiguous() and DLPack consumers see the simple form.
  if (!strides.empty() && std::vector<int64_t>(strides.begin(), strides.end()) == compact_strides(shape))
    strides = {};
  return Tensor(make_node(data, shape, strides, dtype, device, byte_offset, std::move(owner)));
}

Tensor Tensor::from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) value_error("from_dlpack: null DLManagedTensor");
  std::shared_ptr<void> owner(managed, [](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (m->deleter) m->deleter(m);
  });
  const DLTensor& t = managed->dl_tensor;
  if (t.ndim < 0) value_error("from_dlpack: negative ndim ", t.ndim);
  std::span<const int64_t> shape(t.shape, static_cast<size_t>(t.ndim));
  std::span<const int64_t> strides;
  if (t.strides != nullptr) strides = std::span<const int64_t>(t.strides, static_cast<size_t>(t.ndim));
  return wrap(t.data, shape, DataType(t.dtype), Device::from_dl(t.device), std::move(owner), strides,
              t.byte_offset);
}

DLManagedTensor* Tensor::to_dlpack() const {
  struct Context {
    DLManagedTensor managed;
    Ref<TensorNode> keep;
  };
  auto* ctx = new Context{};
  ctx->keep = node_;
  ctx->managed.dl_tensor = node_->dl;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor* self) { delete static_cast<Context*>(self->manager_ctx); };
  return &ctx->managed;
}

std::vector<int64_t> Tensor::strides() const {
  return node_->strides.empty() ? compact_strides(node_->shape) : node_->strides;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : node_->shape) n *= d;
  return n;
}

bool Tensor::is_contiguous() const {
  if (node_->strides.empty()) return true;
  // Dimensions of extent 1 may carry any stride (numpy and PyTorch produce such tensors).
  int64_t step = 1;
  for (size_t i = node_->shape.size(); i-- > 0;) {
    if (node_->shape[i] != 1 && node_->strides[i] != step) return false;
    step *= node_->shape[i];
  }
  return true;
}

Tensor Tensor::view(std::span<const int64_t> shape, std::optional<DataType> dtype, uint64_t byte_offset) const {
  if (!is_contiguous()) value_error("Tensor::view: the source tensor ", to_string(), " is not contiguous");
  DataType new_dtype = dtype.value_or(this->dtype());
  check_element_type(new_dtype, "Tensor::view");
  size_t need = static_cast<size_t>(checked_numel(shape, "Tensor::view")) * new_dtype.bytes();
  if (byte_offset > nbytes() || need > nbytes() - byte_offset)
    value_error("Tensor::view: a view of shape ", shape_to_string(shape), " and dtype ", new_dtype, " at byte offset ",
                byte_offset, " needs ", need, " bytes but the tensor ", to_string(), " has ", nbytes(), " bytes");
  return Tensor(make_node(node_->dl.data, shape, {}, new_dtype, device(), node_->dl.byte_offset + byte_offset,
                          node_->owner));
}

void Tensor::copy_from(const Tensor& other) {
  if (other.shape() != shape() || !(other.dtype() == dtype()))
    value_error("Tensor::copy_from: cannot copy ", other.to_string(), " into ", to_string(),
                ": shapes and dtypes must match");
  size_t bytes = nbytes();
  if (bytes == 0) return;
  Device src = other.device(), dst = device();
  if (src.type == kDLCPU && dst.type == kDLCPU) {
    if (is_contiguous() && other.is_contiguous()) {
      std::memmove(data(), other.data(), bytes);
    } else {
      std::vector<int64_t> ss = other.strides(), ds = strides();
      strided_host_copy(static_cast<const char*>(other.data()), ss.data(), static_cast<char*>(data()), ds.data(),
                        shape().data(), ndim(), dtype().bytes());
    }
    return;
  }
  if (!is_contiguous() || !other.is_contiguous())
    not_implemented_error("Tensor::copy_from: copies between ", src, " and ", dst,
                          " need contiguous tensors; got ", other.to_string(), " -> ", to_string());
  DeviceAPI* api = DeviceAPI::get(src.type != kDLCPU ? src : dst);
  api->copy(other.node_->dl.data, other.node_->dl.byte_offset, node_->dl.data, node_->dl.byte_offset, bytes, src,
            dst, nullptr);
  api->sync(src.type != kDLCPU ? src : dst, nullptr);
}

void Tensor::copy_from_bytes(const void* bytes, size_t size) {
  if (size != nbytes())
    value_error("Tensor::copy_from_bytes: got ", size, " bytes but ", to_string(), " holds ", nbytes(), " bytes");
  Tensor host = wrap(const_cast<void*>(bytes), shape(), dtype(), Device::cpu(), nullptr);
  copy_from(host);
}

void Tensor::copy_to_bytes(void* bytes, size_t size) const {
  if (size != nbytes())
    value_error("Tensor::copy_to_bytes: buffer has ", size, " bytes but ", to_string(), " holds ", nbytes(),
                " bytes");
  Tensor host = wrap(bytes, shape(), dtype(), Device::cpu(), nullptr);
  host.copy_from(*this);
}

Tensor Tensor::copy_to(Device target, Allocator* allocator) const {
  Tensor out = empty(shape(), dtype(), target, allocator);
  out.copy_from(*this);
  return out;
}

std::string Tensor::to_string() const {
  if (!node_) return "Tensor(undefined)";
  return str_cat("Tensor(shape=", shape_to_string(shape()), ", dtype=", dtype(), ", device=", device(), ")");
}

}  // namespace anvil
