// A node imported once per value its run-time input may take, chosen by graph `if`s
// (specialize.h).
#include "anvil/frontend/onnx/specialize.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/control_flow.h"
#include "anvil/frontend/onnx/import_state.h"

namespace anvil::frontend::onnx {
namespace {

using graph::Expr;
using graph::Type;

Expr int64_constant(const std::vector<int64_t>& values, std::vector<int64_t> shape) {
  Tensor t = Tensor::empty(shape, DataType::int64());
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(int64_t));
  return graph::Constant::make(t);
}

Expr scalar_int64(int64_t v) { return int64_constant({v}, {}); }

// The outer values the node reads besides the specialised input: constants are copied into each
// branch, the others become parameters (after the code) passed by every if.
struct Captured {
  std::vector<std::string> names;
  std::vector<ImportedValue> values;  // constants as the outer graph has them; others: expr only
  std::vector<Expr> args;             // the outer expressions of the parameters, in order
};

Captured capture_inputs(ImportContext& ctx, int input) {
  Captured c;
  const NodeProto& node = ctx.node();
  auto& nc = static_cast<NodeContext&>(ctx);
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (i == input || !ctx.has_input(i)) continue;
    const std::string& name = node.input(i);
    if (name == node.input(input) || std::find(c.names.begin(), c.names.end(), name) != c.names.end()) continue;
    Expr e = ctx.input(i);
    ImportedValue v;
    if (e.as<graph::ConstantNode>()) {
      v = nc.state().values.at(name);
      v.expr = e;
    } else {
      v.expr = e;
      c.args.push_back(e);
    }
    c.names.push_back(name);
    c.values.push_back(std::move(v));
  }
  return c;
}

// A new Function's name: `hint`, made unique among the module's functions.
std::string unique_name(const ImportState& state, const std::string& hint) {
  std::string name = hint;
  for (int k = 1; state.functions->count(name) || name == "main"; ++k) name = str_cat(hint, "_", k);
  return name;
}

class Specializer {
 public:
  Specializer(ImportContext& ctx, int input, const Converter& convert)
      : ctx_(ctx), nc_(static_cast<NodeContext&>(ctx)), input_(input), convert_(convert) {
    const NodeProto& node = ctx.node();
    for (const std::string& o : node.output())
      if (!o.empty()) {
        hint_ = sanitize_name(o);
        break;
      }
    if (hint_.empty()) hint_ = "specialized";
    captured_ = capture_inputs(ctx, input);
  }

