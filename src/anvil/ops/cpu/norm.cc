// Normalisations and softmax for CPUs: nn.batch_norm (inference: one broadcast expression),
// nn.layer_norm / nn.rms_norm (over axis..end), nn.instance_norm, nn.group_norm, nn.lrn,
// nn.softmax / nn.log_softmax.
//
// Statistics are reduction stages shaped like the data with 1 at the reduced dims, computed
// whole before the output, their outer axes in parallel (schedule_reductions_then_injective);
// the output is one vectorised elementwise pass. Variance is the mean of squared deviations
// from the mean (two passes, no E[x²] - E[x]² cancellation); softmax subtracts the maximum
// (and computes float16/bfloat16 in float32).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "anvil/arith/simplify.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/nn_strategies.h"
#include "anvil/ops/cpu/nn_util.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::PrimExpr;
using ir::Var;

// Shape of `x` with the dims in `reduced` set to 1.
std::vector<PrimExpr> kept_shape(const te::Tensor& x, const std::vector<bool>& reduced) {
  std::vector<PrimExpr> s = x.shape();
  for (size_t d = 0; d < s.size(); ++d)
    if (reduced[d]) s[d] = ir::int_imm(1);
  return s;
}

// Index of the stats stage for a data index (0 at the reduced dims).
std::vector<PrimExpr> stats_index(const std::vector<Var>& i, const std::vector<bool>& reduced) {
  std::vector<PrimExpr> idx;
  for (size_t d = 0; d < i.size(); ++d) idx.push_back(reduced[d] ? PrimExpr(ir::int_imm(0)) : PrimExpr(i[d]));
  return idx;
}

// Vectors and tail of a row of `len` elements split for lane partials: full vectors
// floor(len / lanes) and the remaining tail (constants folded when len is one).
struct RowSplit {
  PrimExpr full, tail;
  bool has_tail;
};

// Split a reduced last dim for vectors when it is symbolic or at least one vector long (a
// shorter constant row stays one scalar loop).
std::optional<RowSplit> row_split(const PrimExpr& len, int lanes) {
  std::optional<int64_t> c = ir::as_const_int(len);
  if (c && *c < lanes) return std::nullopt;
  if (c) return RowSplit{ir::int_imm(*c / lanes), ir::int_imm(*c % lanes), *c % lanes != 0};
  return RowSplit{ir::floordiv(len, lanes), ir::floormod(len, lanes), true};
}

// The lanes (and the tail) combined: reduce over rl in [0, lanes] of part_at(i, rl), the last
// step taking tail(i) instead (the lane clamped: select evaluates both sides).
te::Tensor combine_lanes(const std::vector<PrimExpr>& shape,
                         const std::function<PrimExpr(const std::vector<Var>&, const PrimExpr&)>& part_at,
                         const te::Tensor* tail, int lanes, bool is_max, const std::string& name) {
  te::IterVar rl = te::reduce_axis(0, lanes + (tail ? 1 : 0), "rl");
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr v = part_at(i, tail ? ir::min(PrimExpr(rl), PrimExpr(ir::int_imm(lanes - 1))) : PrimExpr(rl));
        if (tail) v = ir::select(PrimExpr(rl) < lanes, v, (*tail)(std::vector<PrimExpr>(i.begin(), i.end())));
        return is_max ? te::max(v, {rl}) : te::sum(v, {rl});
      },
      name);
}

