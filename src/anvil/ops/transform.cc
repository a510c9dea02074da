// Implementations of the transform operators: TE computes read with clamped indices (loads
// under a select are all evaluated, so every index stays in bounds) and the default injective
// CPU schedule. Output shapes come from the call's inferred type (the graph's own dim Vars).
#include <algorithm>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/graph/ops/transform.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/strategy.h"

namespace anvil::ops {
namespace {

using graph::CallNode;
using graph::get_float;
using graph::get_int;
using graph::get_ints;
using graph::get_string;
using ir::DataType;
using ir::PrimExpr;
using ir::Var;
using te::Tensor;

const std::vector<PrimExpr>& out_shape(const CallNode& call) { return call.type().shape(); }
DataType out_dtype(const CallNode& call) { return call.type().dtype(); }

PrimExpr clamp(const PrimExpr& x, const PrimExpr& lo, const PrimExpr& hi) { return max(min(x, hi), lo); }
PrimExpr as_index(const PrimExpr& x) { return x.dtype() == DataType::int32() ? x : cast(DataType::int32(), x); }
// An index read from a tensor: negative values count from the end, then clamped into [0, dim).
PrimExpr wrap_index(const PrimExpr& raw, const PrimExpr& dim) {
  PrimExpr i = as_index(raw);
  return clamp(select(i < 0, i + dim, i), 0, dim - 1);
}
std::vector<PrimExpr> exprs(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

std::vector<Tensor> reshape(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const std::vector<PrimExpr>& os = out_shape(call);
  return one(te::compute(os, [&](const std::vector<Var>& i) {
    PrimExpr lin = ir::int_imm(0);
    for (size_t k = 0; k < os.size(); ++k) lin = lin * os[k] + i[k];
    std::vector<PrimExpr> idx(x.ndim());
    for (int k = x.ndim() - 1; k >= 0; --k) {
      idx[k] = k == 0 ? lin : floormod(lin, x.shape()[k]);
      if (k > 0) lin = floordiv(lin, x.shape()[k]);
    }
    return x(idx);
  }, "reshape"));
}

std::vector<Tensor> transpose(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  std::vector<int64_t> axes = get_ints(call.attrs(), "axes", {});
  if (axes.empty())
    for (int k = x.ndim() - 1; k >= 0; --k) axes.push_back(k);
  std::vector<int> norm = graph::ops::normalize_axes(axes, x.ndim());
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx(x.ndim());
    for (size_t k = 0; k < norm.size(); ++k) idx[norm[k]] = i[k];
    return x(idx);
  }, "transpose"));
}

// expand_dims and squeeze: the input's index is the output's with unit axes dropped/zeroed.
std::vector<Tensor> expand_dims(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const std::vector<PrimExpr>& os = out_shape(call);
  std::vector<int> axes = graph::ops::normalize_axes(get_ints(call.attrs(), "axes"), static_cast<int>(os.size()));
  return one(te::compute(os, [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    for (size_t k = 0; k < os.size(); ++k)
      if (std::find(axes.begin(), axes.end(), static_cast<int>(k)) == axes.end()) idx.push_back(i[k]);
    return x(idx);
  }, "expand_dims"));
}

std::vector<Tensor> squeeze(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const graph::Type& t = call.args()[0].type();
  std::vector<int64_t> axes = get_ints(call.attrs(), "axes", {});
  std::vector<int> norm = graph::ops::normalize_axes(axes, x.ndim());
  std::vector<bool> drop(x.ndim());
  for (int k = 0; k < x.ndim(); ++k) {
    std::optional<int64_t> c = ir::as_const_int(t.shape()[k]);
    drop[k] = axes.empty() ? (c && *c == 1) : std::find(norm.begin(), norm.end(), k) != norm.end();
  }
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    size_t o = 0;
    for (int k = 0; k < x.ndim(); ++k) idx.push_back(drop[k] ? PrimExpr(ir::int_imm(0)) : PrimExpr(i[o++]));
    return x(idx);
  }, "squeeze"));
}

std::vector<Tensor> broadcast_to(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const std::vector<PrimExpr>& os = out_shape(call);
  size_t off = os.size() - x.ndim();
  return one(te::compute(os, [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    for (int k = 0; k < x.ndim(); ++k) {
      std::optional<int64_t> c = ir::as_const_int(x.shape()[k]);
      idx.push_back(c && *c == 1 ? PrimExpr(ir::int_imm(0)) : PrimExpr(i[off + k]));
    }
    return x(idx);
  }, "broadcast_to"));
}

