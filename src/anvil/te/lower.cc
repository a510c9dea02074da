// te::lower: stage table, inlining, checks, realisation, and the function around the nests.
#include "anvil/te/lower.h"

#include <unordered_map>
#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"
#include "anvil/te/lower_state.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::te {
namespace {

using tir::Stmt;

// Substitutes the bodies of inlined stages for loads of them (their bodies are already
// expanded, so one level suffices).
class Inliner : public ir::ExprMutator {
 public:
  explicit Inliner(LowerState* s) : state_(s) {}
  using ir::ExprMutator::mutate_;
  PrimExpr mutate_(const ir::BufferLoadNode* op) override {
    PrimExpr e = ir::ExprMutator::mutate_(op);
    auto* load = e.as<ir::BufferLoadNode>();
    auto it = state_->by_buffer.find(load->buffer().get());
    if (it == state_->by_buffer.end() || !state_->stages[it->second].is_inline) return e;
    const StageInfo& t = state_->stages[it->second];
    ir::VarMap map;
    const auto& axes = t.stage->op->axis();
    for (size_t d = 0; d < axes.size(); ++d) map[axes[d].var()] = load->indices()[d];
    return ir::substitute(t.body, map);
  }

 private:
  LowerState* state_;
};

bool reads(const PrimExpr& e, const ir::BufferNode* b) {
  struct V : ir::ExprVisitor {
    const ir::BufferNode* b;
    bool found = false;
    using ir::ExprVisitor::visit_;
    void visit_(const ir::BufferLoadNode* op) override {
      if (op->buffer().get() == b) found = true;
      ir::ExprVisitor::visit_(op);
    }
  } v;
  v.b = b;
  v.visit_expr(e);
  return v.found;
}

// Whether reader r runs inside the attach loop of stage i (at or below it).
bool runs_inside(LowerState* state, int r, const StageNode* target, int target_pos) {
  const StageNode* st = state->stages[r].stage.get();
  if (st == target) return true;
  while (st->attach == AttachKind::kScope) {
    auto parent = st->attach_stage.lock();
    if (parent.get() == target) return parent->leaf_index(st->attach_ivar) >= target_pos;
    st = parent.get();
  }
  return false;
}

void check_attachments(LowerState* state) {
  for (size_t i = 0; i < state->stages.size(); ++i) {
    StageInfo& info = state->stages[i];
    const StageNode* st = info.stage.get();
    if (st->attach != AttachKind::kScope) continue;
    auto target = st->attach_stage.lock();
    if (!target || !state->by_stage.count(target.get()))
      value_error(st->describe(), ": computed at a stage that is not part of this schedule");
    if (target->attach == AttachKind::kInline)
      value_error(st->describe(), ": computed at ", target->describe(), ", which is inlined");
    int pos = target->leaf_index(st->attach_ivar);
    if (pos < 0)
      value_error(st->describe(), ": computed at axis '", st->attach_ivar->name(), "' of ", target->describe(),
                  ", which is no longer a leaf axis (it was split or fused after compute_at)");
    for (int r : info.readers)
      if (!runs_inside(state, r, target.get(), pos))
        value_error(st->describe(), ": computed at ", target->describe(), " axis '", st->attach_ivar->name(), "', but ",
                    state->stages[r].stage->describe(),
                    " also reads it outside that loop; compute it at the root or at a common loop");
  }
}

std::vector<PrimExpr> aligned_strides(const StageInfo& info, const std::vector<PrimExpr>& shape) {
  const auto& aligns = info.stage->storage_aligns;
  if (aligns.empty()) return {};
  std::vector<PrimExpr> strides(shape.size());
  PrimExpr running = ir::int_imm(1, DataType::int32());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    PrimExpr s = running;
    for (const StorageAlign& a : aligns) {
      if (a.dim != d) continue;
      // smallest k * factor + offset >= s
      PrimExpr f = ir::int_imm(a.factor, s.dtype()), o = ir::int_imm(a.offset, s.dtype());
      s = fold_add(fold_mul(fold_ceildiv(fold_sub(s, o), f), f), o);
      if (auto c = ir::as_const_int(s); c && *c < 0) s = o;
    }
    strides[d] = s;
    running = fold_mul(s, shape[d]);
  }
  return strides;
}