// A reduction over the `reduced` dims of f(data index), shaped by kept_shape. A reduction over
// the last dim alone (constant of at least one vector, or symbolic) goes in stages so it
// vectorises: lane-wise partial results over the row's full vectors (stage "<name>_lanes", see
// schedule_reductions_then_injective), a scalar reduction of the tail (len mod lanes; "<name>_tail",
// absent when a constant length divides), then a short reduction of the lanes and the tail.
te::Tensor reduce_over(const te::Tensor& x, const std::vector<bool>& reduced, bool is_max,
                       const std::function<PrimExpr(const std::vector<PrimExpr>&)>& f, const std::string& name) {
  const int nd = x.ndim();
  const int lanes = kReductionVectorBytes / std::max(1, x.dtype().bits() / 8);
  std::optional<RowSplit> split;
  if (nd > 0 && std::count(reduced.begin(), reduced.end(), true) == 1 && reduced[nd - 1])
    split = row_split(x.shape()[nd - 1], lanes);
  if (split) {
    std::vector<PrimExpr> lanes_shape = x.shape();
    lanes_shape[nd - 1] = ir::int_imm(lanes);
    te::IterVar ro = te::reduce_axis(0, split->full, "ro");
    te::Tensor part = te::compute(
        lanes_shape,
        [&](const std::vector<Var>& i) {
          std::vector<PrimExpr> idx(i.begin(), i.end());
          idx[nd - 1] = ro * lanes + i[nd - 1];
          return is_max ? te::max(f(idx), {ro}) : te::sum(f(idx), {ro});
        },
        name + std::string(kLanePartialSuffix));
    std::optional<te::Tensor> tail;
    if (split->has_tail) {
      te::IterVar rt = te::reduce_axis(0, split->tail, "rt");
      tail = te::compute(
          kept_shape(x, reduced),
          [&](const std::vector<Var>& i) {
            std::vector<PrimExpr> idx(i.begin(), i.end());
            idx[nd - 1] = split->full * lanes + rt;
            return is_max ? te::max(f(idx), {rt}) : te::sum(f(idx), {rt});
          },
          name + "_tail");
    }
    auto part_at = [&](const std::vector<Var>& i, const PrimExpr& lane) {
      std::vector<PrimExpr> idx(i.begin(), i.end());
      idx[nd - 1] = lane;
      return part(idx);
    };
    return combine_lanes(kept_shape(x, reduced), part_at, tail ? &*tail : nullptr, lanes, is_max, name);
  }
  std::vector<te::IterVar> axes;
  std::vector<int> axis_of(x.ndim(), -1);
  for (int d = 0; d < x.ndim(); ++d)
    if (reduced[d]) {
      axis_of[d] = int(axes.size());
      axes.push_back(te::reduce_axis(0, x.shape()[d], "r" + std::to_string(d)));
    }
  return te::compute(
      kept_shape(x, reduced),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        for (int d = 0; d < x.ndim(); ++d) idx.push_back(reduced[d] ? PrimExpr(axes[axis_of[d]]) : PrimExpr(i[d]));
        return is_max ? te::max(f(idx), axes) : te::sum(f(idx), axes);
      },
      name);
}

PrimExpr count_of(const te::Tensor& x, const std::vector<bool>& reduced, DataType dt) {
  PrimExpr n = ir::int_imm(1);
  for (int d = 0; d < x.ndim(); ++d)
    if (reduced[d]) n = n * x.shape()[d];
  return ir::cast(dt, n);
}

// Index of a parameter tensor right-aligned with the data dims [from, ndim) (size-1 dims: 0).
std::vector<PrimExpr> param_index(const te::Tensor& p, const std::vector<Var>& i) {
  std::vector<PrimExpr> idx;
  const int off = int(i.size()) - p.ndim();
  for (int d = 0; d < p.ndim(); ++d) {
    std::optional<int64_t> c = ir::as_const_int(p.shape()[d]);
    idx.push_back(c && *c == 1 ? PrimExpr(ir::int_imm(0)) : PrimExpr(i[off + d]));
  }
  return idx;
}

// mean and 1/sqrt(var + eps) over `reduced`, then (x - mean) * rstd * gamma + beta where the
// parameters are indexed by param(i).
std::vector<te::Tensor> normalize(const te::Tensor& x, const std::vector<bool>& reduced, double eps,
                                  const std::function<PrimExpr(const std::vector<Var>&, PrimExpr)>& affine,
                                  const std::string& name) {
  DataType dt = x.dtype();
  const PrimExpr cnt = count_of(x, reduced, dt);
  te::Tensor sum = reduce_over(x, reduced, false, [&](const std::vector<PrimExpr>& i) { return x(i); }, "norm_sum");
  te::Tensor sq = reduce_over(
      x, reduced, false,
      [&](const std::vector<PrimExpr>& i) {
        std::vector<PrimExpr> si;
        for (int d = 0; d < x.ndim(); ++d) si.push_back(reduced[d] ? PrimExpr(ir::int_imm(0)) : i[d]);
        PrimExpr dev = x(i) - sum(si) / cnt;
        return dev * dev;
      },
      "norm_sqsum");
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> si = stats_index(i, reduced);
        PrimExpr v = (x(std::vector<PrimExpr>(i.begin(), i.end())) - sum(si) / cnt) *
                     ir::rsqrt(sq(si) / cnt + ir::make_const(dt, eps));
        return affine(i, v);
      },
      name)};
}