std::vector<Tensor> concat(const CallNode& call, const std::vector<Tensor>& in) {
  int axis = graph::ops::normalize_axis(get_int(call.attrs(), "axis"), in[0].ndim());
  std::vector<const Tensor*> parts;  // empty inputs contribute nothing (and have no index to clamp to)
  for (const Tensor& t : in) {
    std::optional<int64_t> c = ir::as_const_int(t.shape()[axis]);
    if (!c || *c > 0) parts.push_back(&t);
  }
  if (parts.empty()) parts.push_back(&in[0]);
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    // From the last part backwards: select(i < offset_k + d_k, part_k, later parts).
    std::vector<PrimExpr> offsets{ir::int_imm(0)};
    for (const Tensor* t : parts) offsets.push_back(offsets.back() + t->shape()[axis]);
    PrimExpr value;
    for (int p = static_cast<int>(parts.size()) - 1; p >= 0; --p) {
      std::vector<PrimExpr> idx = exprs(i);
      idx[axis] = clamp(i[axis] - offsets[p], 0, parts[p]->shape()[axis] - 1);
      PrimExpr v = (*parts[p])(idx);
      value = value.defined() ? select(i[axis] < offsets[p + 1], v, value) : v;
    }
    return value;
  }, "concat"));
}

std::vector<Tensor> split(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  int axis = graph::ops::normalize_axis(get_int(call.attrs(), "axis"), x.ndim());
  // Piece f starts at the split point before it, or at the sum of the run-time sizes before it.
  const bool run_time = call.args().size() == 2;
  std::vector<int64_t> points = run_time ? std::vector<int64_t>{} : get_ints(call.attrs(), "indices");
  std::vector<Tensor> outs;
  PrimExpr start = ir::int_imm(0);
  for (size_t f = 0; f < call.type().fields().size(); ++f) {
    const std::vector<PrimExpr>& piece = call.type().field(static_cast<int>(f)).shape();
    if (!run_time && f > 0) start = ir::int_imm(static_cast<int>(points[f - 1]));
    outs.push_back(te::compute(piece, [&](const std::vector<Var>& i) {
      std::vector<PrimExpr> idx = exprs(i);
      idx[axis] = i[axis] + start;
      return x(idx);
    }, "split" + std::to_string(f)));
    if (run_time) start = arith::simplify(start + piece[axis]);
  }
  return outs;
}

std::vector<Tensor> strided_slice(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  graph::ops::SliceSpec spec = graph::ops::strided_slice_spec(call, x.shape());
  std::vector<PrimExpr> first(x.ndim(), ir::int_imm(0));
  std::vector<int64_t> step(x.ndim(), 1);
  for (size_t k = 0; k < spec.axes.size(); ++k) first[spec.axes[k]] = spec.ranges[k].begin, step[spec.axes[k]] = spec.strides[k];
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    for (int k = 0; k < x.ndim(); ++k) idx.push_back(first[k] + i[k] * static_cast<int>(step[k]));
    return x(idx);
  }, "strided_slice"));
}

std::vector<Tensor> take(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor &x = in[0], &ind = in[1];
  int axis = graph::ops::normalize_axis(get_int(call.attrs(), "axis", 0), x.ndim());
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> ii(i.begin() + axis, i.begin() + axis + ind.ndim());
    std::vector<PrimExpr> idx(i.begin(), i.begin() + axis);
    idx.push_back(wrap_index(ind(ii), x.shape()[axis]));
    idx.insert(idx.end(), i.begin() + axis + ind.ndim(), i.end());
    return x(idx);
  }, "take"));
}

std::vector<Tensor> tile(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    for (int k = 0; k < x.ndim(); ++k) idx.push_back(floormod(i[k], x.shape()[k]));
    return x(idx);
  }, "tile"));
}

std::vector<Tensor> pad(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  std::string mode = get_string(call.attrs(), "mode", "constant");
  int n = x.ndim();
  // The amounts: the attribute, or run-time Vars (a last Shape argument) the index math reads.
  const bool run_time = call.args().back().type().is_shape();
  std::vector<PrimExpr> pads;
  if (run_time) pads = *call.args().back().type().shape_values();
  else
    for (int64_t p : get_ints(call.attrs(), "pads")) pads.push_back(ir::int_imm(static_cast<int>(p)));
  const bool has_fill = in.size() > 1 && in[1].defined();
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    PrimExpr fill = has_fill ? in[1](std::vector<PrimExpr>(in[1].ndim(), ir::int_imm(0)))  // a run-time fill
                             : ir::make_const(x.dtype(), get_float(call.attrs(), "pad_value", 0.0));
    std::vector<PrimExpr> idx;
    PrimExpr inside;
    for (int k = 0; k < n; ++k) {
      const PrimExpr& d = x.shape()[k];
      PrimExpr j = i[k] - pads[k];
      if (mode == "reflect") j = select(j < 0, -j, select(j >= d, (d - 1) * 2 - j, j));
      if (mode == "wrap") j = floormod(j, d);
      std::optional<int64_t> before = ir::as_const_int(pads[k]), after = ir::as_const_int(pads[k + n]);
      if (mode == "constant" && !(before && after && *before <= 0 && *after <= 0)) {
        PrimExpr in_k = (j >= 0) && (j < d);
        inside = inside.defined() ? (inside && in_k) : in_k;
      }
      idx.push_back(clamp(j, 0, d - 1));
    }
    PrimExpr v = x(idx);
    return inside.defined() ? select(inside, v, fill) : v;
  }, "pad"));
}

std::vector<Tensor> copy(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) { return x(exprs(i)); }, "copy"));
}

