// Function: a type-erased, reference-counted callable taking a span of Values and returning a
// Value. from_typed() wraps an ordinary C++ callable, converting and checking each argument, so
// registering `int add(int, int)` is one statement and a bad call names the argument at fault.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "anvil/base/error.h"
#include "anvil/runtime/object.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/value.h"

namespace anvil {

using Args = std::span<const Value>;
using PackedBody = std::function<Value(Args)>;

class FunctionNode final : public Object {
 public:
  FunctionNode(std::string name, PackedBody body) : name(std::move(name)), body(std::move(body)) {}
  std::string_view type_key() const override { return "runtime.Function"; }
  const std::string name;  // for error messages; may be empty
  const PackedBody body;
};

// Converts a Value to a C++ parameter type, naming the function and argument on failure.
template <typename T, typename = void>
struct ValueCast;

class Function {
 public:
  Function() = default;
  explicit Function(Ref<FunctionNode> node) : node_(std::move(node)) {}

  static Function from_packed(PackedBody body, std::string name = "") {
    return Function(make_object<FunctionNode>(std::move(name), std::move(body)));
  }
  template <typename F>
  static Function from_typed(F fn, std::string name = "");

  bool defined() const { return static_cast<bool>(node_); }
  const std::string& name() const { return node_->name; }
  FunctionNode* node() const { return node_.get(); }

  Value call(Args args) const { return node_->body(args); }
  template <typename... Ts>
  Value operator()(Ts&&... args) const {
    Value packed[sizeof...(Ts) + 1] = {Value(std::forward<Ts>(args))...};
    return node_->body(Args(packed, sizeof...(Ts)));
  }

 private:
  Ref<FunctionNode> node_;
};

namespace detail {

[[noreturn]] void argument_error(const std::string& fn, size_t index, const Error& cause);
[[noreturn]] void arity_error(const std::string& fn, size_t expected, size_t got);

template <typename T>
struct FunctionTraits : FunctionTraits<decltype(&T::operator())> {};
template <typename R, typename... A>
struct FunctionTraits<R (*)(A...)> {
  using Return = R;
  using ArgsTuple = std::tuple<std::decay_t<A>...>;
};
template <typename R, typename... A>
struct FunctionTraits<R(A...)> : FunctionTraits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionTraits<R (C::*)(A...) const> : FunctionTraits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct FunctionTraits<R (C::*)(A...)> : FunctionTraits<R (*)(A...)> {};

template <typename T>
T cast_argument(const std::string& fn, Args args, size_t index) {
  try {
    return ValueCast<T>::from(args[index]);
  } catch (const Error& e) {
    argument_error(fn, index, e);
  }
}

template <typename F, typename Tuple, size_t... I>
Value invoke_typed(const F& fn, const std::string& name, Args args, std::index_sequence<I...>) {
  using R = typename FunctionTraits<F>::Return;
  if constexpr (std::is_void_v<R>) {
    fn(cast_argument<std::tuple_element_t<I, Tuple>>(name, args, I)...);
    return Value();
  } else {
    return Value(fn(cast_argument<std::tuple_element_t<I, Tuple>>(name, args, I)...));
  }
}

}  // namespace detail

template <typename F>
Function Function::from_typed(F fn, std::string name) {
  using Traits = detail::FunctionTraits<std::decay_t<F>>;
  using Tuple = typename Traits::ArgsTuple;
  constexpr size_t kArity = std::tuple_size_v<Tuple>;
  std::string label = name;
  return from_packed(
      [fn = std::move(fn), label](Args args) -> Value {
        if (args.size() != kArity) detail::arity_error(label, kArity, args.size());
        return detail::invoke_typed<F, Tuple>(fn, label, args, std::make_index_sequence<kArity>());
      },
      std::move(name));
}

// ValueCast specialisations for the parameter types typed functions may take.
template <typename T>
struct ValueCast<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static T from(const Value& v) { return static_cast<T>(v.as_int()); }
};
template <typename T>
struct ValueCast<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static T from(const Value& v) { return static_cast<T>(v.as_float()); }
};
template <>
struct ValueCast<bool> {
  static bool from(const Value& v) { return v.as_bool(); }
};
template <>
struct ValueCast<std::string> {
  static std::string from(const Value& v) { return v.as_string(); }
};
template <>
struct ValueCast<Device> {
  static Device from(const Value& v) { return v.as_device(); }
};
template <>
struct ValueCast<DataType> {
  static DataType from(const Value& v) { return v.as_dtype(); }
};
template <>
struct ValueCast<std::vector<int64_t>> {
  static std::vector<int64_t> from(const Value& v) { return v.as_shape(); }
};
template <>
struct ValueCast<Tensor> {
  static Tensor from(const Value& v) { return v.as_tensor(); }
};
template <>
struct ValueCast<Function> {
  static Function from(const Value& v) { return v.as_function(); }
};
template <>
struct ValueCast<Value> {
  static Value from(const Value& v) { return v; }
};

}  // namespace anvil
