// ONNX converters of the reduce family (graph/ops/reduce.cc): ReduceSum/Mean/Max/Min/Prod and
// the composed ReduceL1/L2/SumSquare/LogSum/LogSumExp, ArgMax/ArgMin, CumSum, TopK.
// Reduce* take their axes as an attribute before opset 18 (ReduceSum: 13) and as an optional
// input after, where noop_with_empty_axes=1 with no axes makes the node an identity. An axes
// input known only at run time (as CumSum's axis) imports the node once per set of axes it may
// hold, chosen at run time (specialize.h). ReduceLogSumExp is log(sum(exp(x - max))) + max, the max
// taken with keepdims for the subtraction. ReduceMax/Min of bool reduce 0/1 bytes.
#include "anvil/base/error.h"
#include "anvil/frontend/onnx/convert_data_dependent.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/frontend/onnx/specialize.h"
#include "anvil/graph/attrs.h"

namespace anvil::frontend::onnx {
namespace {

using graph::AttrValue;
using graph::Attrs;
using graph::Expr;

struct AxesSpec {
  std::vector<int64_t> axes;  // empty: all
  bool identity = false;      // noop_with_empty_axes with no axes
};

AxesSpec axes_of(ImportContext& ctx, int input_opset) {
  AxesSpec s;
  if (ctx.opset() < input_opset) {
    s.axes = ctx.attr_ints("axes", std::vector<int64_t>{});
    return s;
  }
  if (ctx.has_input(1)) s.axes = ctx.const_ints(1, "axes");
  if (s.axes.empty() && ctx.attr_int("noop_with_empty_axes", 0) != 0) s.identity = true;
  return s;
}

Attrs reduce_attrs(const AxesSpec& s, bool keepdims) {
  Attrs a{{"keepdims", keepdims ? 1 : 0}};
  if (!s.axes.empty()) a["axes"] = AttrValue::ints(s.axes);
  return a;
}

// The converter, taking axes known only at run time (input 1 from `input_opset` on) too: once per
// set of axes of the data's rank they may hold (the converter's static path each).
Converter with_runtime_axes(int input_opset, Converter convert) {
  return [input_opset, convert](ImportContext& ctx) -> std::vector<Expr> {
    if (ctx.opset() < input_opset || !ctx.has_input(1) || has_known_ints(ctx, 1)) return convert(ctx);
    const graph::Type& x = ctx.input(0).type();
    if (!x.is_tensor() || !x.has_rank()) ctx.unsupported("axes known only at run time need data of known rank");
    return specialize_on_axes(ctx, 1, x.ndim(), nullptr, convert);
  };
}

// pre(x) -> op over the axes -> post(result); identity nodes apply pre and post only.
using ExprFn = std::function<Expr(ImportContext&, const Expr&)>;

Expr none(ImportContext&, const Expr& e) { return e; }

Converter reduce(std::string op, int input_opset, ExprFn pre = none, ExprFn post = none) {
  return with_runtime_axes(input_opset, [=](ImportContext& ctx) -> std::vector<Expr> {
    AxesSpec s = axes_of(ctx, input_opset);
    bool keep = ctx.attr_int("keepdims", 1) != 0;
    Expr x = pre(ctx, ctx.input(0));
    if (s.identity) return {post(ctx, x)};
    // ReduceMax/Min of bool (opset 20): any/all, as the max/min of 0/1 bytes (an empty set
    // gives uint8's 0 / 255: false / true, the identities of any and all).
    if ((op == "max" || op == "min") && x.type().dtype() == DataType::boolean()) {
      Expr u = ctx.emit("cast", {x}, {{"dtype", DataType::uint8()}});
      Expr r = ctx.emit(op, {u}, reduce_attrs(s, keep));
      return {post(ctx, ctx.emit("cast", {r}, {{"dtype", DataType::boolean()}}))};
    }
    return {post(ctx, ctx.emit(op, {x}, reduce_attrs(s, keep)))};
  });
}

std::vector<Expr> convert_log_sum_exp(ImportContext& ctx) {
  AxesSpec s = axes_of(ctx, 18);
  bool keep = ctx.attr_int("keepdims", 1) != 0;
  Expr x = ctx.input(0);
  if (s.identity) return {x};  // log(exp(x))
  Expr m = ctx.emit("max", {x}, reduce_attrs(s, true));
  Expr e = ctx.emit("exp", {ctx.emit("subtract", {x, m})});
  Expr l = ctx.emit("log", {ctx.emit("sum", {e}, reduce_attrs(s, keep))});
  Expr mo = keep ? m : ctx.emit("max", {x}, reduce_attrs(s, false));
  return {ctx.emit("add", {l, mo})};
}

Converter arg_reduce(std::string op) {
  return [op](ImportContext& ctx) -> std::vector<Expr> {
    return {ctx.emit(op, {ctx.input(0)},
                     {{"axis", ctx.attr_int("axis", 0)},
                      {"keepdims", ctx.attr_int("keepdims", 1)},
                      {"select_last_index", ctx.attr_int("select_last_index", 0)}})};
  };
}

std::vector<Expr> convert_cumsum(ImportContext& ctx) {
  std::vector<int64_t> axis = ctx.const_ints(1, "axis");
  if (axis.size() != 1) ctx.bad_model(str_cat("axis has ", axis.size(), " elements, expected 1"));
  return {ctx.emit("cumsum", {ctx.input(0)},
                   {{"axis", axis[0]}, {"exclusive", ctx.attr_int("exclusive", 0)}, {"reverse", ctx.attr_int("reverse", 0)}})};
}

// CumSum over an axis known only at run time: once per axis of the data.
std::vector<Expr> convert_cumsum_any_axis(ImportContext& ctx) {
  if (has_known_ints(ctx, 1)) return convert_cumsum(ctx);
  const graph::Type& x = ctx.input(0).type();
  if (!x.is_tensor() || !x.has_rank()) ctx.unsupported("an axis known only at run time needs data of known rank");
  return specialize_on_axes(ctx, 1, x.ndim(), nullptr, convert_cumsum);
}

std::vector<Expr> convert_topk(ImportContext& ctx) {
  graph::Attrs attrs = {{"axis", ctx.attr_int("axis", -1)}, {"largest", ctx.attr_int("largest", 1)},
                        {"sorted", ctx.attr_int("sorted", 1)}};
  Expr t;
  if (ctx.opset() >= 10 && !ctx.constant_input(1)) {
    // K known only at run time: the outputs' axis is its fresh Var, the kernel reads it as a scalar.
    t = ctx.emit("topk", {ctx.input(0), values_at_run_time(ctx, 1, "K")}, attrs);
  } else {
    int64_t k = 0;
    if (ctx.opset() < 10) {
      k = ctx.attr_int("k");
    } else {
      std::vector<int64_t> ks = ctx.const_ints(1, "K");
      if (ks.size() != 1) ctx.bad_model(str_cat("K has ", ks.size(), " elements, expected 1"));
      k = ks[0];
    }
    attrs["k"] = k;
    t = ctx.emit("topk", {ctx.input(0)}, attrs);
  }
  graph::BlockBuilder& b = ctx.builder();
  return {b.emit(graph::TupleGetItem::make(t, 0)), b.emit(graph::TupleGetItem::make(t, 1))};
}

Expr abs_of(ImportContext& ctx, const Expr& x) { return ctx.emit("abs", {x}); }
Expr square(ImportContext& ctx, const Expr& x) { return ctx.emit("multiply", {x, x}); }
Expr sqrt_of(ImportContext& ctx, const Expr& x) { return ctx.emit("sqrt", {x}); }
Expr log_of(ImportContext& ctx, const Expr& x) { return ctx.emit("log", {x}); }

}  // namespace

void register_reduce_converters() {
  register_converter("ReduceSum", reduce("sum", 13));
  register_converter("ReduceMean", reduce("mean", 18));
  register_converter("ReduceMax", reduce("max", 18));
  register_converter("ReduceMin", reduce("min", 18));
  register_converter("ReduceProd", reduce("prod", 18));
  register_converter("ReduceL1", reduce("sum", 18, abs_of));
  register_converter("ReduceL2", reduce("sum", 18, square, sqrt_of));
  register_converter("ReduceSumSquare", reduce("sum", 18, square));
  register_converter("ReduceLogSum", reduce("sum", 18, none, log_of));
  register_converter("ReduceLogSumExp", with_runtime_axes(18, convert_log_sum_exp));
  register_converter("ArgMax", arg_reduce("argmax"));
  register_converter("ArgMin", arg_reduce("argmin"));
  register_converter("CumSum", convert_cumsum_any_axis);
  register_converter("TopK", convert_topk);
}

}  // namespace anvil::frontend::onnx
