// ONNX RNN, GRU and LSTM (opsets 7 .. 22), unrolled at import over a static sequence length:
//
//   X [T, B, I] (layout 1: [B, T, I]), W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H]
//   per direction: XW = X @ W^T + Wb (+ the recurrent biases that sit outside a product),
//   one matmul for all T steps; then per step t a small H_{t-1} @ R^T and the elementwise gate
//   math (fusion merges the elementwise parts). The reverse direction walks t = T-1 .. 0.
//
//   RNN  (G 1):        H = f(XW + H R^T)
//   GRU  (G 3, z r h): z = f(..), r = f(..), h = g(XW_h + (r * H) R_h^T + Rb_h), or with
//                      linear_before_reset g(XW_h + r * (H R_h^T + Rb_h)); H = (1 - z) h + z H
//   LSTM (G 4, i o f c, peepholes P [D, 3H] i o f): i = f(.. + Pi C), f = f(.. + Pf C)
//                      (input_forget: f = 1 - i), c = g(..), C = f C + i c,
//                      o = f(.. + Po C_new), H = o h(C)
//
// clip bounds every gate's pre-activation. sequence_lens [B]: at steps t >= len[b] the state
// of batch row b is kept and its Y row is 0, so Y_h / Y_c are the states at each row's last
// step (the reverse direction then starts at len[b] - 1, as the operator says); a row of length
// 0 has zero Y_h / Y_c, as in ONNX Runtime.
// Outputs: Y [T, D, B, H] (layout 1: [B, T, D, H]), Y_h and Y_c [D, B, H] (layout 1: [B, D, H]).
#include <algorithm>
#include <cctype>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"

