// Structural equality and hash of statements and functions.
#include "anvil/tir/structural_equal.h"

namespace anvil::tir {
namespace {

class Equalizer : public ir::StructuralEqualizer {
 public:
  using StructuralEqualizer::StructuralEqualizer;

  bool stmt(const Stmt& a, const Stmt& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
      case StmtKind::kFor: {
        auto *x = a.as<ForNode>(), *y = b.as<ForNode>();
        if (x->for_kind() != y->for_kind() || x->thread_tag() != y->thread_tag()) return false;
        if (!expr(x->min(), y->min()) || !expr(x->extent(), y->extent())) return false;
        if (x->annotations().size() != y->annotations().size()) return false;
        for (auto i = x->annotations().begin(), j = y->annotations().begin(); i != x->annotations().end(); ++i, ++j)
          if (i->first != j->first || !expr(i->second, j->second)) return false;
        return define_var(x->loop_var(), y->loop_var()) && stmt(x->body(), y->body());
      }
      case StmtKind::kBufferStore: {
        auto *x = a.as<BufferStoreNode>(), *y = b.as<BufferStoreNode>();
        return buffer(x->buffer(), y->buffer()) && expr(x->value(), y->value()) && exprs(x->indices(), y->indices());
      }
      case StmtKind::kAllocate: {
        auto *x = a.as<AllocateNode>(), *y = b.as<AllocateNode>();
        return x->dtype() == y->dtype() && x->scope() == y->scope() && exprs(x->extents(), y->extents()) &&
               define_var(x->buffer_var(), y->buffer_var()) && stmt(x->body(), y->body());
      }
      case StmtKind::kLetStmt: {
        auto *x = a.as<LetStmtNode>(), *y = b.as<LetStmtNode>();
        return expr(x->value(), y->value()) && define_var(x->var(), y->var()) && stmt(x->body(), y->body());
      }
      case StmtKind::kIfThenElse: {
        auto *x = a.as<IfThenElseNode>(), *y = b.as<IfThenElseNode>();
        return expr(x->cond(), y->cond()) && stmt(x->then_case(), y->then_case()) &&
               stmt(x->else_case(), y->else_case());
      }
      case StmtKind::kSeqStmt: {
        auto *x = a.as<SeqStmtNode>(), *y = b.as<SeqStmtNode>();
        if (x->size() != y->size()) return false;
        for (size_t i = 0; i < x->size(); ++i)
          if (!stmt(x->seq()[i], y->seq()[i])) return false;
        return true;
      }
      case StmtKind::kEvaluate:
        return expr(a.as<EvaluateNode>()->value(), b.as<EvaluateNode>()->value());
      case StmtKind::kAttrStmt: {
        auto *x = a.as<AttrStmtNode>(), *y = b.as<AttrStmtNode>();
        return x->key() == y->key() && expr(x->node(), y->node()) && expr(x->value(), y->value()) &&
               stmt(x->body(), y->body());
      }
      case StmtKind::kAssertStmt: {
        auto *x = a.as<AssertStmtNode>(), *y = b.as<AssertStmtNode>();
        return x->message() == y->message() && expr(x->condition(), y->condition()) &&
               exprs(x->message_args(), y->message_args()) && stmt(x->body(), y->body());
      }
    }
    return false;
  }

  bool func(const PrimFunc& a, const PrimFunc& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    const PrimFuncNode *x = a.get(), *y = b.get();
    if (x->params().size() != y->params().size() || x->buffer_map().size() != y->buffer_map().size() ||
        x->ret_type() != y->ret_type())
      return false;
    for (size_t i = 0; i < x->params().size(); ++i)
      if (!define_var(x->params()[i], y->params()[i])) return false;
    for (size_t i = 0; i < x->buffer_map().size(); ++i) {
      const auto& [pa, ba] = x->buffer_map()[i];
      const auto& [pb, bb] = y->buffer_map()[i];
      if (!expr(pa, pb) || !define_buffer(ba, bb)) return false;
    }
    if (!attrs(x->attrs(), y->attrs())) return false;
    return stmt(x->body(), y->body());
  }

