// Tensors, operations and axes.
#include "anvil/te/tensor.h"

#include <unordered_set>

#include "anvil/arith/interval.h"
#include "anvil/base/error.h"
#include "anvil/ir/expr_functor.h"
#include "anvil/ir/printer.h"
#include "anvil/te/reduction.h"

namespace anvil::te {

using arith::fold_sub;

namespace {

// Tensors indexed while a compute's fcompute runs: compute() learns its inputs from them.
thread_local std::vector<Tensor>* g_indexed = nullptr;

void check_shape(const std::vector<PrimExpr>& shape, const std::string& what) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!shape[d].defined()) value_error(what, ": shape dimension ", d, " is undefined");
    if (!ir::is_integer(shape[d].dtype()) || shape[d].dtype().lanes() != 1)
      type_error(what, ": shape dimension ", d, " must be a scalar integer, got ", ir::dtype_name(shape[d].dtype()));
    if (auto c = ir::as_const_int(shape[d]); c && *c < 0)
      value_error(what, ": shape dimension ", d, " is negative (", *c, ")");
  }
}

}  // namespace

IterVar IterVar::make(Var var, Range dom, IterKind kind) {
  if (!var.defined()) value_error("IterVar: the variable is undefined");
  if (!ir::is_integer(var.dtype())) type_error("IterVar '", var.name(), "': the variable must be an integer");
  IterVar iv;
  iv.node_ = Ref<IterVarNode>(new IterVarNode(std::move(var), std::move(dom), kind));
  return iv;
}

IterVar reduce_axis(PrimExpr lo, PrimExpr hi, std::string name) {
  if (!lo.defined() || !hi.defined()) value_error("reduce_axis '", name, "': bounds are undefined");
  if (!ir::is_integer(lo.dtype()) || !ir::is_integer(hi.dtype()))
    type_error("reduce_axis '", name, "': bounds must be integers");
  return IterVar::make(Var(std::move(name)), Range{lo, fold_sub(hi, lo)}, IterKind::kReduce);
}

Tensor Tensor::make_placeholder(std::vector<PrimExpr> shape, DataType dtype, std::string name) {
  if (name.empty()) value_error("placeholder: the name must be non-empty");
  check_shape(shape, "placeholder '" + name + "'");
  auto* node = new OperationNode();
  Tensor t(node);
  node->kind_ = OpKind::kPlaceholder;
  node->name_ = name;
  node->buffer_ = ir::decl_buffer(std::move(shape), dtype, std::move(name));
  return t;
}

Tensor Tensor::make_compute(std::string name, DataType dtype, std::vector<IterVar> axis,
                            std::vector<IterVar> reduce_axis, PrimExpr body, ReduceKind reduce_kind,
                            std::vector<Tensor> inputs, Buffer buffer) {
  if (name.empty()) value_error("compute: the name must be non-empty");
  if (!body.defined()) value_error("compute '", name, "': the body is undefined");
  if (body.dtype() != dtype)
    type_error("compute '", name, "': body dtype ", ir::dtype_name(body.dtype()), " differs from ",
               ir::dtype_name(dtype));
  if (body.dtype().lanes() != 1) type_error("compute '", name, "': the body must be a scalar expression");
  for (const IterVar& k : reduce_axis)
    if (!k.is_reduce()) value_error("compute '", name, "': '", k->name(), "' is not a reduction axis");
  if (reduce_kind == ReduceKind::kNone && !reduce_axis.empty())
    value_error("compute '", name, "': reduction axes without a reduction");
  std::vector<PrimExpr> shape;
  for (const IterVar& a : axis) shape.push_back(a->dom().extent);
  check_shape(shape, "compute '" + name + "'");
  auto* node = new OperationNode();
  Tensor t(node);
  node->kind_ = OpKind::kCompute;
  node->name_ = name;
  node->buffer_ = buffer.defined() ? buffer : ir::decl_buffer(std::move(shape), dtype, std::move(name));
  node->axis_ = std::move(axis);
  node->reduce_axis_ = std::move(reduce_axis);
  node->body_ = std::move(body);
  node->reduce_kind_ = reduce_kind;
  node->inputs_ = std::move(inputs);
  return t;
}

