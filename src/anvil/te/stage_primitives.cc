// Loop-structure and annotation primitives of a Stage: split, fuse, reorder, tile, vectorize,
// parallel, unroll, bind, pragma, storage_align.
#include <algorithm>
#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/te/schedule.h"

namespace anvil::te {
namespace {

std::string axis_name(const IterVar& iv) { return iv.defined() ? iv->name() : "<undefined>"; }

// Throws unless iv is a leaf axis of stage; returns its leaf index.
int require_leaf(const StageNode* stage, const IterVar& iv, const char* primitive) {
  if (!iv.defined()) value_error(stage->describe(), ": ", primitive, " of an undefined axis");
  int idx = stage->leaf_index(iv);
  if (idx >= 0) return idx;
  for (const IterVar& a : stage->all_iter_vars)
    if (a.same_as(iv))
      value_error(stage->describe(), ": ", primitive, " of axis '", axis_name(iv),
                  "', which is no longer a leaf axis (it was already split or fused)");
  value_error(stage->describe(), ": ", primitive, " of axis '", axis_name(iv),
              "', which does not belong to this stage");
}

void require_unannotated(const StageNode* stage, const IterVar& iv, const char* primitive) {
  const IterAttr* a = stage->find_attr(iv);
  if (a && (a->for_kind != tir::ForKind::kSerial || !a->pragmas.empty()))
    value_error(stage->describe(), ": ", primitive, " of axis '", axis_name(iv),
                "', which is already annotated (annotate the axes after splitting)");
}

IterVar derived(const IterVar& like, const std::string& name) {
  return IterVar::make(Var(name, like.var().dtype()), Range{}, like->iter_kind());
}

void set_kind(StageNode* stage, const IterVar& iv, tir::ForKind kind, const char* primitive, std::string tag = "") {
  require_leaf(stage, iv, primitive);
  IterAttr& a = stage->attr(iv);
  if (a.for_kind != tir::ForKind::kSerial && (a.for_kind != kind || a.thread_tag != tag))
    value_error(stage->describe(), ": ", primitive, " of axis '", axis_name(iv), "', which is already ",
                tir::for_kind_name(a.for_kind), a.thread_tag.empty() ? "" : " (" + a.thread_tag + ")");
  a.for_kind = kind;
  a.thread_tag = std::move(tag);
}

std::pair<IterVar, IterVar> do_split(StageNode* stage, const IterVar& axis, PrimExpr factor, bool by_nparts) {
  const char* what = by_nparts ? "split (nparts)" : "split";
  int idx = require_leaf(stage, axis, what);
  require_unannotated(stage, axis, what);
  if (!factor.defined())
    value_error(stage->describe(), ": ", what, " of axis '", axis_name(axis), "': undefined factor");
  if (!ir::is_integer(factor.dtype()) || factor.dtype().lanes() != 1)
    type_error(stage->describe(), ": ", what, " of axis '", axis_name(axis), "': the factor must be a scalar integer");
  if (auto c = ir::as_const_int(factor); c && *c <= 0)
    value_error(stage->describe(), ": ", what, " of axis '", axis_name(axis), "': the factor must be positive, got ",
                *c);
  if (factor.dtype() != axis.var().dtype()) factor = ir::cast(axis.var().dtype(), factor);
  IterVar outer = derived(axis, axis->name() + ".outer");
  IterVar inner = derived(axis, axis->name() + ".inner");
  IterRelation rel{IterRelation::kSplit, SplitRelation{axis, outer, inner, factor, by_nparts}, {}};
  stage->relations.push_back(rel);
  stage->all_iter_vars.push_back(outer);
  stage->all_iter_vars.push_back(inner);
  stage->leaf_iter_vars[idx] = outer;
  stage->leaf_iter_vars.insert(stage->leaf_iter_vars.begin() + idx + 1, inner);
  return {outer, inner};
}

}  // namespace

std::pair<IterVar, IterVar> Stage::split(const IterVar& axis, PrimExpr factor) {
  return do_split(get(), axis, std::move(factor), false);
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar& axis, PrimExpr nparts) {
  return do_split(get(), axis, std::move(nparts), true);
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  StageNode* st = get();
  int io = require_leaf(st, outer, "fuse");
  int ii = require_leaf(st, inner, "fuse");
  require_unannotated(st, outer, "fuse");
  require_unannotated(st, inner, "fuse");
  if (ii != io + 1)
    value_error(st->describe(), ": fuse of axes '", axis_name(outer), "' and '", axis_name(inner),
                "', which are not adjacent leaves in outer-to-inner order");
  if (outer->iter_kind() != inner->iter_kind())
    value_error(st->describe(), ": fuse of axes '", axis_name(outer), "' and '", axis_name(inner),
                "': cannot fuse a reduction axis with a data-parallel one");
  IterVar fused = derived(outer, outer->name() + "." + inner->name() + ".fused");
  IterRelation rel{IterRelation::kFuse, {}, FuseRelation{outer, inner, fused}};
  st->relations.push_back(rel);
  st->all_iter_vars.push_back(fused);
  st->leaf_iter_vars[io] = fused;
  st->leaf_iter_vars.erase(st->leaf_iter_vars.begin() + ii);
  return fused;
}

void Stage::reorder(const std::vector<IterVar>& order) {
  StageNode* st = get();
  std::vector<int> positions;
  std::unordered_set<const IterVarNode*> seen;
  for (const IterVar& iv : order) {
    positions.push_back(require_leaf(st, iv, "reorder"));
    if (!seen.insert(iv.get()).second)
      value_error(st->describe(), ": reorder names axis '", axis_name(iv), "' more than once");
  }
  std::vector<int> sorted = positions;
  std::sort(sorted.begin(), sorted.end());
  std::vector<IterVar> leaves = st->leaf_iter_vars;
  for (size_t i = 0; i < order.size(); ++i) leaves[sorted[i]] = order[i];
  st->leaf_iter_vars = std::move(leaves);
}

std::tuple<IterVar, IterVar, IterVar, IterVar> Stage::tile(const IterVar& x, const IterVar& y, PrimExpr x_factor,
                                                           PrimExpr y_factor) {
  auto [xo, xi] = split(x, std::move(x_factor));
  auto [yo, yi] = split(y, std::move(y_factor));
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

void Stage::vectorize(const IterVar& axis) {
  require_leaf(get(), axis, "vectorize");
  if (axis.is_reduce())
    value_error(get()->describe(), ": vectorize of reduction axis '", axis_name(axis),
                "' (only data-parallel axes can be vectorized)");
  set_kind(get(), axis, tir::ForKind::kVectorized, "vectorize");
}

void Stage::parallel(const IterVar& axis) {
  require_leaf(get(), axis, "parallel");
  if (axis.is_reduce())
    value_error(get()->describe(), ": parallel of reduction axis '", axis_name(axis),
                "' (iterations would race on the accumulator)");
  set_kind(get(), axis, tir::ForKind::kParallel, "parallel");
}

void Stage::unroll(const IterVar& axis) { set_kind(get(), axis, tir::ForKind::kUnrolled, "unroll"); }

void Stage::bind(const IterVar& axis, const std::string& thread_tag) {
  require_leaf(get(), axis, "bind");
  if (!tir::is_valid_thread_tag(thread_tag))
    value_error(get()->describe(), ": bind of axis '", axis_name(axis), "' to '", thread_tag,
                "', which is not one of blockIdx.{x,y,z}, threadIdx.{x,y,z}, vthread");
  if (axis.is_reduce())
    value_error(get()->describe(), ": bind of reduction axis '", axis_name(axis),
                "' (cross-thread reductions are not supported)");
  for (const IterVar& other : get()->leaf_iter_vars) {
    const IterAttr* a = get()->find_attr(other);
    if (!other.same_as(axis) && a && a->for_kind == tir::ForKind::kThreadBinding && a->thread_tag == thread_tag)
      value_error(get()->describe(), ": bind of axis '", axis_name(axis), "' to '", thread_tag, "', which axis '",
                  axis_name(other), "' is already bound to");
  }
  set_kind(get(), axis, tir::ForKind::kThreadBinding, "bind", thread_tag);
}

void Stage::pragma(const IterVar& axis, const std::string& key, PrimExpr value) {
  require_leaf(get(), axis, "pragma");
  if (key.empty()) value_error(get()->describe(), ": pragma on axis '", axis_name(axis), "' with an empty key");
  if (!value.defined()) value_error(get()->describe(), ": pragma '", key, "' with an undefined value");
  get()->attr(axis).pragmas[std::string(tir::attr::kPragmaPrefix) + key] = std::move(value);
}

void Stage::storage_align(const IterVar& axis, int factor, int offset) {
  StageNode* st = get();
  int dim = -1;
  const auto& roots = st->op->axis();
  for (size_t d = 0; d < roots.size(); ++d)
    if (roots[d].same_as(axis)) dim = static_cast<int>(d);
  if (dim < 0)
    value_error(st->describe(), ": storage_align on axis '", axis_name(axis),
                "', which is not a root data-parallel axis of this stage (use op.axis(i))");
  if (factor <= 0 || offset < 0 || offset >= factor)
    value_error(st->describe(), ": storage_align on axis '", axis_name(axis),
                "' needs factor > 0 and 0 <= offset < factor, got ", factor, ", ", offset);
  for (StorageAlign& a : st->storage_aligns)
    if (a.dim == dim) {
      a = StorageAlign{dim, factor, offset};
      return;
    }
  st->storage_aligns.push_back(StorageAlign{dim, factor, offset});
}

}  // namespace anvil::te
