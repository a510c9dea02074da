// Builtins whose result shape depends on tensor values (what vm_codegen emits for the graph ops
// nonzero, dynamic_slice and unique): they run on the host and allocate their result; the bytecode then
// binds the result's fresh symbolic dims from its shape (match_shape), so later kernels size by them.
#include <algorithm>
#include <cstring>
#include <map>

#include "anvil/runtime/registry.h"
#include "anvil/runtime/vm/builtins/builtins.h"

namespace anvil::vm {
namespace {

constexpr const char* kNonZero = "vm.builtin.nonzero";
constexpr const char* kDynamicSlice = "vm.builtin.dynamic_slice";
constexpr const char* kUnique = "vm.builtin.unique";

// A compact host copy (kernels and these loops read row-major bytes).
Tensor on_host(Tensor t) {
  if (t.device().type != kDLCPU || !t.is_contiguous()) t = t.copy_to(Device::cpu());
  return t;
}

// Whether one element (`bytes` little-endian bytes) is non-zero. Floats: any bit but the sign's
// (-0.0 is zero; NaN is not); in the fnuz float8 formats the sign bit alone is their NaN.
bool element_nonzero(const uint8_t* p, size_t bytes, bool floating, bool fnuz) {
  for (size_t i = 0; i + 1 < bytes; ++i)
    if (p[i] != 0) return true;
  uint8_t top = p[bytes - 1];
  if (floating && !fnuz) top &= 0x7f;
  return top != 0;
}

// nonzero(x) -> Tensor[(max(rank, 1), n), int64]: the indices of x's non-zero elements in
// row-major order, one row per axis (ONNX NonZero; a 0-d x is treated as shape (1,)).
Value nonzero(Args args) {
  check_num_args(kNonZero, args, 1, "x");
  Tensor x = on_host(tensor_arg(kNonZero, args, 0, "x"));
  DataType dtype = x.dtype();
  size_t bytes = dtype.bytes();
  if (bytes == 0) type_error(kNonZero, ": argument 0 (x): elements of ", dtype.to_string(), " have no bytes to test");
  bool floating = dtype.is_float();
  bool fnuz = dtype.to_string().find("fnuz") != std::string::npos;
  std::vector<int64_t> shape = x.shape();
  if (shape.empty()) shape.push_back(1);
  const auto rank = static_cast<int64_t>(shape.size());
  const auto* data = static_cast<const uint8_t*>(x.data());
  std::vector<int64_t> hits;  // linear indices
  for (int64_t i = 0; i < x.numel(); ++i)
    if (element_nonzero(data + static_cast<size_t>(i) * bytes, bytes, floating, fnuz)) hits.push_back(i);
  const auto n = static_cast<int64_t>(hits.size());
  Tensor out = Tensor::empty({rank, n}, DataType::int64());
  auto* o = static_cast<int64_t*>(out.data());
  for (int64_t k = 0; k < n; ++k) {
    int64_t rest = hits[static_cast<size_t>(k)];
    for (int64_t d = rank - 1; d >= 0; --d) {
      o[d * n + k] = rest % shape[static_cast<size_t>(d)];
      rest /= shape[static_cast<size_t>(d)];
    }
  }
  return Value(out);
}

// The elements of a 1-d integer tensor, on the host.
std::vector<int64_t> int_values(std::string_view builtin, Args args, size_t index, std::string_view name) {
  Tensor t = on_host(tensor_arg(builtin, args, index, name));
  DataType dtype = t.dtype();
  if (!dtype.is_int() || (dtype.bytes() != 8 && dtype.bytes() != 4) || t.shape().size() > 1)
    type_error(builtin, ": argument ", index, " (", name, "): expected a 1-d int32 or int64 tensor but got ", t.to_string());
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = dtype.bytes() == 8 ? static_cast<const int64_t*>(t.data())[i] : static_cast<const int32_t*>(t.data())[i];
  return v;
}

// dynamic_slice(x, starts, ends, steps, axes: Shape or 1-d int tensor, negatives from the end)
// -> x[starts:ends:steps] along axes, the
// starts/ends/steps read at run time and clamped as ONNX Slice says: negatives count from the
// end; then starts in [0, d] ([0, d - 1] for a negative step), ends in [0, d] ([-1, d - 1]).
Value dynamic_slice(Args args) {
  check_num_args(kDynamicSlice, args, 5, "x, starts, ends, steps, axes");
  Tensor x = on_host(tensor_arg(kDynamicSlice, args, 0, "x"));
  std::vector<int64_t> starts = int_values(kDynamicSlice, args, 1, "starts");
  std::vector<int64_t> ends = int_values(kDynamicSlice, args, 2, "ends");
  std::vector<int64_t> steps = int_values(kDynamicSlice, args, 3, "steps");
  std::vector<int64_t> axes = args.size() > 4 && args[4].kind() == ValueKind::kTensor
                                  ? int_values(kDynamicSlice, args, 4, "axes")
                                  : shape_arg(kDynamicSlice, args, 4, "axes");
  if (starts.size() != axes.size() || ends.size() != axes.size() || steps.size() != axes.size())
    value_error(kDynamicSlice, ": starts, ends and steps have ", starts.size(), ", ", ends.size(), " and ", steps.size(),
                " values for ", axes.size(), " axes");
  const std::vector<int64_t>& in_shape = x.shape();
  const size_t rank = in_shape.size();
  std::vector<int64_t> begin(rank, 0), step(rank, 1), shape = in_shape;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t given = axes[i];
    if (axes[i] < 0) axes[i] += static_cast<int64_t>(rank);
    if (axes[i] < 0 || static_cast<size_t>(axes[i]) >= rank)
      value_error(kDynamicSlice, ": axis ", given, " is out of range for ", x.to_string());
    if (seen[static_cast<size_t>(axes[i])]) value_error(kDynamicSlice, ": axis ", given, " is repeated");
    seen[static_cast<size_t>(axes[i])] = true;
    const auto a = static_cast<size_t>(axes[i]);
    const int64_t d = in_shape[a], s = steps[i];
    if (s == 0) value_error(kDynamicSlice, ": the step of axis ", axes[i], " is 0");
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += d;
    if (e < 0) e += d;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, d), e = std::clamp<int64_t>(e, 0, d);
      shape[a] = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1), e = std::clamp<int64_t>(e, -1, d - 1);
      shape[a] = b > e ? (b - e - s - 1) / -s : 0;
    }
    begin[a] = b, step[a] = s;
  }
  Tensor out = Tensor::empty(shape, x.dtype());
  const size_t bytes = x.dtype().bytes();
  if (out.numel() == 0 || bytes == 0) return Value(out);
  std::vector<int64_t> stride(rank, 1);  // of x, in elements
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * in_shape[d];
  const auto* src = static_cast<const char*>(x.data());
  auto* dst = static_cast<char*>(out.data());
  if (rank == 0) {
    std::memcpy(dst, src, bytes);
    return Value(out);
  }
  // Rows along the last axis, an odometer over the others.
  const size_t last = rank - 1;
  std::vector<int64_t> idx(rank, 0);
  const int64_t rows = out.numel() / shape[last];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t off = begin[last];
    for (size_t d = 0; d < last; ++d) off += (begin[d] + idx[d] * step[d]) * stride[d];
    if (step[last] == 1) {
      std::memcpy(dst, src + off * static_cast<int64_t>(bytes), static_cast<size_t>(shape[last]) * bytes);
      dst += shape[last] * static_cast<int64_t>(bytes);
    } else {
      for (int64_t j = 0; j < shape[last]; ++j, dst += bytes)
        std::memcpy(dst, src + (off + j * step[last]) * static_cast<int64_t>(bytes), bytes);
    }
    for (size_t d = last; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return Value(out);
}