std::vector<bool> from_axis(int ndim, int axis) {
  std::vector<bool> r(ndim, false);
  for (int d = axis; d < ndim; ++d) r[d] = true;
  return r;
}

std::vector<te::Tensor> layer_norm(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  int axis = graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", -1), x.ndim());
  double eps = graph::get_float(call.attrs(), "epsilon", 1e-5);
  const bool has_beta = in.size() > 2 && in[2].defined();
  return normalize(x, from_axis(x.ndim(), axis), eps, [&](const std::vector<Var>& i, PrimExpr v) {
    v = v * in[1](param_index(in[1], i));
    return has_beta ? v + in[2](param_index(in[2], i)) : v;
  }, "layer_norm");
}

std::vector<te::Tensor> rms_norm(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  int axis = graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", -1), x.ndim());
  double eps = graph::get_float(call.attrs(), "epsilon", 1e-5);
  std::vector<bool> reduced = from_axis(x.ndim(), axis);
  DataType dt = x.dtype();
  te::Tensor sq = reduce_over(x, reduced, false, [&](const std::vector<PrimExpr>& i) { return x(i) * x(i); },
                              "norm_sqsum");
  const PrimExpr cnt = count_of(x, reduced, dt);
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> xi(i.begin(), i.end());
        return x(xi) * ir::rsqrt(sq(stats_index(i, reduced)) / cnt + ir::make_const(dt, eps)) *
               in[1](param_index(in[1], i));
      },
      "rms_norm")};
}

// gamma/beta per channel (dim 1).
PrimExpr channel_affine(const std::vector<te::Tensor>& in, const std::vector<Var>& i, PrimExpr v) {
  v = v * in[1](i[1]);
  return in.size() > 2 && in[2].defined() ? v + in[2](i[1]) : v;
}

std::vector<te::Tensor> instance_norm(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  std::vector<bool> reduced(x.ndim(), true);
  reduced[0] = reduced[1] = false;
  return normalize(x, reduced, graph::get_float(call.attrs(), "epsilon", 1e-5),
                   [&](const std::vector<Var>& i, PrimExpr v) { return channel_affine(in, i, v); }, "instance_norm");
}