  // The node's outputs: an if over `code` whose branches are the candidates, sorted by code.
  std::vector<Expr> select(const Expr& code, const std::vector<std::vector<int64_t>>& candidates,
                           const std::vector<int64_t>& codes, const std::vector<int64_t>& value_shape) {
    std::vector<size_t> order(candidates.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return codes[a] < codes[b]; });
    for (size_t i : order) {
      codes_.push_back(codes[i]);
      Leaf leaf = import_candidate(candidates[i], value_shape);
      leaves_.push_back(std::move(leaf));
    }
    graph::BlockBuilder& b = ctx_.builder();
    std::vector<Expr> params{code};
    params.insert(params.end(), captured_.args.begin(), captured_.args.end());
    Expr result = emit_search(b, params, 0, leaves_.size());
    std::vector<Expr> outs;
    if (num_results_ == 1) return {result};
    for (size_t i = 0; i < num_results_; ++i) outs.push_back(b.emit(graph::TupleGetItem::make(result, static_cast<int>(i)), hint_));
    return outs;
  }

 private:
  struct Leaf {
    std::string name;
    Type type;
  };

  ImportState& outer() { return nc_.state(); }

  // A fresh state whose parameters are (code, captured...).
  ImportState branch_state(std::vector<Expr>* params) {
    ImportState sub = sub_state(outer());
    params->push_back(sub.builder.add_param("code", Type::tensor(std::vector<int64_t>{}, DataType::int64())));
    for (size_t i = 0; i < captured_.names.size(); ++i) {
      ImportedValue v = captured_.values[i];
      if (!v.expr.as<graph::ConstantNode>()) {
        v.expr = sub.builder.add_param(sanitize_name(captured_.names[i]), v.expr.type());
        params->push_back(v.expr);
      }
      sub.values[captured_.names[i]] = std::move(v);
    }
    return sub;
  }

  // The node converted with input_ known to be `value`, as a Function of (code, captured...).
  Leaf import_candidate(const std::vector<int64_t>& value, const std::vector<int64_t>& value_shape) {
    std::vector<Expr> params;
    ImportState sub = branch_state(&params);
    const NodeProto& node = ctx_.node();
    ImportedValue known;
    known.known.emplace();
    for (int64_t x : value) known.known->push_back(ir::int_imm(x, DataType::int32()));
    known.known_shape = value_shape;
    sub.values[node.input(input_)] = std::move(known);
    NodeContext branch(sub, node, nc_.index());
    branch.convert(convert_);
    std::vector<Expr> results;
    for (const std::string& o : node.output()) {
      if (o.empty()) continue;
      ImportedValue& v = sub.values.at(o);
      if (v.missing) ctx_.unsupported(*v.missing);
      results.push_back(materialize(sub, v, sanitize_name(o)));
    }
    if (num_results_ == 0) num_results_ = results.size();
    Expr result = results.size() == 1 ? results[0] : graph::Tuple::make(results);
    std::string hint = hint_ + "_axes";
    for (int64_t x : value) hint += str_cat("_", x);  // normalised axes: not negative
    Leaf leaf{unique_name(outer(), hint), result.type()};
    outer().functions->emplace(leaf.name, sub.builder.finish(result));
    return leaf;
  }

  // if(code < codes[mid], ...) over leaves [lo, hi), its branches functions of (code, captured...);
  // one leaf: an if whose branches are both that leaf.
  Expr emit_search(graph::BlockBuilder& b, const std::vector<Expr>& params, size_t lo, size_t hi) {
    auto [then_f, then_t] = range_function(lo, hi == lo + 1 ? hi : (lo + hi) / 2);
    auto [else_f, else_t] = hi == lo + 1 ? std::make_pair(then_f, then_t) : range_function((lo + hi) / 2, hi);
    Expr bound = scalar_int64(hi == lo + 1 ? codes_[lo] + 1 : codes_[(lo + hi) / 2]);
    Expr cond = b.emit(b.call("less", {params[0], bound}), hint_ + "_pick");
    std::optional<Type> type = unify(then_t, else_t, hint_, fresh_);
    if (!type)
      ctx_.unsupported(str_cat("the variants for the run-time value of input ", input_, " give types that differ in more "
                               "than dimensions (", graph::to_string(then_t), " and ", graph::to_string(else_t), ")"));
    std::vector<Expr> args{cond};
    args.insert(args.end(), params.begin(), params.end());
    Expr call = graph::Call::make(graph::kCallIf, std::move(args), {{"then_func", then_f}, {"else_func", else_f}}, *type);
    return b.emit(call, hint_);
  }

  // The function of leaves [lo, hi): the leaf itself, or a new one searching them.
  std::pair<std::string, Type> range_function(size_t lo, size_t hi) {
    if (hi == lo + 1) return {leaves_[lo].name, leaves_[lo].type};
    std::vector<Expr> params;
    ImportState sub = branch_state(&params);
    Expr result = emit_search(sub.builder, params, lo, hi);
    std::string name = unique_name(outer(), str_cat(hint_, "_axes_select"));
    Type t = result.type();
    outer().functions->emplace(name, sub.builder.finish(result));
    return {name, t};
  }

  ImportContext& ctx_;
  NodeContext& nc_;
  int input_;
  const Converter& convert_;
  std::string hint_;
  Captured captured_;
  std::vector<int64_t> codes_;  // ascending
  std::vector<Leaf> leaves_;    // by code
  size_t num_results_ = 0;
  int fresh_ = 0;
};