namespace anvil::frontend::onnx {
namespace {

using graph::AttrValue;
using graph::Expr;
using ir::PrimExpr;

enum class Cell { kRnn, kGru, kLstm };

int num_gates(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }
int num_activations(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 2 : 3; }

// A 0-d constant v of a float dtype (float32 constant, cast for the others).
Expr float_scalar(ImportContext& ctx, DataType dtype, double v) {
  Tensor t = Tensor::empty({}, dtype == DataType::float64() ? dtype : DataType::float32());
  if (dtype == DataType::float64())
    *static_cast<double*>(t.data()) = v;
  else
    *static_cast<float*>(t.data()) = static_cast<float>(v);
  Expr c = ctx.constant(t);
  return t.dtype() == dtype ? c : ctx.emit("cast", {c}, {{"dtype", dtype}});
}

Expr transpose(ImportContext& ctx, const Expr& x, std::vector<int64_t> axes) {
  return ctx.emit("transpose", {x}, {{"axes", AttrValue::ints(std::move(axes))}});
}
Expr squeeze(ImportContext& ctx, const Expr& x, int64_t axis) {
  return ctx.emit("squeeze", {x}, {{"axes", AttrValue::ints({axis})}});
}
Expr unsqueeze(ImportContext& ctx, const Expr& x, std::vector<int64_t> axes) {
  return ctx.emit("expand_dims", {x}, {{"axes", AttrValue::ints(std::move(axes))}});
}
Expr add(ImportContext& ctx, const Expr& a, const Expr& b) { return ctx.emit("add", {a, b}); }
Expr mul(ImportContext& ctx, const Expr& a, const Expr& b) { return ctx.emit("multiply", {a, b}); }

// x split into n equal pieces along axis (static extent n * piece): slices, not one tuple-typed
// split, so that pieces of constant weights fold at compile time.
std::vector<Expr> split(ImportContext& ctx, const Expr& x, int64_t axis, int64_t n, int64_t piece) {
  if (n == 1) return {x};
  std::vector<Expr> out;
  for (int64_t k = 0; k < n; ++k)
    out.push_back(ctx.emit("strided_slice", {x},
                           {{"begin", AttrValue::ints({k * piece})},
                            {"end", AttrValue::ints({(k + 1) * piece})},
                            {"strides", AttrValue::ints({1})},
                            {"axes", AttrValue::ints({axis})}}));
  return out;
}

// The per-direction slices of a [D, ...] input (the leading axis removed).
std::vector<Expr> per_direction(ImportContext& ctx, const Expr& x, int64_t dirs) {
  std::vector<Expr> out;
  for (const Expr& e : split(ctx, x, 0, dirs, 1)) out.push_back(squeeze(ctx, e, 0));
  return out;
}

// An activation function with its alpha/beta (the ONNX operator of that name's defaults).
struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// activation_alpha / activation_beta are consumed in order by the activations that take them.
std::vector<Activation> activations(ImportContext& ctx, Cell cell, int64_t dirs) {
  std::vector<std::string> names;
  if (ctx.has_attr("activations")) {
    names = ctx.attr_strings("activations");
  } else {
    for (int64_t d = 0; d < dirs; ++d) {
      if (cell == Cell::kRnn) names.insert(names.end(), {"Tanh"});
      if (cell == Cell::kGru) names.insert(names.end(), {"Sigmoid", "Tanh"});
      if (cell == Cell::kLstm) names.insert(names.end(), {"Sigmoid", "Tanh", "Tanh"});
    }
  }
  const size_t per = static_cast<size_t>(num_activations(cell));
  if (names.size() == per && dirs == 2) names.insert(names.end(), names.begin(), names.end());  // shared
  if (names.size() != per * static_cast<size_t>(dirs))
    ctx.bad_model(str_cat("activations has ", names.size(), " entries, expected ", per * static_cast<size_t>(dirs)));
  std::vector<double> alphas = ctx.attr_floats("activation_alpha", std::vector<double>{});
  std::vector<double> betas = ctx.attr_floats("activation_beta", std::vector<double>{});
  size_t ai = 0, bi = 0;
  auto next = [](const std::vector<double>& v, size_t& i, double fallback) { return i < v.size() ? v[i++] : fallback; };
  std::vector<Activation> out;
  for (const std::string& n : names) {
    Activation a{lower(n)};
    if (a.name == "leakyrelu")
      a.alpha = next(alphas, ai, 0.01);
    else if (a.name == "thresholdedrelu" || a.name == "elu")
      a.alpha = next(alphas, ai, 1.0);
    else if (a.name == "hardsigmoid")
      a.alpha = next(alphas, ai, 0.2), a.beta = next(betas, bi, 0.5);
    else if (a.name == "affine" || a.name == "scaledtanh")
      a.alpha = next(alphas, ai, 1.0), a.beta = next(betas, bi, 0.0);
    else if (a.name != "relu" && a.name != "tanh" && a.name != "sigmoid" && a.name != "softsign" &&
             a.name != "softplus")
      ctx.unsupported(str_cat("activation '", n, "'"));
    out.push_back(a);
  }
  return out;
}

Expr activate(ImportContext& ctx, const Activation& a, const Expr& x) {
  const DataType t = x.type().dtype();
  if (a.name == "relu") return ctx.emit("relu", {x});
  if (a.name == "tanh") return ctx.emit("tanh", {x});
  if (a.name == "sigmoid") return ctx.emit("sigmoid", {x});
  if (a.name == "softsign") return ctx.emit("softsign", {x});
  if (a.name == "softplus") return ctx.emit("softplus", {x});
  if (a.name == "leakyrelu") return ctx.emit("leaky_relu", {x}, {{"alpha", a.alpha}});
  if (a.name == "thresholdedrelu") return ctx.emit("thresholded_relu", {x}, {{"alpha", a.alpha}});
  if (a.name == "elu") return ctx.emit("elu", {x}, {{"alpha", a.alpha}});
  if (a.name == "hardsigmoid") return ctx.emit("hard_sigmoid", {x}, {{"alpha", a.alpha}, {"beta", a.beta}});
  if (a.name == "affine") return add(ctx, mul(ctx, x, float_scalar(ctx, t, a.alpha)), float_scalar(ctx, t, a.beta));
  ANVIL_ICHECK(a.name == "scaledtanh", "activation ", a.name);
  Expr inner = ctx.emit("tanh", {mul(ctx, x, float_scalar(ctx, t, a.beta))});
  return mul(ctx, inner, float_scalar(ctx, t, a.alpha));
}

struct Recurrence {
  Cell cell = Cell::kRnn;
  int64_t hidden = 0, steps = 0;
  DataType dtype;
  std::optional<double> clip;
  bool input_forget = false, linear_before_reset = false;
  Expr valid;     // [T, B, 1] bool when sequence_lens is given and not all T
  Expr nonempty;  // [B, 1] bool with valid: len[b] > 0
};

// The pre-activation of a gate, clipped.
Expr gate(ImportContext& ctx, const Recurrence& rc, const Expr& pre, const Activation& f) {
  Expr x = pre;
  if (rc.clip) x = ctx.emit("clip", {x}, {{"min", -*rc.clip}, {"max", *rc.clip}});
  return activate(ctx, f, x);
}

struct DirectionOut {
  std::vector<Expr> y;  // per time index, [B, H] (zero at masked steps)
  Expr h, c;            // final states [B, H]
};

// One direction: w [G*H, I], r [G*H, H], b [2*G*H] or undefined, p [3H] or undefined,
// h / c initial states [B, H].
DirectionOut run_direction(ImportContext& ctx, const Recurrence& rc, const Expr& x, const Expr& w, const Expr& r,
                           const Expr& b, const Expr& p, Expr h, Expr c, const Activation* acts, bool reverse) {
  const int64_t g = num_gates(rc.cell), hs = rc.hidden;
  // [T * B, I] @ [I, G*H] as one 2-d product (the packed GEMM; a 3-d x takes the batched one).
  const std::vector<PrimExpr>& xs3 = x.type().shape();
  Expr x2 = ctx.emit("reshape", {x, graph::ShapeExpr::make({xs3[0] * xs3[1], xs3[2]})});
  Expr xw = ctx.emit("matmul", {x2, transpose(ctx, w, {1, 0})});
  Expr rt = transpose(ctx, r, {1, 0});  // [H, G*H]
  Expr rb_h;                            // GRU linear_before_reset: the h gate's recurrent bias stays inside r * (..)
  if (b.defined()) {
    std::vector<Expr> wb_rb = split(ctx, b, 0, 2, g * hs);
    Expr bias = wb_rb[0], rb = wb_rb[1];
    if (rc.cell == Cell::kGru && rc.linear_before_reset) {
      std::vector<Expr> parts = split(ctx, rb, 0, 3, hs);
      rb_h = parts[2];
      Expr zero = ctx.emit("full", {graph::ShapeExpr::make({ir::int_imm(hs)})}, {{"value", 0.0}, {"dtype", rc.dtype}});
      rb = ctx.emit("concat", {parts[0], parts[1], zero}, {{"axis", 0}});
    }
    xw = add(ctx, xw, add(ctx, bias, rb));
  }
  xw = ctx.emit("reshape", {xw, graph::ShapeExpr::make({xs3[0], xs3[1], ir::int_imm(g * hs)})});  // [T, B, G*H]
  Expr rt_zr, rt_h;  // GRU: the z r columns of R^T and the h ones
  if (rc.cell == Cell::kGru) {
    std::vector<Expr> parts = split(ctx, rt, 1, 3, hs);
    rt_zr = ctx.emit("concat", {parts[0], parts[1]}, {{"axis", 1}});
    rt_h = parts[2];
  }
  std::vector<Expr> pio;  // LSTM peepholes i o f, each [H]
  if (p.defined()) pio = split(ctx, p, 0, 3, hs);

  std::vector<Expr> xs, valid;
  for (const Expr& e : split(ctx, xw, 0, rc.steps, 1)) xs.push_back(squeeze(ctx, e, 0));
  if (rc.valid.defined())
    for (const Expr& e : split(ctx, rc.valid, 0, rc.steps, 1)) valid.push_back(squeeze(ctx, e, 0));
  Expr zeros;
  if (rc.valid.defined()) zeros = float_scalar(ctx, rc.dtype, 0.0);

  DirectionOut out;
  out.y.resize(static_cast<size_t>(rc.steps));
  for (int64_t k = 0; k < rc.steps; ++k) {
    const size_t t = static_cast<size_t>(reverse ? rc.steps - 1 - k : k);
    Expr h_new, c_new;
    if (rc.cell == Cell::kRnn) {
      h_new = gate(ctx, rc, add(ctx, xs[t], ctx.emit("matmul", {h, rt})), acts[0]);
    } else if (rc.cell == Cell::kGru) {
      std::vector<Expr> xg = split(ctx, xs[t], 1, 3, hs);
      std::vector<Expr> hzr = split(ctx, ctx.emit("matmul", {h, rt_zr}), 1, 2, hs);
      Expr z = gate(ctx, rc, add(ctx, xg[0], hzr[0]), acts[0]);
      Expr rr = gate(ctx, rc, add(ctx, xg[1], hzr[1]), acts[0]);
      Expr hh;
      if (rc.linear_before_reset) {
        Expr lin = ctx.emit("matmul", {h, rt_h});
        if (rb_h.defined()) lin = add(ctx, lin, rb_h);
        hh = mul(ctx, rr, lin);
      } else {
        hh = ctx.emit("matmul", {mul(ctx, rr, h), rt_h});
      }
      Expr cand = gate(ctx, rc, add(ctx, xg[2], hh), acts[1]);
      // (1 - z) * cand + z * h = cand + z * (h - cand)
      h_new = add(ctx, cand, mul(ctx, z, ctx.emit("subtract", {h, cand})));
    } else {
      std::vector<Expr> pre = split(ctx, add(ctx, xs[t], ctx.emit("matmul", {h, rt})), 1, 4, hs);  // i o f c
      Expr pi = pre[0], pf = pre[2];
      if (p.defined()) pi = add(ctx, pi, mul(ctx, pio[0], c)), pf = add(ctx, pf, mul(ctx, pio[2], c));
      Expr i = gate(ctx, rc, pi, acts[0]);
      Expr f =
          rc.input_forget ? ctx.emit("subtract", {float_scalar(ctx, rc.dtype, 1.0), i}) : gate(ctx, rc, pf, acts[0]);
      Expr cand = gate(ctx, rc, pre[3], acts[1]);
      c_new = add(ctx, mul(ctx, f, c), mul(ctx, i, cand));
      Expr po = pre[1];
      if (p.defined()) po = add(ctx, po, mul(ctx, pio[1], c_new));
      Expr o = gate(ctx, rc, po, acts[0]);
      h_new = mul(ctx, o, activate(ctx, acts[2], c_new));
    }
    if (rc.valid.defined()) {  // rows past their length keep their state and output 0
      out.y[t] = ctx.emit("where", {valid[t], h_new, zeros});
      h = ctx.emit("where", {valid[t], h_new, h});
      if (c_new.defined()) c = ctx.emit("where", {valid[t], c_new, c});
    } else {
      out.y[t] = h = h_new;
      if (c_new.defined()) c = c_new;
    }
  }
  if (rc.valid.defined()) {  // rows of length 0 end in zero states (ONNX Runtime), not the initial ones
    h = ctx.emit("where", {rc.nonempty, h, zeros});
    if (c.defined()) c = ctx.emit("where", {rc.nonempty, c, zeros});
  }
  out.h = h;
  out.c = c;
  return out;
}

std::vector<Expr> convert_recurrent(ImportContext& ctx, Cell cell) {
  const std::string op = cell == Cell::kRnn ? "RNN" : cell == Cell::kGru ? "GRU" : "LSTM";
  for (const std::string& a : ctx.attr_names()) {
    static const char* const known[] = {"activation_alpha",   "activation_beta", "activations", "clip",
                                        "direction",          "hidden_size",     "layout",      "input_forget",
                                        "linear_before_reset"};
    if (std::find(std::begin(known), std::end(known), a) == std::end(known))
      ctx.unsupported(str_cat("attribute '", a, "'"));
  }
  const int64_t layout = ctx.attr_int("layout", 0);
  if (layout != 0 && layout != 1) ctx.bad_model(str_cat("layout ", layout, " (expected 0 or 1)"));
  const std::string direction = ctx.attr_string("direction", std::string("forward"));
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    ctx.bad_model(str_cat("direction '", direction, "'"));
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;

  Expr x = ctx.input(0), w = ctx.input(1), r = ctx.input(2);
  const graph::Type& xt = x.type();
  if (!xt.is_tensor() || !xt.has_rank() || xt.ndim() != 3) ctx.bad_model("X must be a 3-d tensor");
  if (!xt.dtype().is_float()) ctx.unsupported(str_cat(op, " of ", xt.dtype()));
  if (layout == 1) x = transpose(ctx, x, {1, 0, 2});  // [T, B, I]
  Recurrence rc;
  rc.cell = cell;
  rc.dtype = xt.dtype();
  std::optional<int64_t> steps = ir::as_const_int(x.type().dim(0));
  if (!steps)
    ctx.unsupported(
        str_cat(op, " with a symbolic sequence length ", ir::to_string(x.type().dim(0)),
                " (the steps are unrolled at import: pin the dim with the input shapes, e.g. from_onnx's shape= or the "
                "CLI's --input-shapes)"));
  rc.steps = *steps;
  const PrimExpr batch = x.type().dim(1);

  const int64_t g = num_gates(cell);
  // R's rows (G * H) when static, else -1.
  int64_t rows = -1;
  if (r.type().has_rank() && r.type().ndim() == 3) rows = ir::as_const_int(r.type().dim(1)).value_or(-1);
  rc.hidden = ctx.has_attr("hidden_size") ? ctx.attr_int("hidden_size") : (rows > 0 ? rows / g : 0);
  if (rc.hidden <= 0) ctx.bad_model("hidden_size is not given and R's shape is not static");
  if (rows >= 0 && rows != g * rc.hidden)
    ctx.bad_model(str_cat("R has ", rows, " rows, expected ", g, " * hidden_size ", rc.hidden));
  if (ctx.has_attr("clip")) rc.clip = ctx.attr_float("clip");
  rc.input_forget = ctx.attr_int("input_forget", 0) != 0;
  rc.linear_before_reset = ctx.attr_int("linear_before_reset", 0) != 0;
  if (rc.input_forget && cell != Cell::kLstm) ctx.bad_model("input_forget is an LSTM attribute");
  if (rc.linear_before_reset && cell != Cell::kGru) ctx.bad_model("linear_before_reset is a GRU attribute");
  std::vector<Activation> acts = activations(ctx, cell, dirs);

  if (ctx.has_input(4)) {  // sequence_lens [B]: a mask unless known to be T everywhere
    bool all_full = false;
    if (std::optional<std::vector<PrimExpr>> v = ctx.known_values(4)) {
      all_full = std::all_of(v->begin(), v->end(), [&](const PrimExpr& e) { return ir::as_const_int(e) == rc.steps; });
    }
    if (!all_full) {
      Expr lens = ctx.emit("cast", {ctx.input(4)}, {{"dtype", DataType::int64()}});
      Expr t = ctx.emit(
          "arange", {},
          {{"start", 0.0}, {"limit", static_cast<double>(rc.steps)}, {"delta", 1.0}, {"dtype", DataType::int64()}});
      Expr valid = ctx.emit("less", {unsqueeze(ctx, t, {1}), unsqueeze(ctx, lens, {0})});  // [T, B]
      rc.valid = unsqueeze(ctx, valid, {2});
      Tensor zero = Tensor::empty({}, DataType::int64());
      *static_cast<int64_t*>(zero.data()) = 0;
      rc.nonempty = unsqueeze(ctx, ctx.emit("greater", {lens, ctx.constant(zero)}), {1});
    }
  }
  auto state = [&](int i) {  // initial_h / initial_c as per-direction [B, H]
    if (!ctx.has_input(i)) {
      Expr z = ctx.emit("full", {graph::ShapeExpr::make({batch, ir::int_imm(rc.hidden)})},
                        {{"value", 0.0}, {"dtype", rc.dtype}});
      return std::vector<Expr>(static_cast<size_t>(dirs), z);
    }
    Expr s = ctx.input(i);
    if (layout == 1) s = transpose(ctx, s, {1, 0, 2});
    return per_direction(ctx, s, dirs);
  };
  std::vector<Expr> ws = per_direction(ctx, w, dirs), rs = per_direction(ctx, r, dirs);
  std::vector<Expr> bs(static_cast<size_t>(dirs)), ps(static_cast<size_t>(dirs));
  if (ctx.has_input(3)) bs = per_direction(ctx, ctx.input(3), dirs);
  if (cell == Cell::kLstm && ctx.has_input(7)) ps = per_direction(ctx, ctx.input(7), dirs);
  std::vector<Expr> h0 = state(5), c0 = cell == Cell::kLstm ? state(6) : std::vector<Expr>(static_cast<size_t>(dirs));

  const size_t per = static_cast<size_t>(num_activations(cell));
  std::vector<DirectionOut> outs;
  for (int64_t d = 0; d < dirs; ++d) {
    const size_t k = static_cast<size_t>(d);
    bool reverse = direction == "reverse" || d == 1;
    outs.push_back(run_direction(ctx, rc, x, ws[k], rs[k], bs[k], ps[k], h0[k], c0[k], &acts[k * per], reverse));
  }

  auto stack_states = [&](Expr DirectionOut::*m) {  // [D, B, H] (layout 1: [B, D, H])
    std::vector<Expr> parts;
    for (DirectionOut& o : outs) parts.push_back(unsqueeze(ctx, o.*m, {0}));
    Expr s = parts.size() == 1 ? parts[0] : ctx.emit("concat", parts, {{"axis", 0}});
    return layout == 1 ? transpose(ctx, s, {1, 0, 2}) : s;
  };
  const int n_out = std::min(ctx.num_outputs(), cell == Cell::kLstm ? 3 : 2);
  std::vector<Expr> result(static_cast<size_t>(n_out));
  if (n_out > 0 && !ctx.node().output(0).empty()) {
    std::vector<Expr> per_dir;
    for (DirectionOut& o : outs) {
      std::vector<Expr> steps_y;
      for (const Expr& y : o.y) steps_y.push_back(unsqueeze(ctx, y, {0, 1}));  // [1, 1, B, H]
      per_dir.push_back(steps_y.size() == 1 ? steps_y[0] : ctx.emit("concat", steps_y, {{"axis", 0}}));
    }
    Expr y = per_dir.size() == 1 ? per_dir[0] : ctx.emit("concat", per_dir, {{"axis", 1}});  // [T, D, B, H]
    result[0] = layout == 1 ? transpose(ctx, y, {2, 0, 1, 3}) : y;
  }
  if (n_out > 1) result[1] = stack_states(&DirectionOut::h);
  if (n_out > 2) result[2] = stack_states(&DirectionOut::c);
  return result;
}

}  // namespace

void register_recurrent_converters() {
  register_converter("RNN", [](ImportContext& c) { return convert_recurrent(c, Cell::kRnn); });
  register_converter("GRU", [](ImportContext& c) { return convert_recurrent(c, Cell::kGru); });
  register_converter("LSTM", [](ImportContext& c) { return convert_recurrent(c, Cell::kLstm); });
}

}  // namespace anvil::frontend::onnx