void realize(LowerState* state) {
  for (StageInfo& info : state->stages) {
    if (info.is_placeholder || info.is_inline) continue;
    const Tensor& op = info.stage->op;
    if (info.in_args) {
      info.buffer = op->buffer();
      continue;
    }
    // The largest extent over all loop iterations when that is a constant (GPU scopes need
    // constant sizes), else the region's own extent.
    std::vector<PrimExpr> shape;
    for (size_t d = 0; d < info.region.size(); ++d) {
      const PrimExpr& ext = info.region[d].extent;
      std::optional<int64_t> c;
      for (const PrimExpr& e : {info.unclamped_extent[d], ext}) {
        // Sound bounds only: the simplified extent when constant, else its interval over the
        // loop ranges (the analyzer's constant bound of a size var is its dtype's range).
        PrimExpr simple = state->analyzer.simplify(e);
        std::optional<int64_t> ce = ir::as_const_int(simple);
        if (!ce) {
          // min(64 * b + 63, m - 1) - 64 * b + 1 -> min(64, m - 64 * b): bounded by 64 even
          // for a symbolic m (the analyzer's constant bound of either side of the min).
          PrimExpr spread = add_into_min(state->analyzer, simple);
          if (auto whole = eval_interval(spread, state->loops)) ce = ir::as_const_int(whole->hi);
          // Only for GPU scopes ("shared", "local"), which must have a constant size: the
          // analyzer's bound holds inside the attach loops, not for a global buffer allocated
          // outside them (a causal attention's matmul got a size too small that way).
          if (info.stage->scope != "global" && ir::is_integer(simple.dtype())) {
            arith::ConstIntBound b = state->analyzer.const_int_bound(spread);
            if (b.max > 0 && b.max < (int64_t{1} << 24) && (!ce || b.max < *ce)) ce = b.max;  // not a dtype range
          }
        }
        if (ce && (!c || *ce < *c)) c = ce;
      }
      shape.push_back(c && !ir::as_const_int(ext) ? ir::int_imm(*c, ext.dtype()) : ext);
    }
    info.buffer = Buffer::make(Var(op.name(), ir::handle_type()), op.dtype(), shape, aligned_strides(info, shape),
                               PrimExpr(), op.name(), ir::kDefaultBufferAlignment, info.stage->scope);
    info.allocate = true;
  }
}

// The variables the lowered body uses outside any scope defining them (loops, lets, allocations)
// and not among `defined` (scalar params and the shape/stride/offset vars of argument buffers),
// in order of first use.
class FreeVarFinder : public tir::StmtVisitor {
 public:
  explicit FreeVarFinder(std::unordered_set<const ir::VarNode*> defined) : scope_(std::move(defined)) {}
  std::vector<Var> free;

  using tir::StmtVisitor::visit_;
  void visit_(const ir::VarNode* op) override {
    if (!scope_.count(op) && reported_.insert(op).second) free.emplace_back(op);
  }
  void visit_(const ir::LetNode* op) override {
    visit_expr(op->value());
    scoped(op->var(), [&] { visit_expr(op->body()); });
  }
  void visit_(const ir::BufferLoadNode* op) override {
    visit_buffer(op->buffer());
    tir::StmtVisitor::visit_(op);
  }
  void visit_(const tir::BufferStoreNode* op) override {
    visit_buffer(op->buffer());
    tir::StmtVisitor::visit_(op);
  }
  void visit_(const tir::ForNode* op) override {
    visit_expr(op->min());
    visit_expr(op->extent());
    for (const auto& [k, v] : op->annotations()) visit_expr(v);
    scoped(op->loop_var(), [&] { visit_stmt(op->body()); });
  }
  void visit_(const tir::LetStmtNode* op) override {
    visit_expr(op->value());
    scoped(op->var(), [&] { visit_stmt(op->body()); });
  }
  void visit_(const tir::AllocateNode* op) override {
    for (const auto& e : op->extents()) visit_expr(e);
    scoped(op->buffer_var(), [&] { visit_stmt(op->body()); });
  }

 private:
  template <typename F>
  void scoped(const Var& v, F&& fn) {
    bool added = scope_.insert(v.get()).second;
    fn();
    if (added) scope_.erase(v.get());
  }
  void visit_buffer(const Buffer& b) {
    for (const auto& d : b->shape()) visit_expr(d);
    for (const auto& st : b->strides()) visit_expr(st);
    if (b->elem_offset().defined()) visit_expr(b->elem_offset());
  }

  std::unordered_set<const ir::VarNode*> scope_;
  std::unordered_set<const ir::VarNode*> reported_;
};

// Replaces buffers (loads and stores) by the ones mapped.
class BufferReplacer : public tir::StmtMutator {
 public:
  explicit BufferReplacer(const std::unordered_map<const ir::BufferNode*, Buffer>& map) : map_(map) {}
  Buffer mutate_buffer(const Buffer& b) override {
    auto it = map_.find(b.get());
    return it == map_.end() ? b : it->second;
  }