// One element as a long double (exact for every int64 and double), for ordering; nullopt for
// dtypes Unique does not compare.
std::optional<long double> element_value(const char* p, DataType d) {
  if (d == DataType::float32()) return *reinterpret_cast<const float*>(p);
  if (d == DataType::float64()) return *reinterpret_cast<const double*>(p);
  if (d.is_bool()) return *reinterpret_cast<const uint8_t*>(p) != 0 ? 1 : 0;
  if (d.is_int() && d.bits() >= 8) {
    int64_t v = 0;
    switch (d.bytes()) {
      case 1: v = *reinterpret_cast<const int8_t*>(p); break;
      case 2: v = *reinterpret_cast<const int16_t*>(p); break;
      case 4: v = *reinterpret_cast<const int32_t*>(p); break;
      default: v = *reinterpret_cast<const int64_t*>(p); break;
    }
    return static_cast<long double>(v);
  }
  if (d.is_uint() && d.bits() >= 8) {
    uint64_t v = 0;
    switch (d.bytes()) {
      case 1: v = *reinterpret_cast<const uint8_t*>(p); break;
      case 2: v = *reinterpret_cast<const uint16_t*>(p); break;
      case 4: v = *reinterpret_cast<const uint32_t*>(p); break;
      default: v = *reinterpret_cast<const uint64_t*>(p); break;
    }
    return static_cast<long double>(v);
  }
  return std::nullopt;
}