// Stats per (n, group): the data viewed as [N, G, C/G, spatial...] inside the reductions. A
// last dim that is symbolic or at least a vector long is split as in reduce_over: lane partials
// [N, G, lanes] over (C/G, spatial..., last / lanes) with the lane axis vectorised, a scalar
// reduction of the tail columns, then a reduction of the lanes and the tail.
std::vector<te::Tensor> group_norm(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  const int nd = x.ndim();
  const int g = int(graph::get_int(call.attrs(), "num_groups"));
  const double eps = graph::get_float(call.attrs(), "epsilon", 1e-5);
  DataType dt = x.dtype();
  const PrimExpr cg = ir::floordiv(x.shape()[1], g);
  PrimExpr cnt = cg;
  for (int d = 2; d < nd; ++d) cnt = cnt * x.shape()[d];
  const PrimExpr fcnt = ir::cast(dt, cnt);
  const int lanes = kReductionVectorBytes / std::max(1, dt.bits() / 8);
  const std::optional<RowSplit> split = nd >= 3 ? row_split(x.shape()[nd - 1], lanes) : std::nullopt;
  // sum over the group of f(x index), as one reduction or lane partials + tail, then the lanes.
  auto group_reduce = [&](const std::function<PrimExpr(const std::vector<PrimExpr>&, const Var&, const Var&)>& f,
                          const std::string& name) {
    // The group's axes, the last one of extent `last` starting at column `first`.
    auto make_axes = [&](const PrimExpr& last, const char* last_name) {
      std::vector<te::IterVar> axes = {te::reduce_axis(0, cg, "rc")};
      for (int d = 2; d < nd; ++d)
        axes.push_back(te::reduce_axis(0, d == nd - 1 ? last : x.shape()[d],
                                       d == nd - 1 ? std::string(last_name) : "r" + std::to_string(d)));
      return axes;
    };
    auto index = [&](const std::vector<te::IterVar>& axes, const Var& n, const Var& grp,
                     const std::function<PrimExpr(PrimExpr)>& col) {
      std::vector<PrimExpr> idx = {n, grp * cg + axes[0]};
      for (size_t a = 1; a < axes.size(); ++a) idx.push_back(axes[a]);
      if (col) idx.back() = col(idx.back());
      return idx;
    };
    if (!split) {
      std::vector<te::IterVar> axes = make_axes(nd >= 3 ? x.shape()[nd - 1] : PrimExpr(), "r");
      return te::compute({x.shape()[0], g},
                         [&](Var n, Var grp) { return te::sum(f(index(axes, n, grp, nullptr), n, grp), axes); }, name);
    }
    std::vector<te::IterVar> vaxes = make_axes(split->full, "ro");
    te::Tensor part = te::compute(
        {x.shape()[0], g, lanes},
        [&](Var n, Var grp, Var l) {
          return te::sum(f(index(vaxes, n, grp, [&](PrimExpr c) { return c * lanes + l; }), n, grp), vaxes);
        },
        name + std::string(kLanePartialSuffix));
    std::optional<te::Tensor> tail;
    if (split->has_tail) {
      std::vector<te::IterVar> taxes = make_axes(split->tail, "rt");
      tail = te::compute(
          {x.shape()[0], g},
          [&](Var n, Var grp) {
            return te::sum(f(index(taxes, n, grp, [&](PrimExpr c) { return split->full * lanes + c; }), n, grp), taxes);
          },
          name + "_tail");
    }
    auto part_at = [&](const std::vector<Var>& i, const PrimExpr& lane) { return part(i[0], i[1], lane); };
    return combine_lanes({x.shape()[0], g}, part_at, tail ? &*tail : nullptr, lanes, false, name);
  };
  te::Tensor sum = group_reduce([&](const std::vector<PrimExpr>& i, const Var&, const Var&) { return x(i); }, "norm_sum");
  te::Tensor sq = group_reduce(
      [&](const std::vector<PrimExpr>& i, const Var& n, const Var& grp) {
        PrimExpr dev = x(i) - sum(n, grp) / fcnt;
        return dev * dev;
      },
      "norm_sqsum");
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        PrimExpr grp = ir::floordiv(i[1], cg);
        PrimExpr v = (x(std::vector<PrimExpr>(i.begin(), i.end())) - sum(i[0], grp) / fcnt) *
                     ir::rsqrt(sq(i[0], grp) / fcnt + ir::make_const(dt, eps));
        return channel_affine(in, i, v);
      },
      "group_norm")};
}

std::vector<te::Tensor> batch_norm(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  const int axis = graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", 1), x.ndim());
  const PrimExpr eps = ir::make_const(x.dtype(), graph::get_float(call.attrs(), "epsilon", 1e-5));
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const Var& c = i[axis];
        PrimExpr scale = in[1](c) * ir::rsqrt(in[4](c) + eps);
        return (x(std::vector<PrimExpr>(i.begin(), i.end())) - in[3](c)) * scale + in[2](c);
      },
      axis == 1 ? "batch_norm" : "batch_norm_axis")};
}

