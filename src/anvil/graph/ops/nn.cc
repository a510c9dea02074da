// Operators of the nn family: type inference (families.md, "nn").
//
//   nn.conv2d(data NCHW, weight OIHW; strides[2], padding[4] top,left,bottom,right, dilation[2], groups,
//             kernel_layout "OIHW" | "OIHW<b>o": weight [O/b, I, H, W, b] from nn.conv2d_pack_weight(w; block))
//   nn.conv2d_transpose(data, weight IOHW; strides, padding[4], output_padding[2], dilation, groups)
//   nn.conv3d_transpose(data NCDHW, weight; strides[3], padding[6] begins then ends, output_padding[3], dilation[3], groups)
//   nn.dense(data [..., K], weight [N, K]) -> [..., N]        matmul(a, b): numpy semantics
//   nn.dense(data, weight [ceil(N/b), K, b]; weight_layout "packed", units N): the weight from
//             nn.dense_pack_weight(w [N, K] or, layout "KN", [K, N]; block b), the CPU GEMM's panels
//   nn.batch_norm(data, gamma, beta, mean, var; epsilon, axis)  nn.layer_norm(data, gamma[, beta]; axis, epsilon)
//   nn.group_norm(data, gamma[, beta]; num_groups, epsilon)  nn.instance_norm(data, gamma[, beta]; epsilon)
//   nn.rms_norm(data, gamma; axis, epsilon)  nn.lrn(data; size, alpha, beta, bias)
//   nn.max_pool2d / nn.avg_pool2d(data; pool_size, strides, padding[4], dilation, ceil_mode, count_include_pad)
//   nn.max_pool2d_indices(data, pooled; the max_pool2d attributes, storage_order) -> int64 flat indices into data
//   nn.global_avg_pool2d / nn.global_max_pool2d(data) -> N, C, 1, 1   nn.softmax / nn.log_softmax(data; axis)
//
// Channel and spatial dims may be symbolic where the arithmetic allows it (the output size is
// then an expression); checks between two constants are made, symbolic ones are promised.
#include <optional>
#include <string>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/ops.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"

