// Einsum (opset 12) of one or two operands; an index repeated inside one operand takes that
// diagonal first (static dims). "...ij,...jk->...ik" becomes matmul; every other form becomes transposes and
// expand_dims onto one index order (output indices, then summed ones), a broadcast multiply
// and a sum over the summed indices. Ellipses broadcast from the right, as numpy's.
#include <map>
#include <set>

#include "anvil/frontend/onnx/convert_transform_util.h"

namespace anvil::frontend::onnx {
namespace {

// Operand terms with "..." replaced by one fresh upper-case letter per ellipsis dim (the same
// letters across operands, aligned from the right).
struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

Equation parse(ImportContext& ctx, std::string eq, const std::vector<int>& ranks) {
  std::string clean;
  for (char c : eq)
    if (c != ' ') clean += c;
  std::string lhs = clean, rhs;
  bool explicit_out = false;
  if (size_t arrow = clean.find("->"); arrow != std::string::npos) {
    lhs = clean.substr(0, arrow), rhs = clean.substr(arrow + 2), explicit_out = true;
  }
  Equation e;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    e.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (e.inputs.size() != ranks.size())
    ctx.bad_model(str_cat("the equation names ", e.inputs.size(), " operands for ", ranks.size(), " inputs"));
  int ell = 0;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    size_t p = e.inputs[i].find("...");
    if (p == std::string::npos) continue;
    int named = static_cast<int>(e.inputs[i].size()) - 3;
    ell = std::max(ell, ranks[i] - named);
  }
  auto expand = [&](std::string& term, int rank) {
    size_t p = term.find("...");
    if (p == std::string::npos) return;
    int n = rank < 0 ? ell : rank - (static_cast<int>(term.size()) - 3);
    std::string letters;
    for (int k = ell - n; k < ell; ++k) letters += static_cast<char>('A' + k);
    term = term.substr(0, p) + letters + term.substr(p + 3);
  };
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    expand(e.inputs[i], ranks[i]);
    if (static_cast<int>(e.inputs[i].size()) != ranks[i])
      ctx.bad_model(str_cat("operand ", i, " ('", e.inputs[i], "') does not match its rank ", ranks[i]));
  }
  if (explicit_out) {
    expand(rhs, -1);
    e.output = rhs;
  } else {
    // Implicit output: ellipsis letters, then the letters that appear once, in alphabetical order.
    std::map<char, int> count;
    for (const std::string& t : e.inputs)
      for (char c : t) ++count[c];
    for (int k = 0; k < ell; ++k) e.output += static_cast<char>('A' + k);
    for (auto [c, n] : count)
      if (n == 1 && c >= 'a') e.output += c;
  }
  return e;
}

// An index repeated inside one operand ("ii" of a diagonal) takes the diagonal: the two axes moved
// last, merged (n * n), and every (n + 1)-th element kept, until every index is single.
Expr take_diagonals(ImportContext& ctx, Expr x, std::string& term) {
  for (size_t p = 0; p < term.size(); ++p) {
    size_t q = term.find(term[p], p + 1);
    if (q == std::string::npos) continue;
    const graph::Type& t = x.type();
    std::optional<int64_t> a = ir::as_const_int(t.dim(static_cast<int>(p))), b = ir::as_const_int(t.dim(static_cast<int>(q)));
    if (!a || !b) ctx.unsupported("Einsum with a diagonal over a symbolic dim");
    if (*a != *b) ctx.bad_model(str_cat("index '", term[p], "' has sizes ", *a, " and ", *b, " in one operand"));
    std::vector<int64_t> perm;
    std::string rest;
    std::vector<PrimExpr> shape;
    for (size_t k = 0; k < term.size(); ++k)
      if (k != p && k != q) perm.push_back(static_cast<int64_t>(k)), rest += term[k], shape.push_back(t.dim(static_cast<int>(k)));
    perm.push_back(static_cast<int64_t>(p)), perm.push_back(static_cast<int64_t>(q));
    x = ctx.emit("transpose", {x}, {{"axes", AttrValue::ints(perm)}});
    shape.push_back(ir::int_imm(*a * *a));
    for (PrimExpr& d : shape) d = graph::dim_expr(d);
    x = ctx.emit("reshape", {x, graph::ShapeExpr::make(shape)});
    const int64_t last = static_cast<int64_t>(shape.size()) - 1;
    x = ctx.emit("strided_slice", {x}, {{"begin", AttrValue::ints({0})}, {"end", AttrValue::ints({*a * *a})},
                                         {"strides", AttrValue::ints({*a + 1})}, {"axes", AttrValue::ints({last})}});
    term = rest + term[p];
    p = static_cast<size_t>(-1);  // rescan the new term
  }
  return x;
}

