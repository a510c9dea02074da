// Schedules of tensor expressions: one Stage per operation, with TVM's primitives.
//
//   Schedule s = create_schedule({C});
//   auto [xo, xi] = s[C].split(C.axis(0), 8);
//   s[C].vectorize(xi);
//   s[B].compute_at(s[C], xo);
//   PrimFunc f = lower(s, {A, C}, "kernel");            // "anvil/te/lower.h"
//
// A Stage is a handle (copies share the stage); Schedule::operator[] returns a reference to the
// schedule's own handle. Primitives record their effect; lowering realises it. Illegal requests
// (an axis that is not a leaf of the stage, splitting an axis twice, reordering axes of another
// stage, vectorizing or parallelizing a reduction axis, compute_at to a stage that does not
// read this one, inlining a reduction, ...) throw anvil::Error (ValueError) naming the stage and
// the axis. Primitives act on *leaf* axes: a root axis is a leaf until it is split or fused.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anvil/te/tensor.h"
#include "anvil/tir/stmt.h"

namespace anvil::te {

// parent -> (outer, inner): parent = outer * factor + inner, inner in [0, factor); or, by
// nparts, outer in [0, nparts), inner extent ceil(extent / nparts).
struct SplitRelation {
  IterVar parent, outer, inner;
  PrimExpr factor;  // or nparts
  bool by_nparts = false;
};
// (outer, inner) -> fused: fused = outer * extent(inner) + inner.
struct FuseRelation {
  IterVar outer, inner, fused;
};
struct IterRelation {
  enum Kind { kSplit, kFuse } kind;
  SplitRelation split;
  FuseRelation fuse;
};

enum class AttachKind : uint8_t { kRoot, kInline, kScope };

// How a leaf axis is emitted.
struct IterAttr {
  tir::ForKind for_kind = tir::ForKind::kSerial;
  std::string thread_tag;
  tir::Annotations pragmas;  // "pragma_<key>" -> value
};

struct StorageAlign {
  int dim;
  int factor;
  int offset;
};

class StageNode;
class ScheduleNode;

class Stage {
 public:
  Stage() = default;
  explicit Stage(std::shared_ptr<StageNode> node) : node_(std::move(node)) {}
  StageNode* get() const { return node_.get(); }
  StageNode* operator->() const { return node_.get(); }
  bool same_as(const Stage& o) const { return node_ == o.node_; }

  // The operation this stage computes now (cache_write replaces it) and its root/leaf axes.
  const Tensor& op() const;
  const std::vector<IterVar>& leaf_iter_vars() const;

  std::pair<IterVar, IterVar> split(const IterVar& axis, PrimExpr factor);
  std::pair<IterVar, IterVar> split_nparts(const IterVar& axis, PrimExpr nparts);
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  void reorder(const std::vector<IterVar>& order);
  template <typename... A>
  void reorder(const IterVar& first, const A&... rest) {
    reorder(std::vector<IterVar>{first, rest...});
  }
  // (x_outer, y_outer, x_inner, y_inner), loops ordered in that way.
  std::tuple<IterVar, IterVar, IterVar, IterVar> tile(const IterVar& x, const IterVar& y, PrimExpr x_factor,
                                                      PrimExpr y_factor);
  void vectorize(const IterVar& axis);
  void parallel(const IterVar& axis);
  void unroll(const IterVar& axis);
  // Thread tags: blockIdx.{x,y,z}, threadIdx.{x,y,z}, vthread.
  void bind(const IterVar& axis, const std::string& thread_tag);
  // Emitted as the loop annotation "pragma_<key>" = value.
  void pragma(const IterVar& axis, const std::string& key, PrimExpr value = 1);
  // The stride of the dimension of root axis `axis` in this stage's allocated buffer becomes
  // k * factor + offset (the smallest such value not below the compact stride).
  void storage_align(const IterVar& axis, int factor, int offset);

  // Computes this stage inside `parent`'s loop `axis` (a leaf of parent), for the region the
  // iterations of that loop read. parent must read this stage, directly or through other
  // stages; every reader must then run inside that loop (checked by lower()).
  void compute_at(const Stage& parent, const IterVar& axis);
  void compute_inline();
  void compute_root();
  // Storage scope of this stage's buffer when it is allocated: global, shared, local, ...
  void set_scope(const std::string& scope);

 private:
  std::shared_ptr<StageNode> node_;
};

class StageNode {
 public:
  Tensor op;
  Tensor origin_op;  // what the user's tensor handle names (s[tensor] looks this up too)
  std::vector<IterVar> all_iter_vars;
  std::vector<IterVar> leaf_iter_vars;
  std::vector<IterRelation> relations;
  AttachKind attach = AttachKind::kRoot;
  std::weak_ptr<StageNode> attach_stage;
  IterVar attach_ivar;
  std::string scope = "global";
  std::unordered_map<const IterVarNode*, IterAttr> iter_attrs;
  std::vector<StorageAlign> storage_aligns;
  bool is_output = false;
  ScheduleNode* schedule = nullptr;

  // "stage 'C'" for messages.
  std::string describe() const;
  // The attribute record of an axis (created on first use).
  IterAttr& attr(const IterVar& iv) { return iter_attrs[iv.get()]; }
  const IterAttr* find_attr(const IterVar& iv) const;
  // Index of iv among the leaves, or -1.
  int leaf_index(const IterVar& iv) const;
};

class ScheduleNode {
 public:
  std::vector<Tensor> outputs;
  std::deque<Stage> stages;  // producers before consumers
  // The stage for t (its current op or its origin op); ValueError when t has none.
  Stage& stage_of(const Tensor& t);
  Stage* find_stage(const Tensor& t);
  // Stages whose current op reads t's buffer.
  std::vector<Stage> readers_of(const Tensor& t);
};

class Schedule {
 public:
  Schedule() = default;
  explicit Schedule(std::shared_ptr<ScheduleNode> node) : node_(std::move(node)) {}
  ScheduleNode* get() const { return node_.get(); }
  ScheduleNode* operator->() const { return node_.get(); }

  Stage& operator[](const Tensor& t) { return node_->stage_of(t); }
  // A stage T.<scope> copying `tensor` in the given scope; the `readers` now read the copy.
  Tensor cache_read(const Tensor& tensor, const std::string& scope, const std::vector<Tensor>& readers);
  // Moves tensor's computation into a new stage T.<scope>; tensor's stage becomes a copy of it.
  // Must come before other primitives on that stage.
  Tensor cache_write(const Tensor& tensor, const std::string& scope);

 private:
  std::shared_ptr<ScheduleNode> node_;
};

// A schedule for the graph of operations the outputs depend on (one stage each, default: every
// stage computed at the root in producer-before-consumer order, loops in axis order).
Schedule create_schedule(const std::vector<Tensor>& outputs);

}  // namespace anvil::te