// C(n, k), or limit + 1 once it passes limit.
int64_t binomial_capped(int64_t n, int64_t k, int64_t limit) {
  int64_t c = 1;
  for (int64_t i = 1; i <= k; ++i) {
    c = c * (n - k + i) / i;  // exact: c is C(n - k + i, i)
    if (c > limit) return limit + 1;
  }
  return c;
}

// The ascending k-subsets of [0, n), lexicographically.
std::vector<std::vector<int64_t>> subsets(int64_t n, int64_t k) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> s(static_cast<size_t>(k));
  std::iota(s.begin(), s.end(), 0);
  while (true) {
    out.push_back(s);
    int64_t i = k - 1;
    while (i >= 0 && s[static_cast<size_t>(i)] == n - k + i) --i;
    if (i < 0) return out;
    ++s[static_cast<size_t>(i)];
    for (int64_t j = i + 1; j < k; ++j) s[static_cast<size_t>(j)] = s[static_cast<size_t>(j - 1)] + 1;
  }
}

std::string axes_text(const std::vector<int64_t>& axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i) s += str_cat(i ? ", " : "", axes[i]);
  return s + "]";
}

}  // namespace

bool has_known_ints(const ImportContext& ctx, int i) {
  if (!ctx.has_input(i)) return false;
  std::optional<std::vector<ir::PrimExpr>> v = ctx.known_values(i);
  if (!v) return false;
  for (const ir::PrimExpr& e : *v)
    if (!ir::as_const_int(e)) return false;
  return true;
}

std::vector<Expr> specialize_on_values(ImportContext& ctx, int input, const std::vector<std::vector<int64_t>>& candidates,
                                       const std::vector<int64_t>& codes,
                                       const std::function<Expr(const Expr& value)>& code_of,
                                       const std::string& message, const Converter& convert) {
  ANVIL_ICHECK(dynamic_cast<NodeContext*>(&ctx) != nullptr, "specialize_on_values needs the importer's NodeContext");
  ANVIL_ICHECK(!candidates.empty() && candidates.size() == codes.size() &&
                   static_cast<int64_t>(candidates.size()) <= kMaxVariants,
               "specialize_on_values: ", candidates.size(), " candidates for ", codes.size(), " codes");
  Expr value = ctx.input(input);
  const Type& t = value.type();
  std::optional<std::vector<int64_t>> shape = t.is_tensor() && t.has_rank() ? t.static_shape() : std::nullopt;
  if (!shape) ctx.unsupported(str_cat("input ", input, " is known only at run time and its shape (", graph::to_string(t),
                                      ") is not static"));
  // The guard: code_of(value) is one of the codes; the branches read the code of the checked value.
  Expr hits = ctx.emit("equal", {code_of(value), int64_constant(codes, {static_cast<int64_t>(codes.size())})});
  Expr any = ctx.emit("max", {ctx.emit("cast", {hits}, {{"dtype", DataType::uint8()}})}, {{"keepdims", 0}});
  Expr ok = ctx.emit("cast", {any}, {{"dtype", DataType::boolean()}});
  std::string full = str_cat(static_cast<NodeContext&>(ctx).prefix(), ": ", message);
  Expr checked = ctx.emit("check", {value, ok}, {{"message", full}});
  Expr code = code_of(checked);
  Specializer s(ctx, input, convert);
  return s.select(code, candidates, codes, *shape);
}