std::vector<Tensor> full(const CallNode& call, const std::vector<Tensor>&) {
  PrimExpr v = ir::make_const(out_dtype(call), get_float(call.attrs(), "value"));
  return one(te::compute(out_shape(call), [&](const std::vector<Var>&) { return v; }, "full"));
}

std::vector<Tensor> arange(const CallNode& call, const std::vector<Tensor>& in) {
  DataType dt = out_dtype(call);
  const bool run_time = call.args().size() == 3;  // start and delta read from 0-d tensors
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    PrimExpr start = run_time ? in[1](std::vector<PrimExpr>{}) : ir::make_const(dt, get_float(call.attrs(), "start"));
    PrimExpr delta = run_time ? in[2](std::vector<PrimExpr>{}) : ir::make_const(dt, get_float(call.attrs(), "delta"));
    return start + cast(dt, i[0]) * delta;
  }, "arange"));
}

std::vector<Tensor> gather_elements(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor &x = in[0], &ind = in[1];
  int axis = graph::ops::normalize_axis(get_int(call.attrs(), "axis", 0), x.ndim());
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx = exprs(i);
    idx[axis] = wrap_index(ind(exprs(i)), x.shape()[axis]);
    return x(idx);
  }, "gather_elements"));
}

std::vector<Tensor> trilu(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  // k: the attribute, or a run-time value (a Var of the Shape argument, a kernel scalar).
  PrimExpr k = call.args().size() == 2 ? (*call.args()[1].type().shape_values())[0]
                                       : ir::int_imm(static_cast<int>(get_int(call.attrs(), "k", 0)));
  bool upper = get_int(call.attrs(), "upper", 1) != 0;
  PrimExpr zero = ir::make_const(x.dtype(), 0);
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    PrimExpr r = i[i.size() - 2], c = i[i.size() - 1];
    PrimExpr keep = upper ? (c - r >= k) : (c - r <= k);
    return select(keep, x(exprs(i)), zero);
  }, "trilu"));
}

std::vector<Tensor> one_hot(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor &ind = in[0], &values = in[1];
  int axis = graph::ops::normalize_axis(get_int(call.attrs(), "axis", -1), ind.ndim() + 1);
  PrimExpr depth = out_shape(call)[axis];  // the attribute, or a run-time Var
  return one(te::compute(out_shape(call), [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> ii;
    for (int k = 0; k <= ind.ndim(); ++k)
      if (k != axis) ii.push_back(i[k]);
    PrimExpr raw = as_index(ind(ii));
    PrimExpr v = select(raw < 0, raw + depth, raw);
    return select(eq(v, i[axis]), values(ir::int_imm(1)), values(ir::int_imm(0)));
  }, "one_hot"));
}

std::vector<Tensor> depth_to_space(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  int b = static_cast<int>(get_int(call.attrs(), "blocksize"));
  bool dcr = get_string(call.attrs(), "mode", "DCR") == "DCR";
  PrimExpr oc = out_shape(call)[1];
  return one(te::compute(out_shape(call), [&](Var n, Var c, Var h, Var w) {
    PrimExpr bh = floormod(h, b), bw = floormod(w, b);
    PrimExpr ic = dcr ? (bh * b + bw) * oc + c : c * (b * b) + bh * b + bw;
    return x(n, ic, floordiv(h, b), floordiv(w, b));
  }, "depth_to_space"));
}

std::vector<Tensor> space_to_depth(const CallNode& call, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  int b = static_cast<int>(get_int(call.attrs(), "blocksize"));
  PrimExpr ic = x.shape()[1];
  return one(te::compute(out_shape(call), [&](Var n, Var c, Var h, Var w) {
    PrimExpr off = floordiv(c, ic);
    return x(n, floormod(c, ic), h * b + floordiv(off, b), w * b + floormod(off, b));
  }, "space_to_depth"));
}

}  // namespace

void register_resize_strategies();          // transform_resize.cc
void register_resize_antialias_strategies();  // transform_resize_antialias.cc
void register_gather_scatter_strategies();  // transform_scatter.cc

void register_transform_strategies() {
  auto reg = [](const char* op, ComputeFn f) {
    register_implementation(op, "cpu", {std::string(op) + ".cpu", std::move(f), schedule_injective});
  };
  reg("reshape", reshape);
  reg("transpose", transpose);
  reg("expand_dims", expand_dims);
  reg("squeeze", squeeze);
  reg("broadcast_to", broadcast_to);
  reg("concat", concat);
  reg("split", split);
  reg("strided_slice", strided_slice);
  reg("take", take);
  reg("tile", tile);
  reg("pad", pad);
  reg("copy", copy);
  reg("full", full);
  reg("arange", arange);
  reg("gather_elements", gather_elements);
  reg("trilu", trilu);
  reg("one_hot", one_hot);
  reg("depth_to_space", depth_to_space);
  reg("space_to_depth", space_to_depth);
  register_resize_strategies();
  register_resize_antialias_strategies();
  register_gather_scatter_strategies();
}

}  // namespace anvil::ops
