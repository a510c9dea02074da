// Base of every reference-counted runtime object (strings, shapes, tensors, functions, modules)
// and Ref<T>, the intrusive smart pointer that owns one. Intrusive counts keep a Value at 16
// bytes and let a raw Object* cross the C ABI and come back as a Ref without a control block.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <utility>

namespace anvil {

class Object {
 public:
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  // A stable name for error messages ("runtime.Tensor", "runtime.Module", ...).
  virtual std::string_view type_key() const = 0;

  void inc_ref() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void dec_ref() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int32_t use_count() const { return ref_count_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int32_t> ref_count_{0};
};

template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T* ptr) : ptr_(ptr) {
    if (ptr_) ptr_->inc_ref();
  }
  Ref(const Ref& other) : Ref(other.ptr_) {}
  Ref(Ref&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <typename U>
    requires std::is_convertible_v<U*, T*>
  Ref(const Ref<U>& other) : Ref(static_cast<T*>(other.get())) {}
  ~Ref() {
    if (ptr_) ptr_->dec_ref();
  }
  Ref& operator=(Ref other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  T* get() const { return ptr_; }
  T* operator->() const { return ptr_; }
  T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool operator==(const Ref& other) const { return ptr_ == other.ptr_; }

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> make_object(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

}  // namespace anvil