std::vector<Expr> specialize_on_axes(ImportContext& ctx, int input, int64_t n,
                                     const std::function<bool(const std::vector<int64_t>&)>& allowed,
                                     const Converter& convert) {
  Expr value = ctx.input(input);
  const Type& t = value.type();
  std::optional<std::vector<int64_t>> shape = t.is_tensor() && t.has_rank() ? t.static_shape() : std::nullopt;
  if (!shape || shape->size() > 1 || !(t.dtype() == DataType::int64() || t.dtype() == DataType::int32()))
    ctx.unsupported(str_cat("input ", input, " (axes) is known only at run time; that needs a 0-d or 1-d int32/int64 "
                            "tensor of static shape, not ", graph::to_string(t)));
  int64_t k = shape->empty() ? 1 : (*shape)[0];
  if (k > n) ctx.bad_model(str_cat("input ", input, " (axes) holds ", k, " axes for ", n, " dimensions"));
  if (n > 62) ctx.unsupported(str_cat("input ", input, " (axes) is known only at run time over ", n, " dimensions"));
  int64_t total = binomial_capped(n, k, 100000);
  if (total > 100000)
    ctx.unsupported(str_cat("input ", input, " (axes) is known only at run time: more than 100000 variants (", k,
                            " of ", n, " axes); at most ", kMaxVariants, " are supported"));
  std::vector<std::vector<int64_t>> candidates;
  std::vector<int64_t> codes;
  for (std::vector<int64_t>& s : subsets(n, k)) {
    if (allowed && !allowed(s)) continue;
    int64_t code = 0;
    for (int64_t a : s) code |= int64_t{1} << a;
    candidates.push_back(std::move(s));
    codes.push_back(code);
  }
  if (static_cast<int64_t>(candidates.size()) > kMaxVariants)
    ctx.unsupported(str_cat("input ", input, " (axes) is known only at run time: ", candidates.size(), " variants (", k,
                            " of ", n, " axes); at most ", kMaxVariants, " are supported"));
  if (candidates.empty())
    ctx.unsupported(str_cat("input ", input, " (axes) is known only at run time and no set of ", k, " of the ", n,
                            " axes fits the node"));
  // code(axes) = sum over the normalised axes' one-hot rows of 2^axis, each axis counted once.
  auto code_of = [&ctx, n, k](const Expr& axes) {
    if (k == 0) return scalar_int64(0);  // the one candidate: no axes
    Expr a = axes.type().dtype() == DataType::int64() ? axes : ctx.emit("cast", {axes}, {{"dtype", DataType::int64()}});
    a = ctx.emit("reshape", {a, graph::ShapeExpr::make({graph::dim_expr(k), graph::dim_expr(1)})});
    Expr wrapped = ctx.emit("add", {a, scalar_int64(n)});
    a = ctx.emit("where", {ctx.emit("less", {a, scalar_int64(0)}), wrapped, a});
    std::vector<int64_t> range(static_cast<size_t>(n)), powers(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) range[static_cast<size_t>(i)] = i, powers[static_cast<size_t>(i)] = int64_t{1} << i;
    Expr onehot = ctx.emit("equal", {a, int64_constant(range, {n})});  // [k, n]
    Expr mask = ctx.emit("max", {ctx.emit("cast", {onehot}, {{"dtype", DataType::int64()}})},
                         {{"axes", graph::AttrValue::ints({0})}, {"keepdims", 0}});
    return ctx.emit("sum", {ctx.emit("multiply", {mask, int64_constant(powers, {n})})}, {{"keepdims", 0}});
  };
  std::string listed;
  if (candidates.size() <= 8) {
    for (size_t i = 0; i < candidates.size(); ++i) listed += str_cat(i ? ", " : "", axes_text(candidates[i]));
  } else {
    listed = str_cat(axes_text(candidates.front()), ", ..., ", axes_text(candidates.back()));
  }
  std::string message = str_cat("input ", input, " ('", ctx.node().input(input), "', axes known only at run time) must be ",
                                k, " distinct axes in [", -n, ", ", n, ") forming one of the ", candidates.size(),
                                " sets the node was compiled for (", listed, ")");
  return specialize_on_values(ctx, input, candidates, codes, code_of, message, convert);
}

}  // namespace anvil::frontend::onnx
