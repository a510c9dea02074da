// TVM's RPC test helpers (python/tvm/rpc/testing.py and src/runtime/rpc/testing.cc, spec §3.6),
// so that TVM's own RPC tests and ours can run against an Anvil server. Behaviour follows the
// Python originals; the errors they raise become RPCError on the client.
#include <cmath>

#include "anvil/base/python_repr.h"
#include "anvil/rpc/server_functions.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/tensor.h"

namespace anvil::rpc {
namespace {

// Python's str() for the scalar kinds the tests pass (strcat("abc", 11) -> "abc:11").
std::string python_str(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kString:
      return v.as_string();
    case ValueKind::kInt:
      return std::to_string(v.as_int());
    case ValueKind::kBool:
      return v.as_bool() ? "True" : "False";
    case ValueKind::kFloat:
      return python_float_repr(v.as_float());  // 0.1 -> "0.1", as Python prints it
    case ValueKind::kNull:
      return "None";
    default:
      return v.to_string();
  }
}

// x + y for ints, floats and strings, as Python adds them.
Value python_add(const Value& x, const Value& y) {
  if (x.kind() == ValueKind::kString && y.kind() == ValueKind::kString) return Value(x.as_string() + y.as_string());
  if (x.kind() == ValueKind::kFloat || y.kind() == ValueKind::kFloat) return Value(x.as_float() + y.as_float());
  return Value(x.as_int() + y.as_int());
}

double element_as_double(const Tensor& t, int64_t index) {
  if (t.device().type != kDLCPU) value_error("expected a CPU tensor, got one on ", t.device());
  if (index < 0) index += t.numel();
  if (index < 0 || index >= t.numel()) index_error("index ", index, " out of range for ", t.numel(), " elements");
  if (!t.is_contiguous()) value_error("expected a compact tensor");
  DataType dt = t.dtype();
  const char* p = static_cast<const char*>(t.data());
  if (dt == DataType::float32()) return static_cast<const float*>(static_cast<const void*>(p))[index];
  if (dt == DataType::float64()) return static_cast<const double*>(static_cast<const void*>(p))[index];
  if (dt == DataType::int32()) return static_cast<const int32_t*>(static_cast<const void*>(p))[index];
  if (dt == DataType::int64()) return static_cast<double>(static_cast<const int64_t*>(static_cast<const void*>(p))[index]);
  type_error("element access supports float32/float64/int32/int64, not ", dt);
}

void raise_kind(const std::string& kind, const std::string& message) {
  if (kind == "ValueError") value_error(message);
  if (kind == "TypeError") type_error(message);
  if (kind == "IndexError") index_error(message);
  if (kind == "NotImplementedError") not_implemented_error(message);
  if (kind == "IOError" || kind == "OSError") io_error(message);
  runtime_error(message);
}

}  // namespace

void register_test_functions() {
  const bool kOverride = true;
  register_packed("rpc.test.addone", [](Args args) -> Value {
    if (args.size() != 1) type_error("rpc.test.addone expects 1 argument");
    return python_add(args[0], Value(int64_t{1}));
  }, kOverride);
  register_packed("rpc.test.strcat", [](Args args) -> Value {
    if (args.size() != 2) type_error("rpc.test.strcat expects 2 arguments");
    return Value(python_str(args[0]) + ":" + python_str(args[1]));
  }, kOverride);
  register_packed("rpc.test.except", [](Args args) -> Value {
    if (args.size() != 1) type_error("rpc.test.except expects 1 argument");
    value_error(python_str(args[0]));
  }, kOverride);
  register_packed("rpc.test.runtime_str_concat", [](Args args) -> Value {
    if (args.size() != 2) type_error("rpc.test.runtime_str_concat expects 2 arguments");
    return Value(args[0].as_string() + args[1].as_string());
  }, kOverride);
  register_function("rpc.test.remote_tensor_func", [](Tensor y) {
    // Asserts y == numpy.ones((3, 4)) (float64), as the Python helper does.
    if (y.shape() != std::vector<int64_t>{3, 4} || !(y.dtype() == DataType::float64())) {
      value_error("remote_tensor_func: expected a float64 tensor of shape [3, 4], got ", y.to_string());
    }
    for (int64_t i = 0; i < 12; ++i) {
      if (element_as_double(y, i) != 1.0) value_error("remote_tensor_func: element ", i, " is not 1");
    }
  }, kOverride);
  register_packed("rpc.test.add_to_lhs", [](Args args) -> Value {
    if (args.size() != 1) type_error("rpc.test.add_to_lhs expects 1 argument");
    Value lhs = args[0];
    return Value(Function::from_packed([lhs](Args rhs) -> Value {
      if (rhs.size() != 1) type_error("add_to_lhs closure expects 1 argument");
      return python_add(lhs, rhs[0]);
    }, "rpc.test.add_to_lhs.closure"));
  }, kOverride);
  register_function("rpc.test.remote_return_nd", [](const std::string& name) {
    Tensor nd = Tensor::empty({10}, DataType::float32());
    std::vector<float> zeros(10, 0.f);
    nd.copy_from_bytes(zeros.data(), zeros.size() * sizeof(float));
    if (name == "get_arr") return Function::from_packed([nd](Args) -> Value { return Value(nd); });
    if (name == "ref_count") {
      return Function::from_packed([nd](Args) -> Value { return Value(int64_t{nd.node()->use_count()}); });
    }
    if (name == "get_elem") {
      return Function::from_typed([nd](int64_t idx) { return element_as_double(nd, idx); });
    }
    if (name == "get_arr_elem") {
      return Function::from_typed([](Tensor arr, int64_t idx) { return element_as_double(arr, idx); });
    }
    runtime_error("unknown name");
  }, kOverride);

  // From TVM's runtime (src/runtime/rpc/testing.cc) and tvm-ffi. TVM's echo returns its first
  // argument whatever follows (TVM's tests call echo(1, 2, 3)).
  register_packed("testing.echo", [](Args args) -> Value {
    if (args.empty()) type_error("testing.echo expects at least 1 argument");
    return args[0];
  }, kOverride);
  register_function("rpc.testing.GetShapeSize", [](std::vector<int64_t> shape) {
    return static_cast<int64_t>(shape.size());
  }, kOverride);
  register_function("rpc.testing.GetShapeElem", [](std::vector<int64_t> shape, int64_t idx) {
    if (idx < 0 || idx >= static_cast<int64_t>(shape.size())) index_error("GetShapeElem: index ", idx, " out of range");
    return shape[static_cast<size_t>(idx)];
  }, kOverride);
  register_packed("ffi.Shape", [](Args args) -> Value {
    std::vector<int64_t> dims;
    for (const Value& v : args) dims.push_back(v.as_int());
    return Value::shape(std::move(dims));
  }, kOverride);
  register_function("testing.test_raise_error", [](const std::string& kind, const std::string& message) {
    raise_kind(kind, message);
  }, kOverride);
  register_packed("rpc.test2.addone", [](Args args) -> Value {
    if (args.size() != 1) type_error("rpc.test2.addone expects 1 argument");
    return python_add(args[0], Value(int64_t{1}));
  }, kOverride);
}

}  // namespace anvil::rpc
