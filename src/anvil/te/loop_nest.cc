// Loop-nest generation for one stage: loops in leaf order with their kinds and pragmas, split
// guards, stages attached at each loop, the reduction init, and the store.
#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/te/lower_state.h"
#include "anvil/te/reduction.h"
#include "anvil/tir/stmt_functor.h"
#include "anvil/tir/workgroup_barrier.h"

namespace anvil::te {
namespace {

using tir::Stmt;

// Loads of realised stages go to their buffers, offset by the region they hold.
class LoadRewriter : public ir::ExprMutator {
 public:
  explicit LoadRewriter(LowerState* s) : state_(s) {}
  using ir::ExprMutator::mutate_;
  PrimExpr mutate_(const ir::BufferLoadNode* op) override {
    PrimExpr e = ir::ExprMutator::mutate_(op);
    auto* load = e.as<ir::BufferLoadNode>();
    auto it = state_->by_buffer.find(load->buffer().get());
    if (it == state_->by_buffer.end()) return e;
    StageInfo& t = state_->stages[it->second];
    ANVIL_ICHECK(!t.is_inline, "inlined stage '", t.stage->op.name(), "' left in a body");
    if (!t.allocate) return e;
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < load->indices().size(); ++d) idx.push_back(fold_sub(load->indices()[d], t.region[d].min));
    return ir::buffer_load(t.buffer, std::move(idx));
  }

 private:
  LowerState* state_;
};

PrimExpr conjunction(const std::vector<PrimExpr>& conds) {
  PrimExpr c;
  for (const PrimExpr& x : conds) c = c.defined() ? ir::logical_and(c, x) : x;
  return c;
}

Stmt make_loop(const StageNode* st, const IterVar& leaf, const Var& var, const PrimExpr& extent, Stmt body) {
  const IterAttr* a = st->find_attr(leaf);
  tir::ForKind kind = a ? a->for_kind : tir::ForKind::kSerial;
  std::string tag = a ? a->thread_tag : "";
  tir::Annotations ann = a ? a->pragmas : tir::Annotations{};
  return tir::ForNode::make(var, ir::int_imm(0, var.dtype()), extent, kind, std::move(body), tag, ann);
}

// The store indices of stage info (region-relative for allocations, absolute for arguments).
std::vector<PrimExpr> store_indices(const StageInfo& info) {
  if (info.allocate) return info.rel;
  std::vector<PrimExpr> idx;
  for (size_t d = 0; d < info.rel.size(); ++d) idx.push_back(fold_add(info.region[d].min, info.rel[d]));
  return idx;
}

// The init nest of a reduction placed before leaf init_pos: loops over the data-parallel leaves
// from there on (fresh loop vars), guarded by their split conditions, storing the identity.
Stmt make_init(const StageInfo& info, int init_pos) {
  const StageNode* st = info.stage.get();
  const auto& leaves = st->leaf_iter_vars;
  ir::VarMap fresh;
  std::vector<std::pair<IterVar, Var>> loops;
  for (size_t p = static_cast<size_t>(init_pos); p < leaves.size(); ++p) {
    if (leaves[p].is_reduce()) continue;
    Var v(leaves[p]->name() + ".init", leaves[p].var().dtype());
    fresh[leaves[p].var()] = v;
    loops.push_back({leaves[p], v});
  }
  std::vector<PrimExpr> conds;
  for (const auto& g : info.guards)
    if (!g.reduce && g.position >= init_pos) conds.push_back(ir::substitute(g.cond, fresh));
  std::vector<PrimExpr> idx;
  for (const PrimExpr& i : store_indices(info)) idx.push_back(ir::substitute(i, fresh));
  const Tensor& op = st->op;
  Stmt body = tir::buffer_store(info.buffer, reduce_identity(op->reduce_kind(), op.dtype()), idx);
  if (!conds.empty()) body = tir::if_then_else(conjunction(conds), body);
  for (auto it = loops.rbegin(); it != loops.rend(); ++it)
    body = make_loop(st, it->first, it->second, info.extent.at(it->first.get()), body);
  return body;
}

}  // namespace

Stmt wrap_realize(LowerState* state, int i, Stmt body) {
  StageInfo& info = state->stages[i];
  if (!info.allocate) return body;
  const Buffer& b = info.buffer;
  for (const StorageAlign& a : info.stage->storage_aligns)
    body = tir::attr_stmt("buffer_dim_align", b->data(),
                          ir::string_imm(str_cat("dim=", a.dim, " factor=", a.factor, " offset=", a.offset)), body);
  // A 0-d stage (a full reduction read by a fused epilogue) holds one element.
  std::vector<PrimExpr> extents;
  if (b->strides().empty())
    extents = b->ndim() == 0 ? std::vector<PrimExpr>{PrimExpr(1)} : b->shape();
  else
    extents = {b->ndim() == 0 ? PrimExpr(1) : fold_mul(b->strides()[0], b->shape()[0])};
  return tir::allocate(b->data(), b->dtype(), extents, b->scope(), body);
}

Stmt make_stage_nest(LowerState* state, int i) {
  StageInfo& info = state->stages[i];
  const StageNode* st = info.stage.get();
  const Tensor& op = st->op;
  const auto& leaves = st->leaf_iter_vars;
  LoadRewriter rewriter(state);
  PrimExpr value = rewriter.mutate_expr(ir::substitute(info.body, info.root_value));
  std::vector<PrimExpr> idx = store_indices(info);
  int init_pos = -1;
  if (op->reduce_kind() != ReduceKind::kNone) {
    value = reduce_combine(op->reduce_kind(), ir::buffer_load(info.buffer, idx), value);
    for (size_t p = 0; p < leaves.size() && init_pos < 0; ++p)
      if (leaves[p].is_reduce()) init_pos = static_cast<int>(p);
  }
  Stmt body = tir::buffer_store(info.buffer, value, idx);
  for (int p = static_cast<int>(leaves.size()) - 1; p >= 0; --p) {
    // Stages computed at this loop run first inside it (producers before consumers).
    std::vector<int> attached;
    for (size_t j = 0; j < state->stages.size(); ++j) {
      const StageNode* other = state->stages[j].stage.get();
      if (other->attach == AttachKind::kScope && other->attach_stage.lock().get() == st &&
          other->attach_ivar.same_as(leaves[p]))
        attached.push_back(static_cast<int>(j));
    }
    if (!attached.empty()) {
      std::vector<Stmt> nests;
      for (int j : attached) nests.push_back(make_stage_nest(state, j));
      // Cooperative shared stages: a barrier after the last producer (all of the tile is
      // written before it is read) and after the body (all reads are done before the next
      // iteration overwrites it).
      bool shared = false;
      for (int j : attached) shared = shared || is_cooperative_shared(state->stages[j].stage.get());
      if (shared) {
        body = tir::workgroup_barrier_after(body);
        nests.back() = tir::workgroup_barrier_after(nests.back());
      }
      // Each allocation spans from its producer's nest to the end of the loop body.
      for (int a = static_cast<int>(attached.size()) - 1; a >= 0; --a)
        body = wrap_realize(state, attached[a], tir::seq({nests[a], body}));
    }
    std::vector<PrimExpr> conds;
    for (const auto& g : info.guards)
      if (g.position == p) conds.push_back(g.cond);
    if (!conds.empty()) body = tir::if_then_else(conjunction(conds), body);
    body = make_loop(st, leaves[p], leaves[p].var(), info.extent.at(leaves[p].get()), body);
    if (p == init_pos) body = tir::seq({make_init(info, init_pos), body});
  }
  return body;
}

}  // namespace anvil::te
