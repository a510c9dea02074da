// Linear forms of signed integer index expressions.
#include "anvil/arith/linear.h"

#include "anvil/arith/const_fold.h"
#include "anvil/arith/expr_compare.h"

namespace anvil::arith {

using namespace ir;  // NOLINT(google-build-using-namespace): node classes

namespace {
int64_t wadd(DataType t, int64_t a, int64_t b) {
  return *wrap_int(t, static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)));
}
int64_t wmul(DataType t, int64_t a, int64_t b) {
  return *wrap_int(t, static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)));
}
}  // namespace

bool is_linear_type(DataType t) { return t.is_int() && t.lanes() == 1; }

void add_term(Linear* L, const PrimExpr& e, int64_t k) {
  k = *wrap_int(L->t, k);
  if (k == 0) return;
  if (auto* imm = e.as<IntImmNode>()) {
    L->c = wadd(L->t, L->c, wmul(L->t, k, imm->value()));
    return;
  }
  for (auto it = L->terms.begin(); it != L->terms.end(); ++it) {
    if (expr_equal(it->e, e)) {
      it->k = wadd(L->t, it->k, k);
      if (it->k == 0) L->terms.erase(it);
      return;
    }
  }
  L->terms.push_back({e, k});
}

void collect_linear(Linear* L, const PrimExpr& e, int64_t k) {
  if (auto* n = e.as<AddNode>()) {
    collect_linear(L, n->a(), k);
    collect_linear(L, n->b(), k);
    return;
  }
  if (auto* n = e.as<SubNode>()) {
    collect_linear(L, n->a(), k);
    collect_linear(L, n->b(), wmul(L->t, k, -1));
    return;
  }
  if (auto* n = e.as<MulNode>()) {
    if (auto* c = n->b().as<IntImmNode>()) return collect_linear(L, n->a(), wmul(L->t, k, c->value()));
    if (auto* c = n->a().as<IntImmNode>()) return collect_linear(L, n->b(), wmul(L->t, k, c->value()));
  }
  add_term(L, e, k);
}

Linear to_linear(const PrimExpr& e) {
  Linear L{e.dtype(), {}, 0};
  collect_linear(&L, e, 1);
  return L;
}

PrimExpr from_linear(const Linear& L) {
  DataType t = L.t;
  auto imm = [t](int64_t v) { return IntImmNode::make(t, v); };
  auto scaled = [&](const PrimExpr& e, int64_t k) { return k == 1 ? e : MulNode::make(e, imm(k)); };
  PrimExpr out;
  int64_t c = L.c;
  bool any_positive = false;
  for (const auto& term : L.terms) any_positive |= term.k > 0;
  if (!any_positive && c != 0) {
    out = imm(c);
    c = 0;
  }
  for (const auto& term : L.terms)
    if (term.k > 0) out = out.defined() ? AddNode::make(out, scaled(term.e, term.k)) : scaled(term.e, term.k);
  for (const auto& term : L.terms) {
    if (term.k > 0) continue;
    int64_t neg = *wrap_int(t, wmul(t, term.k, -1));
    if (!out.defined())
      out = MulNode::make(term.e, imm(term.k));
    else if (neg > 0)
      out = SubNode::make(out, scaled(term.e, neg));
    else
      out = AddNode::make(out, scaled(term.e, term.k));
  }
  if (c != 0) {
    int64_t neg = *wrap_int(t, wmul(t, c, -1));
    if (!out.defined())
      out = imm(c);
    else if (c < 0 && neg > 0)
      out = SubNode::make(out, imm(neg));
    else
      out = AddNode::make(out, imm(c));
  }
  return out.defined() ? out : imm(0);
}

void normalize_linear(Linear* L) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < L->terms.size() && !changed; ++i) {
      LinearTerm term = L->terms[i];
      auto* fd = term.e.as<FloorDivNode>();
      auto* fm = term.e.as<FloorModNode>();
      PrimExpr x = fd ? fd->a() : fm ? fm->a() : PrimExpr();
      auto* cimm = fd ? fd->b().as<IntImmNode>() : fm ? fm->b().as<IntImmNode>() : nullptr;
      if (!cimm || cimm->value() <= 0) continue;
      int64_t c = cimm->value();
      Linear cand = *L;
      cand.terms.erase(cand.terms.begin() + static_cast<std::ptrdiff_t>(i));
      if (fd) {
        // k*floordiv(X, c) with k = q*c equals q*X - q*floormod(X, c).
        if (term.k % c != 0) continue;
        int64_t q = term.k / c;
        collect_linear(&cand, x, q);
        add_term(&cand, FloorModNode::make(x, PrimExpr(cimm)), -q);
      } else {
        // k*floormod(X, c) equals k*X - k*c*floordiv(X, c).
        collect_linear(&cand, x, term.k);
        add_term(&cand, FloorDivNode::make(x, PrimExpr(cimm)), wmul(L->t, wmul(L->t, term.k, -1), c));
      }
      if (cand.terms.size() < L->terms.size()) {
        *L = std::move(cand);
        changed = true;
      }
    }
  }
}

}  // namespace anvil::arith
