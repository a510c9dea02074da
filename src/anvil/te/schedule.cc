// Schedule construction, stage lookup and the attachment primitives.
#include "anvil/te/schedule.h"

#include <functional>
#include <unordered_set>

#include "anvil/base/error.h"

namespace anvil::te {

std::string StageNode::describe() const { return "stage '" + op.name() + "'"; }

const IterAttr* StageNode::find_attr(const IterVar& iv) const {
  auto it = iter_attrs.find(iv.get());
  return it == iter_attrs.end() ? nullptr : &it->second;
}

int StageNode::leaf_index(const IterVar& iv) const {
  for (size_t i = 0; i < leaf_iter_vars.size(); ++i)
    if (leaf_iter_vars[i].same_as(iv)) return static_cast<int>(i);
  return -1;
}

const Tensor& Stage::op() const { return node_->op; }
const std::vector<IterVar>& Stage::leaf_iter_vars() const { return node_->leaf_iter_vars; }

Stage* ScheduleNode::find_stage(const Tensor& t) {
  for (Stage& s : stages)
    if (s->op.same_as(t)) return &s;
  for (Stage& s : stages)
    if (s->origin_op.same_as(t)) return &s;
  return nullptr;
}

Stage& ScheduleNode::stage_of(const Tensor& t) {
  if (!t.defined()) value_error("schedule: looking up the stage of an undefined tensor");
  Stage* s = find_stage(t);
  if (!s) value_error("schedule: tensor '", t.name(), "' is not part of this schedule (not reached from its outputs)");
  return *s;
}

std::vector<Stage> ScheduleNode::readers_of(const Tensor& t) {
  std::vector<Stage> out;
  for (Stage& s : stages)
    for (const Tensor& in : s->op->inputs())
      if (in->buffer().same_as(t->buffer())) {
        out.push_back(s);
        break;
      }
  return out;
}

Schedule create_schedule(const std::vector<Tensor>& outputs) {
  auto node = std::make_shared<ScheduleNode>();
  if (outputs.empty()) value_error("create_schedule: no output tensors");
  std::unordered_set<const OperationNode*> visited;
  std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
    if (!visited.insert(t.get()).second) return;
    for (const Tensor& in : t->inputs()) visit(in);
    auto st = std::make_shared<StageNode>();
    st->op = t;
    st->origin_op = t;
    st->schedule = node.get();
    for (const IterVar& a : t->axis()) st->all_iter_vars.push_back(a);
    for (const IterVar& a : t->reduce_axis()) st->all_iter_vars.push_back(a);
    st->leaf_iter_vars = st->all_iter_vars;
    node->stages.push_back(Stage(st));
  };
  for (const Tensor& t : outputs) {
    if (!t.defined()) value_error("create_schedule: an output tensor is undefined");
    if (!t.is_compute()) value_error("create_schedule: output '", t.name(), "' is a placeholder, not a computation");
    visit(t);
    node->outputs.push_back(t);
  }
  for (Stage& s : node->stages)
    for (const Tensor& t : outputs)
      if (s->op.same_as(t)) s->is_output = true;
  return Schedule(node);
}

// ---- attachment ---------------------------------------------------------------------------

void Stage::compute_at(const Stage& parent, const IterVar& axis) {
  StageNode* self = node_.get();
  if (!parent.get()) value_error(self->describe(), ": compute_at to an undefined stage");
  if (!self->op.is_compute()) value_error(self->describe(), ": a placeholder cannot be computed at another stage");
  if (parent.get() == self) value_error(self->describe(), ": compute_at to itself");
  if (self->is_output) value_error(self->describe(), ": an output stage cannot be computed at another stage");
  // The parent must consume this stage, directly or through other stages (softmax's max may be
  // computed per row of the final division, which reads it through exp); lowering checks that
  // every reader then runs inside the attach loop.
  std::unordered_set<const OperationNode*> seen;
  std::function<bool(const Tensor&)> depends = [&](const Tensor& t) {
    if (!seen.insert(t.get()).second) return false;
    for (const Tensor& in : t->inputs()) {
      if (in->buffer().same_as(self->op->buffer())) return true;
      Stage* st = self->schedule ? self->schedule->find_stage(in) : nullptr;
      if (depends(st ? (*st)->op : in)) return true;
    }
    return false;
  };
  if (!depends(parent.op()))
    value_error(self->describe(), ": compute_at to ", parent->describe(), ", which does not read '", self->op.name(),
                "' (compute_at needs a consumer)");
  if (parent->leaf_index(axis) < 0)
    value_error(self->describe(), ": compute_at axis '", axis.defined() ? axis->name() : "?",
                "' is not a leaf axis of ", parent->describe());
  // No cycles: the parent must not be attached (transitively) inside this stage.
  for (StageNode* p = parent.get(); p && p->attach == AttachKind::kScope;) {
    auto up = p->attach_stage.lock();
    if (up.get() == self) value_error(self->describe(), ": compute_at to ", parent->describe(), " would form a cycle");
    p = up.get();
  }
  if (parent->attach == AttachKind::kInline)
    value_error(self->describe(), ": compute_at to ", parent->describe(), ", which is inlined");
  self->attach = AttachKind::kScope;
  self->attach_stage = parent.node_;
  self->attach_ivar = axis;
}

void Stage::compute_inline() {
  StageNode* self = node_.get();
  if (!self->op.is_compute()) value_error(self->describe(), ": a placeholder cannot be inlined");
  if (self->op->reduce_kind() != ReduceKind::kNone)
    value_error(self->describe(), ": a reduction (", self->op.name(), ") cannot be inlined");
  if (self->is_output) value_error(self->describe(), ": an output stage cannot be inlined");
  if (!self->relations.empty() || !self->iter_attrs.empty())
    value_error(self->describe(), ": cannot inline a stage whose axes were scheduled (split/fuse/annotate)");
  self->attach = AttachKind::kInline;
  self->attach_stage.reset();
  self->attach_ivar = IterVar();
}

void Stage::compute_root() {
  node_->attach = AttachKind::kRoot;
  node_->attach_stage.reset();
  node_->attach_ivar = IterVar();
}

void Stage::set_scope(const std::string& scope) {
  if (!tir::is_valid_storage_scope(scope))
    value_error(node_->describe(), ": storage scope '", scope,
                "' is not one of global, shared, shared.dyn, local, warp");
  node_->scope = scope;
}

}  // namespace anvil::te