std::vector<Expr> convert_einsum(ImportContext& ctx) {
  int n = ctx.num_inputs();
  if (n < 1 || n > 2) ctx.unsupported(str_cat("Einsum of ", n, " operands (1 or 2 are supported)"));
  std::vector<Expr> xs;
  std::vector<int> ranks;
  for (int i = 0; i < n; ++i) {
    xs.push_back(ctx.input(i));
    ranks.push_back(xs.back().type().ndim());
  }
  Equation e = parse(ctx, ctx.attr_string("equation"), ranks);
  for (int i = 0; i < n; ++i) xs[i] = take_diagonals(ctx, xs[i], e.inputs[i]);
  // matmul: A = P+"ij", B = P+"jk", out = P+"ik".
  if (n == 2 && e.inputs[0].size() >= 2 && e.inputs[0].size() == e.inputs[1].size() && e.output.size() == e.inputs[0].size()) {
    const std::string &a = e.inputs[0], &b = e.inputs[1];
    size_t r = a.size();
    std::string p = a.substr(0, r - 2);
    char i = a[r - 2], j = a[r - 1], k = b[r - 1];
    if (b.substr(0, r - 2) == p && b[r - 2] == j && e.output == p + i + k && i != k && j != i && j != k)
      return {ctx.emit("matmul", {xs[0], xs[1]})};
  }
  // One index order: the output's, then the summed indices.
  std::string order = e.output;
  for (const std::string& t : e.inputs)
    for (char c : t)
      if (order.find(c) == std::string::npos) order += c;
  Expr acc;
  for (int i = 0; i < n; ++i) {
    const std::string& t = e.inputs[i];
    // Transpose the operand's axes into `order`'s relative order, then insert the missing ones.
    std::vector<int64_t> perm;
    for (char c : order)
      if (size_t pos = t.find(c); pos != std::string::npos) perm.push_back(static_cast<int64_t>(pos));
    Expr x = xs[i];
    bool identity = true;
    for (size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == static_cast<int64_t>(k);
    if (!identity) x = ctx.emit("transpose", {x}, {{"axes", AttrValue::ints(perm)}});
    std::vector<int64_t> missing;
    for (size_t k = 0; k < order.size(); ++k)
      if (t.find(order[k]) == std::string::npos) missing.push_back(static_cast<int64_t>(k));
    if (!missing.empty()) x = ctx.emit("expand_dims", {x}, {{"axes", AttrValue::ints(missing)}});
    acc = acc.defined() ? ctx.emit("multiply", {acc, x}) : x;
  }
  std::vector<int64_t> summed;
  for (size_t k = e.output.size(); k < order.size(); ++k) summed.push_back(static_cast<int64_t>(k));
  if (!summed.empty()) acc = ctx.emit("sum", {acc}, {{"axes", AttrValue::ints(summed)}, {"keepdims", 0}});
  return {acc};
}

}  // namespace

void register_einsum_converter() { register_converter("Einsum", convert_einsum); }

}  // namespace anvil::frontend::onnx