Tensor int64_vector(const std::vector<int64_t>& v) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, DataType::int64());
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

// unique(x, sorted, axis) -> (Y, indices, inverse_indices, counts), ONNX Unique: the distinct
// elements of x flattened (axis -1) or its distinct slices along axis, ascending (sorted, slices
// lexicographically in row-major order as numpy.unique) or in order of first occurrence;
// indices: each one's first position; inverse_indices: each position's entry in Y.
Value unique(Args args) {
  check_num_args(kUnique, args, 3, "x, sorted, axis");
  Tensor x = on_host(tensor_arg(kUnique, args, 0, "x"));
  bool sorted = int_arg(kUnique, args, 1, "sorted") != 0;
  int64_t axis = int_arg(kUnique, args, 2, "axis");
  const DataType dtype = x.dtype();
  const size_t bytes = dtype.bytes();
  if (!element_value(static_cast<const char*>(x.data()), dtype) && x.numel() > 0)
    type_error(kUnique, ": argument 0 (x): elements of ", dtype.to_string(), " are not compared (float32/64, integers, bool)");
  const std::vector<int64_t>& shape = x.shape();
  if (axis < -1 || axis >= static_cast<int64_t>(shape.size()))
    value_error(kUnique, ": axis ", axis, " is out of range for ", x.to_string());
  int64_t outer = 1, n = x.numel(), inner = 1;
  if (axis >= 0) {
    n = shape[static_cast<size_t>(axis)];
    for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  }
  const auto* src = static_cast<const char*>(x.data());
  auto at = [&](int64_t o, int64_t k, int64_t i) { return src + static_cast<size_t>((o * n + k) * inner + i) * bytes; };
  // Slice k's key: its elements in row-major order (outer, inner).
  std::map<std::vector<long double>, int64_t> seen;  // key -> its number in first-occurrence order
  std::vector<int64_t> firsts, counts, inverse_first(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    std::vector<long double> key;
    key.reserve(static_cast<size_t>(outer * inner));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) key.push_back(*element_value(at(o, k, i), dtype));
    auto [it, fresh] = seen.emplace(std::move(key), static_cast<int64_t>(firsts.size()));
    if (fresh) firsts.push_back(k), counts.push_back(0);
    ++counts[static_cast<size_t>(it->second)];
    inverse_first[static_cast<size_t>(k)] = it->second;
  }
  const auto u = static_cast<int64_t>(firsts.size());
  std::vector<int64_t> position(static_cast<size_t>(u));  // first-occurrence number -> place in Y
  if (sorted) {
    int64_t p = 0;
    for (const auto& [key, number] : seen) position[static_cast<size_t>(number)] = p++;
  } else {
    for (int64_t j = 0; j < u; ++j) position[static_cast<size_t>(j)] = j;
  }
  std::vector<int64_t> indices(static_cast<size_t>(u)), out_counts(static_cast<size_t>(u)), inverse(static_cast<size_t>(n));
  for (int64_t j = 0; j < u; ++j) {
    indices[static_cast<size_t>(position[static_cast<size_t>(j)])] = firsts[static_cast<size_t>(j)];
    out_counts[static_cast<size_t>(position[static_cast<size_t>(j)])] = counts[static_cast<size_t>(j)];
  }
  for (int64_t k = 0; k < n; ++k) inverse[static_cast<size_t>(k)] = position[static_cast<size_t>(inverse_first[static_cast<size_t>(k)])];
  std::vector<int64_t> y_shape{u};
  if (axis >= 0) {
    y_shape = shape;
    y_shape[static_cast<size_t>(axis)] = u;
  }
  Tensor y = Tensor::empty(y_shape, dtype);
  auto* dst = static_cast<char*>(y.data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < u; ++j, dst += static_cast<size_t>(inner) * bytes)
      if (inner > 0) std::memcpy(dst, at(o, indices[static_cast<size_t>(j)], 0), static_cast<size_t>(inner) * bytes);
  return Value(std::vector<Value>{Value(y), Value(int64_vector(indices)), Value(int64_vector(inverse)),
                                  Value(int64_vector(out_counts))});
}

}  // namespace

void register_data_dependent_builtins() {
  register_packed(kUnique, unique);
  register_packed(kNonZero, nonzero);
  register_packed(kDynamicSlice, dynamic_slice);
}

}  // namespace anvil::vm