 private:
  bool attrs(const FuncAttrs& a, const FuncAttrs& b) {
    auto i = a.begin(), j = b.begin();
    while (true) {
      if (i != a.end() && i->first == attr::kGlobalSymbol) ++i;
      if (j != b.end() && j->first == attr::kGlobalSymbol) ++j;
      if (i == a.end() || j == b.end()) return i == a.end() && j == b.end();
      if (i->first != j->first || !expr(i->second, j->second)) return false;
      ++i, ++j;
    }
  }
};

class Hasher : public ir::StructuralHasher {
 public:
  using StructuralHasher::StructuralHasher;

  uint64_t stmt(const Stmt& s) {
    if (!s.defined()) return 0x2001;
    uint64_t h = combine(0x3000 + static_cast<uint64_t>(s.kind()), 0);
    switch (s.kind()) {
      case StmtKind::kFor: {
        auto* x = s.as<ForNode>();
        h = combine(h, static_cast<uint64_t>(x->for_kind()));
        h = combine(h, str_hash(x->thread_tag()));
        h = combine(h, expr(x->min()));
        h = combine(h, expr(x->extent()));
        for (const auto& [k, v] : x->annotations()) h = combine(combine(h, str_hash(k)), expr(v));
        h = combine(h, define_var(x->loop_var()));
        return combine(h, stmt(x->body()));
      }
      case StmtKind::kBufferStore: {
        auto* x = s.as<BufferStoreNode>();
        h = combine(h, buffer(x->buffer()));
        h = combine(h, expr(x->value()));
        return combine(h, exprs(x->indices()));
      }
      case StmtKind::kAllocate: {
        auto* x = s.as<AllocateNode>();
        h = combine(h, str_hash(x->dtype().to_string() + "/" + x->scope()));
        h = combine(h, exprs(x->extents()));
        h = combine(h, define_var(x->buffer_var()));
        return combine(h, stmt(x->body()));
      }
      case StmtKind::kLetStmt: {
        auto* x = s.as<LetStmtNode>();
        h = combine(h, expr(x->value()));
        h = combine(h, define_var(x->var()));
        return combine(h, stmt(x->body()));
      }
      case StmtKind::kIfThenElse: {
        auto* x = s.as<IfThenElseNode>();
        h = combine(h, expr(x->cond()));
        h = combine(h, stmt(x->then_case()));
        return combine(h, stmt(x->else_case()));
      }
      case StmtKind::kSeqStmt:
        for (const auto& st : s.as<SeqStmtNode>()->seq()) h = combine(h, stmt(st));
        return h;
      case StmtKind::kEvaluate:
        return combine(h, expr(s.as<EvaluateNode>()->value()));
      case StmtKind::kAttrStmt: {
        auto* x = s.as<AttrStmtNode>();
        h = combine(h, str_hash(x->key()));
        h = combine(h, expr(x->node()));
        h = combine(h, expr(x->value()));
        return combine(h, stmt(x->body()));
      }
      case StmtKind::kAssertStmt: {
        auto* x = s.as<AssertStmtNode>();
        h = combine(h, str_hash(x->message()));
        h = combine(h, expr(x->condition()));
        h = combine(h, exprs(x->message_args()));
        return combine(h, stmt(x->body()));
      }
    }
    return h;
  }

  uint64_t func(const PrimFunc& f) {
    if (!f.defined()) return 0x2002;
    const PrimFuncNode* x = f.get();
    uint64_t h = combine(0x2003, x->params().size());
    for (const auto& p : x->params()) h = combine(h, define_var(p));
    for (const auto& [p, b] : x->buffer_map()) h = combine(combine(h, expr(p)), define_buffer(b));
    h = combine(h, str_hash(ir::dtype_name(x->ret_type())));
    for (const auto& [k, v] : x->attrs())
      if (k != attr::kGlobalSymbol) h = combine(combine(h, str_hash(k)), expr(v));
    return combine(h, stmt(x->body()));
  }
};

}  // namespace

bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars) {
  Equalizer eq(map_free_vars);
  return eq.stmt(a, b);
}

bool structural_equal(const PrimFunc& a, const PrimFunc& b, bool map_free_vars) {
  Equalizer eq(map_free_vars);
  return eq.func(a, b);
}

uint64_t structural_hash(const Stmt& s, bool map_free_vars) {
  Hasher h(map_free_vars);
  return h.stmt(s);
}

uint64_t structural_hash(const PrimFunc& f, bool map_free_vars) {
  Hasher h(map_free_vars);
  return h.func(f);
}

}  // namespace anvil::tir
