// vectorize pass: vectorized loops -> Ramp/Broadcast vector code, or a serial fallback.
#include "anvil/tir/passes/vectorize.h"

#include <unordered_map>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::tir::passes {

namespace {

using namespace ir;  // NOLINT(google-build-using-namespace): node classes

struct CannotVectorize {};

// Rewrites one loop body with the loop var as a ramp of `lanes` lanes.
class BodyVectorizer {
 public:
  BodyVectorizer(const Var& v, const PrimExpr& ramp, int lanes) : lanes_(lanes) { vars_[v.get()] = ramp; }

  PrimExpr widen(const PrimExpr& e) const {
    return e.dtype().lanes() == lanes_ ? e : BroadcastNode::make(e, lanes_);
  }

  PrimExpr expr(const PrimExpr& e) {
    if (e.dtype().lanes() != 1) throw CannotVectorize();  // already a vector: nested vectorization
    switch (e.kind()) {
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm:
      case ExprKind::kStringImm: return e;
      case ExprKind::kVar: {
        auto it = vars_.find(e.as<VarNode>());
        return it == vars_.end() ? e : it->second;
      }
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec)                                      \
  case ExprKind::k##Name: {                                                               \
    auto* n = e.as<Name##Node>();                                                         \
    PrimExpr a = expr(n->a()), b = expr(n->b());                                          \
    if (a.same_as(n->a()) && b.same_as(n->b())) return e;                                 \
    if (a.dtype().lanes() == 1 && b.dtype().lanes() == 1) return Name##Node::make(a, b);  \
    return Name##Node::make(widen(a), widen(b));                                          \
  }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
      case ExprKind::kNot: {
        PrimExpr a = expr(e.as<NotNode>()->a());
        return a.same_as(e.as<NotNode>()->a()) ? e : NotNode::make(a);
      }
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        PrimExpr c = expr(n->cond()), t = expr(n->true_value()), f = expr(n->false_value());
        if (c.same_as(n->cond()) && t.same_as(n->true_value()) && f.same_as(n->false_value())) return e;
        if (t.dtype().lanes() == 1 && f.dtype().lanes() == 1 && c.dtype().lanes() == 1) return SelectNode::make(c, t, f);
        return SelectNode::make(c.dtype().lanes() == 1 ? c : c, widen(t), widen(f));
      }
      case ExprKind::kCast: {
        auto* n = e.as<CastNode>();
        PrimExpr v = expr(n->value());
        if (v.same_as(n->value())) return e;
        return CastNode::make(with_lanes(n->dtype(), v.dtype().lanes()), v);
      }
      case ExprKind::kLet: {
        auto* n = e.as<LetNode>();
        PrimExpr value = expr(n->value());
        if (value.dtype().lanes() == 1) {
          PrimExpr body = expr(n->body());
          if (value.same_as(n->value()) && body.same_as(n->body())) return e;
          return LetNode::make(n->var(), value, body);
        }
        Var vv(n->var().name(), value.dtype());
        vars_[n->var().get()] = vv;
        PrimExpr body = expr(n->body());
        return LetNode::make(vv, value, body);
      }
      case ExprKind::kCall: {
        auto* n = e.as<CallNode>();
        std::vector<PrimExpr> args;
        bool vec = false, changed = false;
        for (const auto& a : n->args()) {
          args.push_back(expr(a));
          vec |= args.back().dtype().lanes() != 1;
          changed |= !args.back().same_as(a);
        }
        if (!changed) return e;
        if (vec)
          for (auto& a : args) a = widen(a);
        return CallNode::make(n->op(), args);
      }
      case ExprKind::kBufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        bool changed = false;
        std::vector<PrimExpr> idx = indices(n->indices(), &changed);
        return changed ? BufferLoadNode::make(n->buffer(), idx) : e;
      }
      default: throw CannotVectorize();  // Ramp/Broadcast in the body
    }
  }

  // Indices rewritten; all widened when any is a vector.
  std::vector<PrimExpr> indices(const std::vector<PrimExpr>& in, bool* changed) {
    std::vector<PrimExpr> out;
    bool vec = false;
    for (const auto& i : in) {
      out.push_back(expr(i));
      vec |= out.back().dtype().lanes() != 1;
      *changed |= !out.back().same_as(i);
    }
    if (vec)
      for (auto& i : out) i = arith::simplify(widen(i));
    return out;
  }

  Stmt stmt(const Stmt& s) {
    switch (s.kind()) {
      case StmtKind::kBufferStore: {
        auto* n = s.as<BufferStoreNode>();
        bool changed = false;
        std::vector<PrimExpr> idx = indices(n->indices(), &changed);
        PrimExpr value = expr(n->value());
        bool vec_index = !idx.empty() && idx[0].dtype().lanes() != 1;
        if (!vec_index && value.dtype().lanes() != 1) throw CannotVectorize();  // reduction into one element
        if (!changed && value.same_as(n->value())) return s;
        if (vec_index) value = widen(value);
        return BufferStoreNode::make(n->buffer(), arith::simplify(value), idx);
      }
      case StmtKind::kSeqStmt: {
        std::vector<Stmt> out;
        for (const auto& x : s.as<SeqStmtNode>()->seq()) out.push_back(stmt(x));
        return SeqStmtNode::make(out);
      }
      case StmtKind::kIfThenElse: {
        auto* n = s.as<IfThenElseNode>();
        PrimExpr c = expr(n->cond());
        if (c.dtype().lanes() != 1) throw CannotVectorize();  // data-dependent branch
        return IfThenElseNode::make(c, stmt(n->then_case()), n->else_case().defined() ? stmt(n->else_case()) : Stmt());
      }
      case StmtKind::kLetStmt: {
        auto* n = s.as<LetStmtNode>();
        PrimExpr value = expr(n->value());
        if (value.dtype().lanes() == 1) return LetStmtNode::make(n->var(), value, stmt(n->body()));
        Var vv(n->var().name(), value.dtype());
        vars_[n->var().get()] = vv;
        return LetStmtNode::make(vv, arith::simplify(value), stmt(n->body()));
      }
      case StmtKind::kEvaluate: return evaluate(expr(s.as<EvaluateNode>()->value()));
      case StmtKind::kAttrStmt: {
        auto* n = s.as<AttrStmtNode>();
        return AttrStmtNode::make(n->key(), n->node(), n->value(), stmt(n->body()));
      }
      case StmtKind::kAssertStmt: {
        // Kept scalar: a condition or message value that varies across the lanes has no one
        // message to report.
        auto* n = s.as<AssertStmtNode>();
        PrimExpr c = expr(n->condition());
        if (c.dtype().lanes() != 1) throw CannotVectorize();
        std::vector<PrimExpr> args;
        for (const auto& a : n->message_args()) {
          args.push_back(expr(a));
          if (args.back().dtype().lanes() != 1) throw CannotVectorize();
        }
        return AssertStmtNode::make(c, n->message(), stmt(n->body()), std::move(args));
      }
      default: throw CannotVectorize();  // For, Allocate
    }
  }

 private:
  int lanes_;
  std::unordered_map<const VarNode*, PrimExpr> vars_;
};