// ONNX LRN: x / (bias + alpha / size * sum of squares over channels [c - floor((size-1)/2),
// c + ceil((size-1)/2)])^beta.
std::vector<te::Tensor> lrn(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  const graph::Attrs& a = call.attrs();
  const int size = int(graph::get_int(a, "size"));
  DataType dt = x.dtype();
  const PrimExpr alpha = ir::make_const(dt, graph::get_float(a, "alpha", 1e-4) / size);
  const PrimExpr beta = ir::make_const(dt, graph::get_float(a, "beta", 0.75));
  const PrimExpr bias = ir::make_const(dt, graph::get_float(a, "bias", 1.0));
  const PrimExpr C = x.shape()[1];
  te::IterVar r = te::reduce_axis(0, size, "rc");
  te::Tensor sq = te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        PrimExpr c = i[1] - (size - 1) / 2 + r;
        std::vector<PrimExpr> idx(i.begin(), i.end());
        idx[1] = ir::min(ir::max(c, 0), C - 1);
        PrimExpr v = x(idx);
        return te::sum(ir::select(c >= 0 && c < C, v * v, ir::make_zero(dt)), {r});
      },
      "lrn_sqsum");
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(i.begin(), i.end());
        return x(idx) / ir::pow(bias + alpha * sq(idx), beta);
      },
      "lrn")};
}

std::vector<te::Tensor> softmax(const graph::CallNode& call, const std::vector<te::Tensor>& in, bool log) {
  const te::Tensor& x = in[0];
  const int axis = graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", -1), x.ndim());
  std::vector<bool> reduced(x.ndim(), false);
  reduced[axis] = true;
  te::Tensor mx = reduce_over(x, reduced, true, [&](const std::vector<PrimExpr>& i) { return x(i); }, "softmax_max");
  auto max_at = [&](const std::vector<PrimExpr>& i) {
    std::vector<PrimExpr> m = i;
    m[axis] = ir::int_imm(0);
    return mx(m);
  };
  // float16/bfloat16 compute in float32 (a sum of exps in float16 loses digits) and round once.
  const DataType acc = compute_dtype(x.dtype());
  auto shifted_at = [&](const std::vector<PrimExpr>& i, const PrimExpr& m) {
    return convert(acc, x(i)) - convert(acc, m);
  };
  te::Tensor sum = reduce_over(
      x, reduced, false, [&](const std::vector<PrimExpr>& i) { return ir::exp(shifted_at(i, max_at(i))); },
      "softmax_sum");
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(i.begin(), i.end()), si = stats_index(i, reduced);
        PrimExpr shifted = shifted_at(idx, mx(si));
        return convert(x.dtype(), log ? shifted - ir::log(sum(si)) : ir::exp(shifted) / sum(si));
      },
      log ? "log_softmax" : "softmax")};
}

// Per-channel parameters: the axes up to the channel fused and parallel, the rest one
// vectorised loop, so the channel's scale and shift are loop-invariant (the default injective
// schedule would gather them per lane).
void batch_norm_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  const te::Tensor& out = outs[0];
  const int nd = out.ndim();
  if (nd < 3 || out.name() != "batch_norm") return schedule_injective(s, outs, target);  // channel not dim 1
  te::Stage& st = s[out];
  te::IterVar inner = out.axis(2);
  PrimExpr extent = out.shape()[2];
  for (int d = 3; d < nd; ++d) {
    inner = st.fuse(inner, out.axis(d));
    extent = extent * out.shape()[d];
  }
  const int vf = vector_factor(arith::simplify(extent), lanes_for(target, out.dtype()));
  if (vf > 0) {
    auto [io, ii] = st.split(inner, vf);
    st.vectorize(ii);
  }
  fuse_all_parallel(st, {out.axis(0), out.axis(1)});
}

void reg(const char* op, const char* name, ComputeFn f) {
  register_implementation(op, "cpu", {name, std::move(f), schedule_reductions_then_injective});
}

}  // namespace

void register_norm_strategies() {
  register_implementation("nn.batch_norm", "cpu", {"batch_norm.x86", batch_norm, batch_norm_schedule});
  reg("nn.layer_norm", "layer_norm.x86", layer_norm);
  reg("nn.rms_norm", "rms_norm.x86", rms_norm);
  reg("nn.instance_norm", "instance_norm.x86", instance_norm);
  reg("nn.group_norm", "group_norm.x86", group_norm);
  reg("nn.lrn", "lrn.x86", lrn);
  reg("nn.softmax", "softmax.x86",
      [](const graph::CallNode& c, const std::vector<te::Tensor>& in) { return softmax(c, in, false); });
  reg("nn.log_softmax", "log_softmax.x86",
      [](const graph::CallNode& c, const std::vector<te::Tensor>& in) { return softmax(c, in, true); });
}

}  // namespace anvil::ops
