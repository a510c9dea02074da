// Converters of GatherElements, Trilu, OneHot, DepthToSpace and SpaceToDepth, and the helpers
// the transform family's converter files share (convert_transform_util.h).
#include <cstring>

#include "anvil/frontend/onnx/convert_transform_util.h"

namespace anvil::frontend::onnx {

Tensor int_tensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& values, DataType dtype) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), dtype);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DataType::int64()) static_cast<int64_t*>(t.data())[i] = values[i];
    else if (dtype == DataType::int32()) static_cast<int32_t*>(t.data())[i] = static_cast<int32_t>(values[i]);
    else if (dtype == DataType::int8()) static_cast<int8_t*>(t.data())[i] = static_cast<int8_t>(values[i]);
    else if (dtype == DataType::uint8()) static_cast<uint8_t*>(t.data())[i] = static_cast<uint8_t>(values[i]);
    else value_error("int_tensor: dtype ", dtype, ", expected int64, int32, int8 or uint8");
  }
  return t;
}

Tensor float_tensor(const std::vector<int64_t>& shape, const std::vector<double>& values) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  for (size_t i = 0; i < values.size(); ++i) static_cast<float*>(t.data())[i] = static_cast<float>(values[i]);
  return t;
}

double tensor_element(const Tensor& t, int64_t i) {
  const void* p = t.data();
  DataType d = t.dtype();
  if (d == DataType::float32()) return static_cast<const float*>(p)[i];
  if (d == DataType::float64()) return static_cast<const double*>(p)[i];
  if (d == DataType::int64()) return static_cast<double>(static_cast<const int64_t*>(p)[i]);
  if (d == DataType::int32()) return static_cast<const int32_t*>(p)[i];
  if (d == DataType::int16()) return static_cast<const int16_t*>(p)[i];
  if (d == DataType::int8()) return static_cast<const int8_t*>(p)[i];
  if (d == DataType::uint8()) return static_cast<const uint8_t*>(p)[i];
  if (d == DataType::uint16()) return static_cast<const uint16_t*>(p)[i];
  if (d == DataType::uint32()) return static_cast<const uint32_t*>(p)[i];
  if (d == DataType::boolean()) return static_cast<const uint8_t*>(p)[i] != 0;
  not_implemented_error("reading an element of a ", d, " tensor at import");
}

std::vector<int64_t> tensor_ints(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype() == DataType::int64()) out.push_back(static_cast<const int64_t*>(t.data())[i]);
    else out.push_back(static_cast<int64_t>(tensor_element(t, i)));
  }
  return out;
}

Expr known_result(ImportContext& ctx, int out, const Values& values, const std::vector<int64_t>& shape, DataType dtype) {
  ctx.set_known_values(out, values);
  std::vector<int64_t> ints;
  for (const PrimExpr& v : values) {
    std::optional<int64_t> c = ir::as_const_int(v);
    if (!c) return Expr();
    ints.push_back(*c);
  }
  return ctx.constant(int_tensor(shape, ints, dtype));
}

std::optional<Values> known_1d(ImportContext& ctx, int i) {
  std::optional<Values> v = ctx.known_values(i);
  if (!v) return std::nullopt;
  if (std::optional<Tensor> c = ctx.constant_input(i); c && c->shape().size() != 1) return std::nullopt;
  return v;
}

DataType known_dtype(ImportContext& ctx, int i) {
  std::optional<Tensor> c = ctx.constant_input(i);
  return c && (c->dtype() == DataType::int32() || c->dtype() == DataType::int64()) ? c->dtype() : DataType::int64();
}

namespace {

std::vector<Expr> convert_gather_elements(ImportContext& ctx) {
  return {ctx.emit("gather_elements", {ctx.input(0), ctx.input(1)}, {{"axis", ctx.attr_int("axis", 0)}})};
}

std::vector<Expr> convert_trilu(ImportContext& ctx) {
  int64_t k = 0;
  if (ctx.has_input(1)) {
    std::optional<Tensor> t = ctx.constant_input(1);
    if (!t) ctx.unsupported("Trilu with k not known at import");
    k = static_cast<int64_t>(tensor_element(*t, 0));
  }
  return {ctx.emit("trilu", {ctx.input(0)}, {{"k", k}, {"upper", ctx.attr_int("upper", 1)}})};
}

std::vector<Expr> convert_one_hot(ImportContext& ctx) {
  std::optional<Tensor> depth = ctx.constant_input(1);
  if (!depth) ctx.unsupported("OneHot with depth not known at import");
  int64_t d = static_cast<int64_t>(tensor_element(*depth, 0));
  return {ctx.emit("one_hot", {ctx.input(0), ctx.input(2)}, {{"depth", d}, {"axis", ctx.attr_int("axis", -1)}})};
}

std::vector<Expr> convert_depth_to_space(ImportContext& ctx) {
  return {ctx.emit("depth_to_space", {ctx.input(0)},
                   {{"blocksize", ctx.attr_int("blocksize")}, {"mode", ctx.attr_string("mode", "DCR")}})};
}

std::vector<Expr> convert_space_to_depth(ImportContext& ctx) {
  return {ctx.emit("space_to_depth", {ctx.input(0)}, {{"blocksize", ctx.attr_int("blocksize")}})};
}

}  // namespace

void register_misc_transform_converters() {
  register_converter("GatherElements", convert_gather_elements);
  register_converter("Trilu", convert_trilu);
  register_converter("OneHot", convert_one_hot);
  register_converter("DepthToSpace", convert_depth_to_space);
  register_converter("SpaceToDepth", convert_space_to_depth);
}

}  // namespace anvil::frontend::onnx