 private:
  const std::unordered_map<const ir::BufferNode*, Buffer>& map_;
};

// A dimension of an argument tensor whose extent is a listed scalar param n (shape [n]): the
// param buffer gets a fresh size var for the tensor's actual extent there (bound at the kernel
// entry like any symbolic dim), the body's accesses use that buffer, and an AssertStmt at the
// top checks n against it. So a wrong n fails before the body runs, with a ValueError naming n,
// its value, the tensor and the dimension instead of a generic shape mismatch.
Stmt check_listed_shape_vars(const std::string& name, const std::unordered_set<const ir::VarNode*>& scalar_params,
                             std::vector<tir::FuncParam>* params, Stmt body) {
  struct Check {
    Var param, actual;
    std::string message;
  };
  std::vector<Check> checks;
  std::unordered_map<const ir::BufferNode*, Buffer> replaced;
  for (tir::FuncParam& p : *params) {
    Buffer* b = std::get_if<Buffer>(&p);
    if (!b) continue;
    const Buffer& old = *b;
    std::vector<PrimExpr> shape = old->shape();
    std::string shape_text;
    for (size_t d = 0; d < shape.size(); ++d) shape_text += (d ? ", " : "") + ir::to_string(shape[d]);
    bool changed = false;
    for (size_t d = 0; d < shape.size(); ++d) {
      auto* v = shape[d].as<ir::VarNode>();
      if (!v || !scalar_params.count(v)) continue;
      Var actual = ir::size_var(str_cat(old->name(), "_shape_", d), v->dtype());
      checks.push_back({Var(v), actual,
                        str_cat(name, ": argument '", v->name(), "' is {} but ", old->name(), ".shape[", d, "] is {} (",
                                old->name(), " has shape [", shape_text, "])")});
      shape[d] = actual;
      changed = true;
    }
    if (!changed) continue;
    Buffer fresh = Buffer::make(old->data(), old->dtype(), shape, old->strides(), old->elem_offset(), old->name(),
                                old->alignment(), old->scope());
    replaced[old.get()] = fresh;
    p = fresh;
  }
  if (checks.empty()) return body;
  body = BufferReplacer(replaced).mutate_stmt(body);
  for (auto it = checks.rbegin(); it != checks.rend(); ++it)
    body = tir::assert_stmt(ir::eq(it->param, it->actual), it->message, body, {it->param, it->actual});
  return body;
}

void define_vars_of(const PrimExpr& e, std::unordered_set<const ir::VarNode*>* defined) {
  if (!e.defined()) return;
  if (auto* v = e.as<ir::VarNode>()) defined->insert(v);
}

}  // namespace

tir::PrimFunc make_kernel(const std::string& name, std::vector<tir::FuncParam> params, tir::Stmt body) {
  std::unordered_set<const ir::VarNode*> scalar_params;
  for (const tir::FuncParam& p : params)
    if (const Var* v = std::get_if<Var>(&p)) scalar_params.insert(v->get());
  body = check_listed_shape_vars(name, scalar_params, &params, std::move(body));
  return tir::make_prim_func(name, params, body);
}

tir::PrimFunc lower(const Schedule& schedule, const std::vector<Tensor>& args, const std::string& name) {
  return lower(schedule, std::vector<LowerArg>(args.begin(), args.end()), name);
}