namespace anvil::graph::ops {
namespace {

std::optional<int64_t> cint(const PrimExpr& e) { return ir::as_const_int(e); }

const Type& float_arg(const CallNode& call, size_t i, int ndim = -1) {
  const Type& t = tensor_arg(call, i);
  if (!t.dtype().is_float()) type_error("argument ", i, " has dtype ", t.dtype(), ", expected a float type");
  if (ndim >= 0 && t.ndim() != ndim)
    value_error("argument ", i, " is ", to_string(t), ", expected rank ", ndim);
  return t;
}

std::vector<int64_t> ints_n(const Attrs& a, const std::string& name, size_t n, const std::vector<int64_t>& fallback) {
  std::vector<int64_t> v = get_ints(a, name, fallback);
  if (v.size() != n) value_error("attribute '", name, "' has ", v.size(), " values, expected ", n);
  return v;
}

struct Window2d {
  std::vector<int64_t> strides, padding, dilation;
};

Window2d window_attrs(const Attrs& a) {
  Window2d w{ints_n(a, "strides", 2, {1, 1}), ints_n(a, "padding", 4, {0, 0, 0, 0}), ints_n(a, "dilation", 2, {1, 1})};
  for (int i = 0; i < 2; ++i)
    if (w.strides[i] <= 0 || w.dilation[i] <= 0)
      value_error("strides and dilation must be positive, got strides [", w.strides[0], ", ", w.strides[1],
                  "] dilation [", w.dilation[0], ", ", w.dilation[1], "]");
  for (int64_t p : w.padding)
    if (p < 0) value_error("padding must be non-negative, got ", p);
  return w;
}

// (in + pads - dilation*(k-1) - 1) / stride + 1, rounded down or (ceil_mode) up, with the
// ceil_mode rule that the last window starts inside the input or its leading padding.
PrimExpr window_out(const PrimExpr& in, int64_t k, int64_t s, int64_t pad_lo, int64_t pad_hi, int64_t d,
                    bool ceil_mode, const char* what) {
  const int64_t span = d * (k - 1) + 1;
  if (auto c = cint(in)) {
    int64_t room = *c + pad_lo + pad_hi - span;
    if (room < 0) value_error(what, " window of ", span, " does not fit the padded input of ", *c + pad_lo + pad_hi);
    int64_t out = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
    if (ceil_mode && (out - 1) * s >= *c + pad_lo) --out;
    return dim_expr(out);
  }
  PrimExpr room = in + static_cast<int>(pad_lo + pad_hi - span);
  if (ceil_mode) room = room + static_cast<int>(s - 1);  // symbolic: the start rule is promised
  return arith::simplify(ir::floordiv(room, static_cast<int>(s)) + 1);
}

void check_equal(const PrimExpr& a, const PrimExpr& b, const std::string& what) {
  auto ca = cint(a), cb = cint(b);
  if (ca && cb && *ca != *cb) value_error(what, ": ", *ca, " != ", *cb);
}

// "OIHW" (default) or "OIHW<b>o": the weight prepacked as [O/b, C/groups, R, S, b]
// (nn.conv2d_pack_weight), the layout of the NCHWc CPU schedule. 0 for OIHW.
int64_t packed_block(const Attrs& a) {
  std::string layout = get_string(a, "kernel_layout", "OIHW");
  if (layout == "OIHW") return 0;
  if (layout.size() > 5 && layout.rfind("OIHW", 0) == 0 && layout.back() == 'o') {
    int64_t b = std::stoll(layout.substr(4, layout.size() - 5));
    if (b > 0) return b;
  }
  value_error("kernel_layout '", layout, "', expected OIHW or OIHW<block>o (e.g. OIHW32o)");
}

Type infer_conv2d(const CallNode& call) {
  const Type& x = float_arg(call, 0, 4);
  const int64_t block = packed_block(call.attrs());
  const Type& w = float_arg(call, 1, block ? 5 : 4);
  check_same_dtype(call, 0, 1);
  if (block) check_equal(w.dim(4), dim_expr(block), "the packed weight's last dim differs from kernel_layout's block");
  Window2d win = window_attrs(call.attrs());
  int64_t groups = get_int(call.attrs(), "groups", 1);
  if (groups <= 0) value_error("groups must be positive, got ", groups);
  auto kh = cint(w.dim(2)), kw = cint(w.dim(3));
  PrimExpr o_dim = block ? arith::simplify(w.dim(0) * static_cast<int>(block)) : w.dim(0);
  auto oc = cint(o_dim);
  if (!kh || !kw) value_error("weight ", to_string(w), " must have a static kernel size");
  if (oc && *oc % groups != 0) value_error("output channels ", *oc, " are not divisible by groups ", groups);
  check_equal(x.dim(1), arith::simplify(w.dim(1) * static_cast<int>(groups)),
              "input channels differ from weight in-channels x groups");
  PrimExpr oh = window_out(x.dim(2), *kh, win.strides[0], win.padding[0], win.padding[2], win.dilation[0], false, "conv2d");
  PrimExpr ow = window_out(x.dim(3), *kw, win.strides[1], win.padding[1], win.padding[3], win.dilation[1], false, "conv2d");
  return Type::tensor({x.dim(0), o_dim, oh, ow}, x.dtype());
}

// OIHW -> [O/block, I, H, W, block].
Type infer_conv2d_pack_weight(const CallNode& call) {
  const Type& w = float_arg(call, 0, 4);
  int64_t b = get_int(call.attrs(), "block");
  if (b <= 0) value_error("block must be positive, got ", b);
  auto o = cint(w.dim(0));
  if (!o || *o % b != 0) value_error("output channels ", ir::to_string(w.dim(0)), " must be a constant multiple of block ", b);
  return Type::tensor({dim_expr(*o / b), w.dim(1), w.dim(2), w.dim(3), dim_expr(b)}, w.dtype());
}

Type infer_conv2d_transpose(const CallNode& call) {
  const Type& x = float_arg(call, 0, 4);
  const Type& w = float_arg(call, 1, 4);
  check_same_dtype(call, 0, 1);
  Window2d win = window_attrs(call.attrs());
  std::vector<int64_t> opad = ints_n(call.attrs(), "output_padding", 2, {0, 0});
  int64_t groups = get_int(call.attrs(), "groups", 1);
  if (groups <= 0) value_error("groups must be positive, got ", groups);
  auto kh = cint(w.dim(2)), kw = cint(w.dim(3));
  if (!kh || !kw) value_error("weight ", to_string(w), " must have a static kernel size");
  check_equal(x.dim(1), w.dim(0), "input channels differ from the weight's first dim");
  std::vector<PrimExpr> out = {x.dim(0), arith::simplify(w.dim(1) * static_cast<int>(groups))};
  int64_t k[2] = {*kh, *kw};
  for (int i = 0; i < 2; ++i) {
    int64_t extra = win.dilation[i] * (k[i] - 1) + opad[i] + 1 - win.padding[i] - win.padding[i + 2];
    PrimExpr o = arith::simplify((x.dim(2 + i) - 1) * static_cast<int>(win.strides[i]) + static_cast<int>(extra));
    if (auto c = cint(o); c && *c <= 0) value_error("conv2d_transpose output size ", *c, " is not positive");
    out.push_back(o);
  }
  return Type::tensor(out, x.dtype());
}

// 3-d: strides[3], padding[6] (begins, then ends), output_padding[3], dilation[3], groups.
Type infer_conv3d_transpose(const CallNode& call) {
  const Type& x = float_arg(call, 0, 5);
  const Type& w = float_arg(call, 1, 5);
  check_same_dtype(call, 0, 1);
  std::vector<int64_t> st = ints_n(call.attrs(), "strides", 3, {1, 1, 1}), pad = ints_n(call.attrs(), "padding", 6, {0, 0, 0, 0, 0, 0}),
                       dil = ints_n(call.attrs(), "dilation", 3, {1, 1, 1}), opad = ints_n(call.attrs(), "output_padding", 3, {0, 0, 0});
  int64_t groups = get_int(call.attrs(), "groups", 1);
  if (groups <= 0) value_error("groups must be positive, got ", groups);
  check_equal(x.dim(1), w.dim(0), "input channels differ from the weight's first dim");
  std::vector<PrimExpr> out = {x.dim(0), arith::simplify(w.dim(1) * static_cast<int>(groups))};
  for (int i = 0; i < 3; ++i) {
    auto k = cint(w.dim(2 + i));
    if (!k) value_error("weight ", to_string(w), " must have a static kernel size");
    if (st[i] <= 0 || dil[i] <= 0) value_error("strides and dilations must be positive");
    if (pad[i] < 0 || pad[i + 3] < 0 || opad[i] < 0) value_error("padding and output_padding must be non-negative");
    int64_t extra = dil[i] * (*k - 1) + opad[i] + 1 - pad[i] - pad[i + 3];
    PrimExpr o = arith::simplify((x.dim(2 + i) - 1) * static_cast<int>(st[i]) + static_cast<int>(extra));
    if (auto c = cint(o); c && *c <= 0) value_error("conv3d_transpose output size ", *c, " is not positive");
    out.push_back(o);
  }
  return Type::tensor(out, x.dtype());
}

Type infer_dense(const CallNode& call) {
  const Type& x = float_arg(call, 0);
  const std::string layout = get_string(call.attrs(), "weight_layout", "NK");
  if (layout != "NK" && layout != "packed") value_error("weight_layout '", layout, "', expected NK or packed");
  const bool packed = layout == "packed";
  const Type& w = float_arg(call, 1, packed ? 3 : 2);
  check_same_dtype(call, 0, 1);
  if (x.ndim() < 1) value_error("data ", to_string(x), " must have rank >= 1");
  check_equal(x.dim(-1), w.dim(1), "data's last dim differs from the weight's K (weight is [N, K] or packed [N/b, K, b])");
  std::vector<PrimExpr> out = x.shape();
  if (packed) {
    const int64_t units = get_int(call.attrs(), "units");
    auto panels = cint(w.dim(0)), b = cint(w.dim(2));
    if (!panels || !b || units <= 0 || (units + *b - 1) / *b != *panels)
      value_error("packed weight ", to_string(w), " does not hold units=", units, " columns in panels of its last dim");
    out.back() = dim_expr(units);
  } else {
    out.back() = w.dim(0);
  }
  return Type::tensor(out, x.dtype());
}

// [N, K] (layout "NK") or [K, N] ("KN") -> [ceil(N/block), K, block]; the last panel's columns
// past N repeat column N-1.
Type infer_dense_pack_weight(const CallNode& call) {
  const Type& w = float_arg(call, 0, 2);
  const int64_t b = get_int(call.attrs(), "block");
  if (b <= 0) value_error("block must be positive, got ", b);
  const std::string layout = get_string(call.attrs(), "layout", "NK");
  if (layout != "NK" && layout != "KN") value_error("layout '", layout, "', expected NK or KN");
  const bool nk = layout == "NK";
  auto n = cint(w.dim(nk ? 0 : 1));
  if (!n) value_error("the weight's N ", ir::to_string(w.dim(nk ? 0 : 1)), " must be static");
  return Type::tensor({dim_expr((*n + b - 1) / b), w.dim(nk ? 1 : 0), dim_expr(b)}, w.dtype());
}

Type infer_matmul(const CallNode& call) {
  const Type& a = tensor_arg(call, 0);
  const Type& b = tensor_arg(call, 1);
  check_same_dtype(call, 0, 1);
  if (a.ndim() < 1 || b.ndim() < 1) value_error("operands must have rank >= 1, got ", to_string(a), " and ", to_string(b));
  std::vector<PrimExpr> as = a.shape(), bs = b.shape();
  bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), ir::int_imm(1));
  if (b1) bs.push_back(ir::int_imm(1));
  check_equal(as.back(), bs[bs.size() - 2], "inner dimensions differ");
  std::vector<PrimExpr> ba(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  std::vector<PrimExpr> out = broadcast_shapes(ba, bb);
  if (!a1) out.push_back(as[as.size() - 2]);
  if (!b1) out.push_back(bs.back());
  return Type::tensor(out, a.dtype());
}

// Arguments 1.. are per-channel vectors of `channels` elements (rank 1).
void check_vectors(const CallNode& call, size_t first, const PrimExpr& channels) {
  for (size_t i = first; i < call.args().size(); ++i) {
    const Type& t = float_arg(call, i);
    check_same_dtype(call, 0, i);
    if (t.ndim() != 1) value_error("argument ", i, " is ", to_string(t), ", expected a vector");
    check_equal(t.dim(0), channels, "argument " + std::to_string(i) + " has the wrong length");
  }
}

Type infer_batch_norm(const CallNode& call) {
  const Type& x = float_arg(call, 0);
  int axis = normalize_axis(get_int(call.attrs(), "axis", 1), x.ndim());
  check_vectors(call, 1, x.dim(axis));
  return x;
}

// gamma/beta span the normalised trailing dims (layer_norm, rms_norm): shapes equal to them
// or broadcastable to them.
void check_trailing(const CallNode& call, size_t first, const Type& x, int axis) {
  std::vector<PrimExpr> tail(x.shape().begin() + axis, x.shape().end());
  for (size_t i = first; i < call.args().size(); ++i) {
    const Type& t = float_arg(call, i);
    check_same_dtype(call, 0, i);
    if (t.ndim() > static_cast<int>(tail.size()))
      value_error("argument ", i, " is ", to_string(t), ", expected at most rank ", tail.size());
    broadcast_shapes(tail, t.shape());
  }
}

Type infer_layer_norm(const CallNode& call) {
  const Type& x = float_arg(call, 0);
  int axis = normalize_axis(get_int(call.attrs(), "axis", -1), x.ndim());
  check_trailing(call, 1, x, axis);
  return x;
}

Type infer_group_norm(const CallNode& call) {
  const Type& x = float_arg(call, 0);
  if (x.ndim() < 2) value_error("data ", to_string(x), " must have rank >= 2 (N, C, ...)");
  int64_t g = get_int(call.attrs(), "num_groups");
  if (g <= 0) value_error("num_groups must be positive, got ", g);
  if (auto c = cint(x.dim(1)); c && *c % g != 0) value_error("channels ", *c, " are not divisible by num_groups ", g);
  check_vectors(call, 1, x.dim(1));
  return x;
}

Type infer_instance_norm(const CallNode& call) {
  const Type& x = float_arg(call, 0);
  if (x.ndim() < 3) value_error("data ", to_string(x), " must have rank >= 3 (N, C, spatial...)");
  check_vectors(call, 1, x.dim(1));
  return x;
}

Type infer_lrn(const CallNode& call) {
  const Type& x = float_arg(call, 0);
  if (x.ndim() < 3) value_error("data ", to_string(x), " must have rank >= 3 (N, C, spatial...)");
  if (get_int(call.attrs(), "size") <= 0) value_error("size must be positive");
  return x;
}

Type infer_pool2d(const CallNode& call) {
  // Max pooling also of integers (ONNX MaxPool takes int8 and uint8); averages need floats.
  const bool is_max = call.op() != "nn.avg_pool2d";
  const Type& x = is_max ? tensor_arg(call, 0) : float_arg(call, 0, 4);
  if (is_max && (x.dtype().is_bool() || !(x.dtype().is_float() || x.dtype().is_int() || x.dtype().is_uint())))
    type_error("argument 0 has dtype ", x.dtype(), ", expected an int, uint or float type");
  if (x.ndim() != 4) value_error("argument 0 is ", to_string(x), ", expected rank 4");
  Window2d win = window_attrs(call.attrs());
  std::vector<int64_t> k = ints_n(call.attrs(), "pool_size", 2, {});
  if (k[0] <= 0 || k[1] <= 0) value_error("pool_size must be positive");
  bool ceil_mode = get_int(call.attrs(), "ceil_mode", 0) != 0;
  PrimExpr oh = window_out(x.dim(2), k[0], win.strides[0], win.padding[0], win.padding[2], win.dilation[0], ceil_mode, "pool");
  PrimExpr ow = window_out(x.dim(3), k[1], win.strides[1], win.padding[1], win.padding[3], win.dilation[1], ceil_mode, "pool");
  return Type::tensor({x.dim(0), x.dim(1), oh, ow}, x.dtype());
}

// The flat index into data of each window's maximum (ONNX MaxPool's Indices): int64, the
// pooled result's shape; pooled is nn.max_pool2d of data with the same attributes.
Type infer_max_pool2d_indices(const CallNode& call) {
  Type y = infer_pool2d(call);
  const Type& pooled = tensor_arg(call, 1);
  check_same_dtype(call, 0, 1);
  if (pooled.ndim() != 4) value_error("pooled ", to_string(pooled), " must be 4-d");
  for (int i = 0; i < 4; ++i) check_equal(pooled.dim(i), y.dim(i), "pooled's shape differs from the pool's");
  return Type::tensor(y.shape(), DataType::int64());
}

Type infer_global_pool2d(const CallNode& call) {
  const Type& x = float_arg(call, 0, 4);
  return Type::tensor({x.dim(0), x.dim(1), ir::int_imm(1), ir::int_imm(1)}, x.dtype());
}

Type infer_softmax(const CallNode& call) {
  const Type& x = float_arg(call, 0);
  if (x.ndim() < 1) value_error("data ", to_string(x), " must have rank >= 1");
  normalize_axis(get_int(call.attrs(), "axis", -1), x.ndim());
  return x;
}

void reg(const char* name, int min_args, int max_args, OpPattern p, Type (*f)(const CallNode&), const char* summary) {
  register_op({name, min_args, max_args, p, f, summary});
}

}  // namespace

