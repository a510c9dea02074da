// ONNX Dropout. Inference (opsets 7-11, or training_mode absent / a constant false): the input,
// and an all-true mask when the mask output is declared. Training mode (opset 12: training_mode
// true, a constant or a graph input): y = x * keep / (1 - ratio), mask = keep, where keep is
// u >= ratio for u uniform in [0, 1) drawn per element at import; training_mode as a graph input
// selects between the two at run time with where.
//
// The uniform numbers are those of onnx's reference implementation (numpy's RandomState(seed)
// .uniform(0, 1, x.shape)): MT19937 seeded with `seed` (init_genrand, which std::mt19937 also
// uses) and 53-bit doubles made of two 32-bit draws, (a >> 5) * 2^26 + (b >> 6), over 2^53.
// Without a seed attribute the seed comes from std::random_device. Either way the mask is fixed
// for the compiled model (drawn once, at import), so x's shape must be static in training mode.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/ir/expr.h"

namespace anvil::frontend::onnx {
namespace {

using graph::Expr;

// numpy's legacy RandomState(seed).uniform(0, 1, n) (random_standard_uniform of MT19937).
std::vector<double> numpy_uniform(uint32_t seed, int64_t n) {
  std::mt19937 gen(seed);
  std::vector<double> u(static_cast<size_t>(n));
  for (double& v : u) {
    const uint32_t a = static_cast<uint32_t>(gen()) >> 5, b = static_cast<uint32_t>(gen()) >> 6;
    v = (a * 67108864.0 + b) / 9007199254740992.0;
  }
  return u;
}

Tensor bool_tensor(std::span<const int64_t> shape, bool value) {
  Tensor t = Tensor::empty(shape, DataType::boolean());
  std::memset(t.data(), value ? 1 : 0, t.nbytes());
  return t;
}

Expr float_scalar(ImportContext& ctx, DataType dtype, double v) {
  Tensor t = Tensor::empty(std::span<const int64_t>(), DataType::float64());
  *static_cast<double*>(t.data()) = v;
  Expr c = ctx.constant(t);
  return dtype == DataType::float64() ? c : ctx.emit("cast", {c}, {{"dtype", dtype}});
}

// The single element of a constant float/bool tensor as a double.
double constant_scalar(ImportContext& ctx, const Tensor& t, const char* what) {
  if (t.numel() != 1) ctx.bad_model(str_cat(what, " has ", t.numel(), " elements, expected 1"));
  const void* p = t.data();
  DataType d = t.dtype();
  if (d == DataType::boolean()) return *static_cast<const uint8_t*>(p) != 0 ? 1.0 : 0.0;
  if (d == DataType::float32()) return *static_cast<const float*>(p);
  if (d == DataType::float64()) return *static_cast<const double*>(p);
  if (d == DataType::float16()) {
    uint16_t h = *static_cast<const uint16_t*>(p);
    // float16 -> double by its fields (no half type in C++20).
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
  }
  ctx.unsupported(str_cat(what, " of dtype ", d));
  return 0;  // unreachable (gcc does not see [[noreturn]] through the virtual call)
}

// x and its all-true mask (inference).
std::vector<Expr> identity(ImportContext& ctx, const Expr& x) {
  if (ctx.num_outputs() < 2) return {x};
  if (auto s = x.type().static_shape()) return {x, ctx.constant(bool_tensor(*s, true))};
  Expr nan = ctx.emit("isnan", {x});  // isnan(x) or not isnan(x): true, of x's symbolic shape
  return {x, ctx.emit("logical_or", {nan, ctx.emit("logical_not", {nan})})};
}

std::vector<Expr> convert_dropout(ImportContext& ctx) {
  Expr x = ctx.input(0);
  if (ctx.opset() < 12 || !ctx.has_input(2)) return identity(ctx, x);
  Expr training;  // defined when training_mode is known only at run time
  if (std::optional<Tensor> t = ctx.constant_input(2)) {
    if (constant_scalar(ctx, *t, "training_mode") == 0) return identity(ctx, x);
  } else {
    training = ctx.input(2);
    if (training.type().dtype() != DataType::boolean()) ctx.bad_model("training_mode must be a bool tensor");
  }
  double ratio = 0.5;
  Expr ratio_expr;  // defined when the ratio is known only at run time
  if (ctx.has_input(1)) {
    if (std::optional<Tensor> r = ctx.constant_input(1)) ratio = constant_scalar(ctx, *r, "ratio");
    else ratio_expr = ctx.input(1);
  }
  const bool ratio_known = !ratio_expr.defined();
  if (ratio_known && (ratio < 0 || ratio > 1)) ctx.bad_model(str_cat("ratio is ", ratio, ", expected in [0, 1]"));
  if (ratio_known && ratio == 0 && !training.defined()) return identity(ctx, x);
  std::optional<std::vector<int64_t>> shape = x.type().static_shape();
  if (!shape) ctx.unsupported("Dropout in training mode on a symbolic shape (the mask is drawn at import)");
  int64_t n = 1;
  for (int64_t d : *shape) n *= d;
  uint32_t seed = ctx.has_attr("seed") ? static_cast<uint32_t>(ctx.attr_int("seed")) : std::random_device{}();
  std::vector<double> u = numpy_uniform(seed, n);
  const DataType xd = x.type().dtype();
  Expr keep, scale;
  if (ratio_known) {
    Tensor k = Tensor::empty(std::span<const int64_t>(*shape), DataType::boolean());
    for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(k.data())[i] = u[static_cast<size_t>(i)] >= ratio ? 1 : 0;
    keep = ctx.constant(k);
    scale = float_scalar(ctx, xd, 1.0 / (1.0 - ratio));
  } else {
    // u >= ratio in float64, as the reference compares its doubles with the ratio.
    Tensor ut = Tensor::empty(std::span<const int64_t>(*shape), DataType::float64());
    std::memcpy(ut.data(), u.data(), u.size() * sizeof(double));
    keep = ctx.emit("greater_equal", {ctx.constant(ut), ctx.emit("cast", {ratio_expr}, {{"dtype", DataType::float64()}})});
    Expr r = ratio_expr.type().dtype() == xd ? ratio_expr : ctx.emit("cast", {ratio_expr}, {{"dtype", xd}});
    Expr one = float_scalar(ctx, xd, 1.0);
    scale = ctx.emit("divide", {one, ctx.emit("subtract", {one, r})});
  }
  // where, not a multiply by the mask: a ratio of 1 makes the scale infinite.
  Expr y = ctx.emit("where", {keep, ctx.emit("multiply", {x, scale}), float_scalar(ctx, xd, 0.0)});
  Expr mask = keep;
  if (training.defined()) {
    y = ctx.emit("where", {training, y, x});
    mask = ctx.emit("logical_or", {keep, ctx.emit("logical_not", {training})});
  }
  if (ctx.num_outputs() < 2) return {y};
  return {y, mask};
}

}  // namespace

void register_dropout_converter() { register_converter("Dropout", convert_dropout); }

}  // namespace anvil::frontend::onnx
