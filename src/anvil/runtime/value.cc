// Value construction from objects, checked accessors and printing.
#include "anvil/runtime/value.h"

#include <ostream>

#include "anvil/base/error.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/tensor.h"

namespace anvil {

std::string_view value_kind_name(ValueKind kind) {
  switch (kind) {
#define ANVIL_VALUE_KIND(name, text, code) \
  case ValueKind::name:                    \
    return text;
#include "anvil/runtime/value_kinds.def"
#undef ANVIL_VALUE_KIND
  }
  return "unknown";
}

Value::Value(const Tensor& v) : Value(ValueKind::kTensor, v.node()) {}
Value::Value(const Function& v) : Value(ValueKind::kFunction, v.node()) {}
Value::Value(const Module& v) : Value(ValueKind::kModule, v.node()) {}
Value::Value(std::vector<Value> items) : Value(ValueKind::kArray, new ArrayNode(std::move(items))) {}

void Value::mismatch(std::string_view expected) const {
  type_error("expected ", expected, " but got ", kind_name(),
             kind_ == ValueKind::kNull ? "" : " (" + to_string() + ")");
}

int64_t Value::as_int() const {
  if (kind_ == ValueKind::kInt || kind_ == ValueKind::kBool) return i_;
  mismatch("int");
}

double Value::as_float() const {
  if (kind_ == ValueKind::kFloat) return f_;
  if (kind_ == ValueKind::kInt || kind_ == ValueKind::kBool) return static_cast<double>(i_);
  mismatch("float");
}

bool Value::as_bool() const {
  if (kind_ == ValueKind::kBool || kind_ == ValueKind::kInt) return i_ != 0;
  mismatch("bool");
}

void* Value::as_handle() const {
  if (kind_ == ValueKind::kHandle) return ptr_;
  if (kind_ == ValueKind::kNull) return nullptr;
  mismatch("handle");
}

Device Value::as_device() const {
  if (kind_ == ValueKind::kDevice) return Device::from_dl(dev_);
  if (kind_ == ValueKind::kString) return Device::parse(static_cast<StringNode*>(obj_)->data);
  mismatch("device");
}

DataType Value::as_dtype() const {
  if (kind_ == ValueKind::kDataType) return DataType(dtype_);
  if (kind_ == ValueKind::kString) return DataType::parse(static_cast<StringNode*>(obj_)->data);
  mismatch("dtype");
}

const std::string& Value::as_string() const {
  if (kind_ == ValueKind::kString) return static_cast<StringNode*>(obj_)->data;
  mismatch("string");
}

const std::string& Value::as_bytes() const {
  if (kind_ == ValueKind::kBytes || kind_ == ValueKind::kString) return static_cast<StringNode*>(obj_)->data;
  mismatch("bytes");
}

const std::vector<int64_t>& Value::as_shape() const {
  if (kind_ == ValueKind::kShape) return static_cast<ShapeNode*>(obj_)->dims;
  mismatch("shape");
}

Tensor Value::as_tensor() const {
  if (kind_ == ValueKind::kTensor) return Tensor(Ref<TensorNode>(static_cast<TensorNode*>(obj_)));
  mismatch("tensor");
}

Function Value::as_function() const {
  if (kind_ == ValueKind::kFunction) return Function(Ref<FunctionNode>(static_cast<FunctionNode*>(obj_)));
  mismatch("function");
}

Module Value::as_module() const {
  if (kind_ == ValueKind::kModule) return Module(Ref<ModuleNode>(static_cast<ModuleNode*>(obj_)));
  mismatch("module");
}

const std::vector<Value>& Value::as_array() const {
  if (kind_ == ValueKind::kArray) return static_cast<ArrayNode*>(obj_)->items;
  mismatch("array");
}

Ref<Object> Value::as_object() const {
  if (is_object()) return Ref<Object>(obj_);
  mismatch("object");
}

std::string Value::to_string() const {
  switch (kind_) {
    case ValueKind::kNull: return "None";
    case ValueKind::kInt: return std::to_string(i_);
    case ValueKind::kFloat: return str_cat(f_);
    case ValueKind::kBool: return i_ ? "True" : "False";
    case ValueKind::kHandle: return str_cat("handle(", ptr_, ")");
    case ValueKind::kDevice: return Device::from_dl(dev_).to_string();
    case ValueKind::kDataType: return DataType(dtype_).to_string();
    case ValueKind::kString: {
      const std::string& s = static_cast<StringNode*>(obj_)->data;
      return "\"" + (s.size() > 64 ? s.substr(0, 61) + "..." : s) + "\"";
    }
    case ValueKind::kBytes: return str_cat("bytes(", static_cast<StringNode*>(obj_)->data.size(), ")");
    case ValueKind::kShape: return "shape" + shape_to_string(static_cast<ShapeNode*>(obj_)->dims);
    case ValueKind::kTensor: return as_tensor().to_string();
    case ValueKind::kFunction: {
      const std::string& name = static_cast<FunctionNode*>(obj_)->name;
      return name.empty() ? "Function" : "Function(" + name + ")";
    }
    case ValueKind::kModule: return "Module(" + static_cast<ModuleNode*>(obj_)->kind() + ")";
    case ValueKind::kArray: return str_cat("array(", static_cast<ArrayNode*>(obj_)->items.size(), " items)");
    case ValueKind::kObject: return std::string(obj_->type_key());
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, const Value& v) { return os << v.to_string(); }

}  // namespace anvil