void register_nn_ops() {
  using P = OpPattern;
  reg("nn.conv2d", 2, 2, P::kOutEWiseFusable, infer_conv2d, "2-d convolution, NCHW data, OIHW weight");
  reg("nn.conv2d_pack_weight", 1, 1, P::kInjective, infer_conv2d_pack_weight,
      "OIHW conv weight -> [O/block, I, H, W, block] (kernel_layout OIHW<block>o)");
  reg("nn.conv2d_transpose", 2, 2, P::kOutEWiseFusable, infer_conv2d_transpose,
      "2-d transposed convolution, NCHW data, IOHW weight");
  reg("nn.conv3d_transpose", 2, 2, P::kOutEWiseFusable, infer_conv3d_transpose,
      "3-d transposed convolution, NCDHW data, weight [C, O/groups, KD, KH, KW]");
  reg("nn.dense", 2, 2, P::kOutEWiseFusable, infer_dense, "data [..., K] times weight [N, K] transposed");
  reg("nn.dense_pack_weight", 1, 1, P::kInjective, infer_dense_pack_weight,
      "dense weight [N, K] (or KN: [K, N]) -> [ceil(N/block), K, block] (weight_layout packed)");
  reg("matmul", 2, 2, P::kOutEWiseFusable, infer_matmul, "numpy matmul (1-d promotion, batch broadcasting)");
  reg("nn.batch_norm", 5, 5, P::kBroadcast, infer_batch_norm, "inference batch norm (gamma, beta, mean, var)");
  reg("nn.layer_norm", 2, 3, P::kCommReduce, infer_layer_norm, "layer norm over axis..end");
  reg("nn.group_norm", 2, 3, P::kCommReduce, infer_group_norm, "group norm over (C / groups, spatial)");
  reg("nn.instance_norm", 2, 3, P::kCommReduce, infer_instance_norm, "instance norm over the spatial dims");
  reg("nn.rms_norm", 2, 2, P::kCommReduce, infer_layer_norm, "RMS norm over axis..end");
  reg("nn.lrn", 1, 1, P::kOpaque, infer_lrn, "local response normalisation across channels");
  reg("nn.max_pool2d", 1, 1, P::kOutEWiseFusable, infer_pool2d, "2-d max pooling, NCHW");
  reg("nn.avg_pool2d", 1, 1, P::kOutEWiseFusable, infer_pool2d, "2-d average pooling, NCHW");
  reg("nn.max_pool2d_indices", 2, 2, P::kOpaque, infer_max_pool2d_indices,
      "flat index into data of each 2-d max pooling window's maximum (the first in row-major order)");
  reg("nn.global_avg_pool2d", 1, 1, P::kCommReduce, infer_global_pool2d, "mean over H, W (NCHW -> N, C, 1, 1)");
  reg("nn.global_max_pool2d", 1, 1, P::kCommReduce, infer_global_pool2d, "max over H, W (NCHW -> N, C, 1, 1)");
  reg("nn.softmax", 1, 1, P::kOpaque, infer_softmax, "softmax along axis (max subtracted)");
  reg("nn.log_softmax", 1, 1, P::kOpaque, infer_softmax, "log softmax along axis (max subtracted)");
}

}  // namespace anvil::graph::ops