IterVar Tensor::axis(int i) const {
  if (!is_compute()) value_error("tensor '", name(), "' is a placeholder: it has no axes");
  if (i < 0 || i >= static_cast<int>(get()->axis().size()))
    index_error("tensor '", name(), "': axis ", i, " out of range [0, ", get()->axis().size(), ")");
  return get()->axis()[i];
}

IterVar Tensor::reduce_axis(int i) const {
  if (i < 0 || i >= static_cast<int>(get()->reduce_axis().size()))
    index_error("tensor '", name(), "': reduce axis ", i, " out of range [0, ", get()->reduce_axis().size(), ")");
  return get()->reduce_axis()[i];
}

PrimExpr Tensor::operator()(std::vector<PrimExpr> indices) const {
  if (!defined()) value_error("indexing an undefined tensor");
  if (static_cast<int>(indices.size()) != ndim())
    value_error("tensor '", name(), "' has ", ndim(), " dimensions but was indexed with ", indices.size(), " indices");
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d].defined()) value_error("tensor '", name(), "': index ", d, " is undefined");
    if (indices[d].dtype() != DataType::int32() && ir::is_integer(indices[d].dtype()))
      indices[d] = ir::cast(DataType::int32(), indices[d]);
  }
  if (g_indexed) g_indexed->push_back(*this);
  return ir::buffer_load(get()->buffer(), std::move(indices));
}

Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype, std::string name) {
  return Tensor::make_placeholder(std::move(shape), dtype, std::move(name));
}

Tensor compute(std::vector<PrimExpr> shape, const FCompute& fcompute, std::string name,
               const std::vector<std::string>& axis_names) {
  check_shape(shape, "compute '" + name + "'");
  std::vector<IterVar> axis;
  std::vector<Var> vars;
  if (!axis_names.empty() && axis_names.size() != shape.size())
    value_error("compute '", name, "': ", axis_names.size(), " axis names for ", shape.size(), " dimensions");
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string n = !axis_names.empty()  ? axis_names[d]
                    : shape.size() <= 2 ? std::string(d == 0 ? "i" : "j")
                                        : "i" + std::to_string(d);
    Var v(n);
    PrimExpr ext = shape[d].dtype() == DataType::int32() ? shape[d] : ir::cast(DataType::int32(), shape[d]);
    axis.push_back(IterVar::make(v, Range{0, ext}, IterKind::kDataPar));
    vars.push_back(v);
  }
  std::vector<Tensor> indexed;
  std::vector<Tensor>* saved = g_indexed;
  g_indexed = &indexed;
  PrimExpr body;
  try {
    body = fcompute(vars);
  } catch (...) {
    g_indexed = saved;
    throw;
  }
  g_indexed = saved;
  if (!body.defined()) value_error("compute '", name, "': fcompute returned an undefined expression");
  ReductionParts parts = take_reduction(body, name);
  std::vector<Tensor> inputs = tensors_read(parts.source, indexed, "compute '" + name + "'");
  for (const IterVar& k : parts.axes)
    for (const Tensor& t : tensors_read(k->dom().extent, indexed, "compute '" + name + "'")) inputs.push_back(t);
  return Tensor::make_compute(name, parts.source.dtype(), std::move(axis), std::move(parts.axes), parts.source,
                              parts.kind, std::move(inputs));
}

namespace detail {
void arity_mismatch(const std::string& name, size_t dims, int arity) {
  value_error("compute '", name, "': the shape has ", dims, " dimensions but fcompute takes ", arity, " indices");
}
}  // namespace detail

std::vector<Tensor> tensors_read(const PrimExpr& e, const std::vector<Tensor>& candidates, const std::string& what) {
  struct Finder : ir::ExprVisitor {
    const std::vector<Tensor>* cands;
    const std::string* what;
    std::vector<Tensor> found;
    std::unordered_set<const void*> seen;
    using ir::ExprVisitor::visit_;
    void visit_(const ir::BufferLoadNode* op) override {
      ir::ExprVisitor::visit_(op);
      const ir::BufferNode* b = op->buffer().get();
      for (const Tensor& t : *cands) {
        if (t->buffer().get() == b) {
          if (seen.insert(t.get()).second) found.push_back(t);
          return;
        }
      }
      value_error(*what, ": reads buffer '", b->name(), "', which is not a tensor indexed inside fcompute");
    }
  } finder;
  finder.cands = &candidates;
  finder.what = &what;
  finder.visit_expr(e);
  return finder.found;
}

}  // namespace anvil::te