tir::PrimFunc lower(const Schedule& schedule, const std::vector<LowerArg>& args, const std::string& name) {
  if (!schedule.get()) value_error("lower: the schedule is undefined");
  LowerState state;
  ScheduleNode* sch = schedule.get();
  for (Stage& s : sch->stages) {
    StageInfo info;
    info.stage = s;
    info.is_placeholder = !s->op.is_compute();
    info.is_inline = s->attach == AttachKind::kInline;
    state.by_buffer[s->op->buffer().get()] = static_cast<int>(state.stages.size());
    state.by_stage[s.get()] = static_cast<int>(state.stages.size());
    state.stages.push_back(std::move(info));
  }
  std::vector<tir::FuncParam> params;
  std::unordered_set<const ir::BufferNode*> arg_buffers;
  // Scalar params and the symbolic shape/stride/offset vars of the argument buffers: what the
  // body may use besides its own loop, let and allocation vars.
  std::unordered_set<const ir::VarNode*> defined, scalar_params;
  for (size_t k = 0; k < args.size(); ++k) {
    if (const Var* v = std::get_if<Var>(&args[k])) {
      if (!v->defined()) value_error("lower '", name, "': argument ", k, " is an undefined variable");
      if (ir::is_handle(v->dtype()))
        value_error("lower '", name, "': argument ", k, " is the variable '", v->name(), "' of dtype ",
                    ir::dtype_name(v->dtype()), "; scalar arguments are int, uint, float or bool variables");
      defined.insert(v->get());
      if (!scalar_params.insert(v->get()).second) value_error("lower '", name, "': argument '", v->name(), "' is given twice");
      params.push_back(*v);
      continue;
    }
    const Tensor& t = std::get<Tensor>(args[k]);
    if (!t.defined()) value_error("lower '", name, "': an argument tensor is undefined");
    Stage* s = sch->find_stage(t);
    if (!s && !t.is_compute()) {
      // A placeholder the outputs do not read (an empty reduction's input, an empty concat
      // operand): still a parameter, so the kernel keeps its caller's argument convention.
      const Buffer& b = t->buffer();
      if (!arg_buffers.insert(b.get()).second) value_error("lower '", name, "': argument '", t.name(), "' is given twice");
      for (const PrimExpr& d : b->shape()) define_vars_of(d, &defined);
      for (const PrimExpr& st : b->strides()) define_vars_of(st, &defined);
      define_vars_of(b->elem_offset(), &defined);
      defined.insert(b->data().get());
      params.push_back(b);
      continue;
    }
    if (!s) value_error("lower '", name, "': argument '", t.name(), "' is not part of the schedule");
    StageInfo& info = state.info(*s);
    if (!arg_buffers.insert((*s)->op->buffer().get()).second)
      value_error("lower '", name, "': argument '", t.name(), "' is given twice");
    if (info.is_inline) value_error("lower '", name, "': argument '", t.name(), "' is inlined (compute_inline)");
    info.in_args = true;
    const Buffer& b = (*s)->op->buffer();
    for (const PrimExpr& d : b->shape()) define_vars_of(d, &defined);
    for (const PrimExpr& st : b->strides()) define_vars_of(st, &defined);
    define_vars_of(b->elem_offset(), &defined);
    defined.insert(b->data().get());
    params.push_back(b);
  }
  for (StageInfo& info : state.stages)
    if (info.stage->is_output && !info.in_args)
      value_error("lower '", name, "': output '", info.stage->op.name(), "' is not among the arguments");
  // Bodies with inlined producers substituted, and who reads whom.
  Inliner inliner(&state);
  for (StageInfo& info : state.stages)
    if (!info.is_placeholder) info.body = inliner.mutate_expr(info.stage->op->body());
  for (size_t r = 0; r < state.stages.size(); ++r) {
    StageInfo& reader = state.stages[r];
    if (reader.is_placeholder || reader.is_inline) continue;
    for (size_t p = 0; p < state.stages.size(); ++p)
      if (p != r && reads(reader.body, state.stages[p].stage->op->buffer().get())) {
        if (state.stages[p].is_placeholder && !state.stages[p].in_args)
          value_error("lower '", name, "': placeholder '", state.stages[p].stage->op.name(), "' is read by ",
                      reader.stage->describe(), " but is not among the arguments");
        state.stages[p].readers.push_back(static_cast<int>(r));
      }
  }
  check_attachments(&state);
  infer_bounds(&state);
  realize(&state);
  // Root-level stages in order; each allocation spans from its nest to the end.
  Stmt body;
  for (int i = static_cast<int>(state.stages.size()) - 1; i >= 0; --i) {
    StageInfo& info = state.stages[i];
    if (info.is_placeholder || info.is_inline || info.stage->attach != AttachKind::kRoot) continue;
    body = body.defined() ? tir::seq({make_stage_nest(&state, i), body}) : make_stage_nest(&state, i);
    body = wrap_realize(&state, i, body);
  }
  if (!body.defined()) body = tir::evaluate(0);
  FreeVarFinder finder(std::move(defined));
  finder.visit_stmt(body);
  if (!finder.free.empty()) {
    std::string names;
    for (const Var& v : finder.free) names += (names.empty() ? "'" : ", '") + v.name() + "'";
    value_error("lower '", name, "': the computation uses the variable", finder.free.size() > 1 ? "s " : " ", names,
                " (", ir::dtype_name(finder.free[0].dtype()),
                "), which is neither an argument nor a shape variable of an argument tensor; list it among the "
                "arguments to pass it as a scalar parameter (e.g. lower(s, [A, ",
                finder.free[0].name(), ", B]))");
  }
  body = check_listed_shape_vars(name, scalar_params, &params, simplify_indices(body));
  return tir::make_prim_func(name, params, body);
}

}  // namespace anvil::te
