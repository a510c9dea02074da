// Tensor: a reference-counted n-d array over a DLTensor — shape, optional strides, dtype, device
// and the memory owner. Views share the owner. DLPack import and export never copy.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "anvil/runtime/data_type.h"
#include "anvil/runtime/device.h"
#include "anvil/runtime/memory/allocator.h"
#include "anvil/runtime/object.h"

namespace anvil {

class TensorNode final : public Object {
 public:
  std::string_view type_key() const override { return "runtime.Tensor"; }

  DLTensor dl{};                  // shape/strides point into the vectors below
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;   // empty = compact row-major (dl.strides == nullptr)
  std::shared_ptr<void> owner;    // keeps the memory alive; shared by views
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Ref<TensorNode> node) : node_(std::move(node)) {}

  // Uninitialised compact tensor. Memory comes from `allocator` when given, else straight
  // from the device. Throws ValueError for negative dims or a dtype a tensor cannot hold.
  static Tensor empty(std::span<const int64_t> shape, DataType dtype, Device device = Device::cpu(),
                      Allocator* allocator = nullptr);
  static Tensor empty(std::initializer_list<int64_t> shape, DataType dtype, Device device = Device::cpu(),
                      Allocator* allocator = nullptr) {
    return empty(std::span<const int64_t>(shape.begin(), shape.size()), dtype, device, allocator);
  }
  // Takes ownership of `managed` (its deleter runs when the last reference goes). No copy.
  static Tensor from_dlpack(DLManagedTensor* managed);
  // Wraps memory owned by someone else; `owner` keeps it alive. No copy.
  static Tensor wrap(void* data, std::span<const int64_t> shape, DataType dtype, Device device,
                     std::shared_ptr<void> owner, std::span<const int64_t> strides = {},
                     uint64_t byte_offset = 0);

  // A new DLManagedTensor that keeps this tensor alive until its deleter is called. No copy.
  DLManagedTensor* to_dlpack() const;

  bool defined() const { return static_cast<bool>(node_); }
  const DLTensor* dl() const { return &node_->dl; }
  DLTensor* dl() { return &node_->dl; }
  int ndim() const { return node_->dl.ndim; }
  const std::vector<int64_t>& shape() const { return node_->shape; }
  // Strides in elements; computed row-major strides when the tensor is compact.
  std::vector<int64_t> strides() const;
  DataType dtype() const { return DataType(node_->dl.dtype); }
  Device device() const { return Device::from_dl(node_->dl.device); }
  // Address of element 0 (base pointer + byte offset); only meaningful on host-addressable devices.
  void* data() const { return static_cast<char*>(node_->dl.data) + node_->dl.byte_offset; }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype().bytes(); }
  bool is_contiguous() const;
  const std::shared_ptr<void>& owner() const { return node_->owner; }
  TensorNode* node() const { return node_.get(); }

  // A compact view of the same memory with a new shape/dtype starting `byte_offset` bytes
  // further on. Requires a contiguous tensor; ValueError when the view does not fit.
  Tensor view(std::span<const int64_t> shape, std::optional<DataType> dtype = std::nullopt,
              uint64_t byte_offset = 0) const;
  // Copies between tensors of equal shape and dtype, on any devices. CPU-to-CPU copies accept
  // any strides; copies involving another device need contiguous tensors.
  void copy_from(const Tensor& other);
  void copy_from_bytes(const void* data, size_t nbytes);
  void copy_to_bytes(void* data, size_t nbytes) const;
  Tensor copy_to(Device device, Allocator* allocator = nullptr) const;

  // "Tensor(shape=[2, 3], dtype=float32, device=cpu:0)"
  std::string to_string() const;

  bool same_as(const Tensor& other) const { return node_ == other.node_; }

 private:
  Ref<TensorNode> node_;
};

// "[2, 3, 4]"
std::string shape_to_string(std::span<const int64_t> shape);

}  // namespace anvil
