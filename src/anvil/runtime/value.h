// Value: the tagged 16-byte cell that carries every argument and result in Anvil — ints, floats,
// bools, opaque handles, devices, data types, and reference-counted objects (strings, bytes,
// shapes, tensors, functions, modules, arrays, and any other Object). Checked accessors throw a
// TypeError naming the expected and the actual kind.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "anvil/runtime/data_type.h"
#include "anvil/runtime/device.h"
#include "anvil/runtime/object.h"

namespace anvil {

enum class ValueKind : int32_t {
#define ANVIL_VALUE_KIND(name, text, code) name = code,
#include "anvil/runtime/value_kinds.def"
#undef ANVIL_VALUE_KIND
};

std::string_view value_kind_name(ValueKind kind);

class Tensor;
class Function;
class Module;
class Value;

class StringNode final : public Object {
 public:
  explicit StringNode(std::string data) : data(std::move(data)) {}
  std::string_view type_key() const override { return "runtime.String"; }
  const std::string data;
};

class ShapeNode final : public Object {
 public:
  explicit ShapeNode(std::vector<int64_t> dims) : dims(std::move(dims)) {}
  std::string_view type_key() const override { return "runtime.Shape"; }
  const std::vector<int64_t> dims;
};

class Value {
 public:
  Value() : kind_(ValueKind::kNull), i_(0) {}
  Value(std::nullptr_t) : Value() {}
  template <typename T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  Value(T v) : kind_(ValueKind::kInt), i_(static_cast<int64_t>(v)) {}
  Value(bool v) : kind_(ValueKind::kBool), i_(v ? 1 : 0) {}
  Value(double v) : kind_(ValueKind::kFloat), f_(v) {}
  Value(float v) : kind_(ValueKind::kFloat), f_(v) {}
  Value(Device v) : kind_(ValueKind::kDevice), dev_(v.dl()) {}
  Value(DataType v) : kind_(ValueKind::kDataType), dtype_(v.dl()) {}
  Value(const char* v) : Value(std::string(v)) {}
  Value(std::string_view v) : Value(std::string(v)) {}
  Value(std::string v) : Value(ValueKind::kString, new StringNode(std::move(v))) {}
  Value(const Tensor& v);
  Value(const Function& v);
  Value(const Module& v);
  Value(std::vector<Value> items);  // an array

  static Value bytes(std::string data) { return Value(ValueKind::kBytes, new StringNode(std::move(data))); }
  static Value shape(std::vector<int64_t> dims) { return Value(ValueKind::kShape, new ShapeNode(std::move(dims))); }
  static Value handle(void* ptr) {
    Value v;
    v.kind_ = ValueKind::kHandle;
    v.ptr_ = ptr;
    return v;
  }
  // Any other object (VM closures, storages, ...); kind kObject.
  static Value object(Ref<Object> obj) { return Value(ValueKind::kObject, obj.get()); }

  Value(const Value& other) : kind_(other.kind_), i_(other.i_) {
    if (is_object()) obj_->inc_ref();
  }
  Value(Value&& other) noexcept : kind_(other.kind_), i_(other.i_) { other.kind_ = ValueKind::kNull; }
  Value& operator=(Value other) noexcept {
    std::swap(kind_, other.kind_);
    std::swap(i_, other.i_);
    return *this;
  }
  ~Value() {
    if (is_object()) obj_->dec_ref();
  }

  ValueKind kind() const { return kind_; }
  std::string_view kind_name() const { return value_kind_name(kind_); }
  bool is_null() const { return kind_ == ValueKind::kNull; }
  bool is_object() const { return kind_ >= ValueKind::kString && kind_ != ValueKind::kNull; }

  // Checked accessors. Ints widen to floats; bools and ints convert to each other as numpy does.
  int64_t as_int() const;
  double as_float() const;
  bool as_bool() const;
  void* as_handle() const;  // also accepts null (nullptr)
  Device as_device() const;
  DataType as_dtype() const;  // also accepts a string such as "float32"
  const std::string& as_string() const;
  const std::string& as_bytes() const;  // also accepts a string
  const std::vector<int64_t>& as_shape() const;
  Tensor as_tensor() const;
  Function as_function() const;
  Module as_module() const;
  const std::vector<Value>& as_array() const;
  Ref<Object> as_object() const;  // any object kind

  // Raw access for the C ABI and serializers; unchecked.
  Object* object_ptr() const { return is_object() ? obj_ : nullptr; }

  // Human-readable: 3, 2.5, True, "text", float32, cpu:0, Tensor(shape=[2, 3], float32, cpu:0)
  std::string to_string() const;

 private:
  Value(ValueKind kind, Object* obj) : kind_(kind), obj_(obj) {
    if (obj_) obj_->inc_ref(); else kind_ = ValueKind::kNull;
  }
  [[noreturn]] void mismatch(std::string_view expected) const;

  ValueKind kind_;
  union {
    int64_t i_;
    double f_;
    void* ptr_;
    DLDevice dev_;
    DLDataType dtype_;
    Object* obj_;
  };
};

static_assert(sizeof(Value) == 16, "Value must stay a 16-byte cell");

class ArrayNode final : public Object {
 public:
  explicit ArrayNode(std::vector<Value> items) : items(std::move(items)) {}
  std::string_view type_key() const override { return "runtime.Array"; }
  const std::vector<Value> items;
};

std::ostream& operator<<(std::ostream& os, const Value& v);

}  // namespace anvil