class Vectorizer : public StmtMutator {
 public:
  using StmtMutator::mutate_;
  Stmt mutate_(const ForNode* op) override {
    Stmt r = StmtMutator::mutate_(op);  // inner vectorized loops first (they fall back to serial)
    auto* f = r.as<ForNode>();
    if (!f || f->for_kind() != ForKind::kVectorized) return r;
    auto serial = [&] {
      return ForNode::make(f->loop_var(), f->min(), f->extent(), ForKind::kSerial, f->body(), "", f->annotations());
    };
    auto ext = as_const_int(arith::simplify(f->extent()));
    if (!ext || *ext > 65535) return serial();
    if (*ext <= 0) return evaluate(0);
    if (*ext == 1) return substitute(f->body(), ir::VarMap{{f->loop_var(), f->min()}});
    int lanes = static_cast<int>(*ext);
    try {
      BodyVectorizer v(f->loop_var(), RampNode::make(f->min(), make_const(f->min().dtype(), 1), lanes), lanes);
      return v.stmt(f->body());
    } catch (const CannotVectorize&) {
      return serial();
    }
  }
};

}  // namespace

Stmt vectorize(const Stmt& s) { return Vectorizer().mutate_stmt(s); }

PrimFunc vectorize(const PrimFunc& f) { return Vectorizer().mutate_func(f); }

}  // namespace anvil::tir::passes
