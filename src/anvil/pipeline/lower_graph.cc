// lower_graph: operator calls -> call_tir of shared PrimFuncs (see lower_graph.h).
#include "anvil/pipeline/lower_graph.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/ir/expr_functor.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/graph/printer.h"
#include "anvil/ir/structural_equal.h"
#include "anvil/ops/lower_call.h"
#include "anvil/te/lower.h"

namespace anvil::pipeline {
namespace {

using graph::CallNode;
using graph::Expr;
using graph::ExprKind;
using graph::Type;

// What two calls must agree on to share a kernel: `signature` holds the operator, attributes,
// value kinds, dtypes and ranks; `dims` every dimension and ShapeExpr value in a fixed order,
// compared structurally with the symbolic Vars mapped one to one.
struct CallShape {
  std::string signature;
  std::vector<ir::PrimExpr> dims;
};

void describe_type(const Type& t, CallShape& out) {
  switch (t.kind()) {
    case graph::TypeKind::kTensor:
      if (!t.has_rank()) {
        out.signature += str_cat("T", t.dtype(), "[?]");
        return;
      }
      out.signature += str_cat("T", t.dtype(), "[", t.ndim(), "]");
      for (const ir::PrimExpr& d : t.shape()) out.dims.push_back(d);
      return;
    case graph::TypeKind::kTuple:
      out.signature += "(";
      for (const Type& f : t.fields()) describe_type(f, out);
      out.signature += ")";
      return;
    case graph::TypeKind::kShape:
      out.signature += str_cat("S", t->shape_ndim());
      return;
    case graph::TypeKind::kObject:
      out.signature += "O";
      return;
  }
}

CallShape describe_call(const CallNode& call) {
  CallShape out;
  out.signature = call.op() + "{";
  for (const auto& [name, value] : call.attrs()) out.signature += name + "=" + graph::to_string(value) + ";";
  out.signature += "}(";
  for (const Expr& arg : call.args()) {
    if (const auto* s = arg.as<graph::ShapeExprNode>()) {
      // A ShapeExpr's values shape the kernel (reshape's target): they are compared too.
      out.signature += str_cat("E", s->values().size());
      for (const ir::PrimExpr& v : s->values()) out.dims.push_back(v);
    } else if (arg.type().is_tensor()) {
      describe_type(arg.type(), out);
    } else if (const std::vector<ir::PrimExpr>* v = arg.type().shape_values()) {
      // A Shape whose type knows its values (run-time Vars a compute may read, Trilu's k).
      out.signature += str_cat("E", v->size());
      for (const ir::PrimExpr& d : *v) out.dims.push_back(d);
    } else {
      // Another non-tensor argument (a Shape-typed Var): the compute might read it, so only
      // the same value shares.
      out.signature += str_cat("V", static_cast<const void*>(arg.get()));
    }
    out.signature += ",";
  }
  out.signature += ")->";
  describe_type(call.type(), out);
  return out;
}

// A fused group's body in the signature: each binding's operator, attributes, operands (by
// position) and type, its dims (and ShapeExpr values) compared like the call's.
void describe_group(const graph::Function& group, CallShape& out) {
  std::unordered_map<const graph::ExprNode*, std::string> ref;
  for (size_t i = 0; i < group.params().size(); ++i) ref[group.params()[i].get()] = str_cat("p", i);
  out.signature += "|group{";
  for (size_t k = 0; k < group.bindings().size(); ++k) {
    const graph::Binding& b = group.bindings()[k];
    const auto* call = b.value.as<CallNode>();
    if (call == nullptr) value_error("lower_graph: fused group binding %", b.var.name(), " is not a call");
    out.signature += call->op() + "{";
    for (const auto& [name, value] : call->attrs()) out.signature += name + "=" + graph::to_string(value) + ";";
    out.signature += "}(";
    for (const Expr& a : call->args()) {
      auto it = ref.find(a.get());
      if (it != ref.end()) {
        out.signature += it->second + ",";
      } else if (const auto* e = a.as<graph::ShapeExprNode>()) {
        out.signature += str_cat("E", e->values().size(), ",");
        for (const ir::PrimExpr& v : e->values()) out.dims.push_back(v);
      } else {
        out.signature += str_cat("V", static_cast<const void*>(a.get()), ",");
      }
    }
    out.signature += ")->";
    describe_type(b.var.type(), out);
    out.signature += ";";
    ref[b.var.get()] = str_cat("t", k);
  }
  out.signature += "}->" + ref[group.result().get()];
}

// The Vars of `dims` in order of first appearance.
class AppearanceOrder : public ir::ExprVisitor {
 public:
  std::vector<ir::Var> vars;
  void visit_(const ir::VarNode* op) override {
    if (seen_.insert(op).second) vars.push_back(ir::Var(op));
  }

 private:
  std::set<const ir::VarNode*> seen_;
};

std::vector<ir::Var> appearance_order(const std::vector<ir::PrimExpr>& dims) {
  AppearanceOrder v;
  for (const ir::PrimExpr& d : dims) v.visit_expr(d);
  return v.vars;
}

struct Kernel {
  CallShape shape;
  std::string func;
  std::string implementation;
  std::vector<ir::Var> appearance;  // of shape.dims
  std::vector<ir::Var> shape_vars;  // the kernel's trailing scalars, as Vars of the first call
};

std::string kernel_hint(const std::string& op) {
  std::string hint = "fused_";
  for (char c : op) hint += (c == '.' ? '_' : c);
  return hint;
}

// shape_to_tensor of symbolic values: a kernel writing them (its shape vars) into an int tensor.
ops::LoweredCall shape_to_tensor_kernel(const std::vector<ir::PrimExpr>& values, const Type& out_type,
                                        const std::string& name) {
  DataType dtype = out_type.dtype();
  auto n = static_cast<int>(values.size());
  te::Tensor out = te::compute({n}, [&](ir::Var i) {
    ir::PrimExpr e = ir::cast(dtype, values[n - 1]);
    for (int k = n - 2; k >= 0; --k) e = ir::select(ir::eq(i, k), ir::cast(dtype, values[k]), e);
    return e;
  }, "shape");
  ops::LoweredCall lowered;
  lowered.implementation = "shape_to_tensor.kernel";
  lowered.shape_vars = ops::shape_vars_of({Type::tensor(values, dtype)});
  std::vector<te::LowerArg> args{out};
  for (const ir::Var& v : lowered.shape_vars) args.emplace_back(v);
  lowered.func = te::lower(te::create_schedule({out}), args, name);
  return lowered;
}

class Lowerer {
 public:
  Lowerer(graph::IRModule& out, const std::map<std::string, graph::Function>& groups, const Target& target)
      : out_(out), groups_(groups), target_(target) {}

  Expr rewrite(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kCall: {
        const auto* call = e.as<CallNode>();
        if (call->op() == graph::kCallTIR) return e;
        std::vector<Expr> args;
        bool changed = false;
        for (const Expr& a : call->args()) {
          args.push_back(rewrite(a));
          changed = changed || !args.back().same_as(a);
        }
        Expr c = changed ? graph::Call::make(call->op(), args, call->attrs(), call->type()) : e;
        if (call->op() == "shape_to_tensor") return lower_shape_to_tensor(c);
        if (call->op() == graph::kCallFused) return lower_fused(*c.as<CallNode>());
        if (vm_evaluated_op(call->op())) return c;
        return lower(*c.as<CallNode>(), [&](const CallNode& k, const std::string& name) {
          return ops::lower_call(k, target_, name);
        });
      }
      case ExprKind::kTuple: {
        std::vector<Expr> fields;
        bool changed = false;
        for (const Expr& f : e.as<graph::TupleNode>()->fields()) {
          fields.push_back(rewrite(f));
          changed = changed || !fields.back().same_as(f);
        }
        return changed ? graph::Tuple::make(fields) : e;
      }
      case ExprKind::kTupleGetItem: {
        const auto* g = e.as<graph::TupleGetItemNode>();
        Expr t = rewrite(g->tuple());
        return t.same_as(g->tuple()) ? e : graph::TupleGetItem::make(t, g->index());
      }
      default:
        return e;
    }
  }

  // Remembers what a Var is bound to (shape_to_tensor looks through shape_of).
  void note_binding(const graph::Var& var, const Expr& value) { bound_[var.get()] = value; }

  LowerGraphStats stats;

 private:
  using LowerFn = std::function<ops::LoweredCall(const CallNode& call, const std::string& name)>;

  // The dimension values a Shape-typed argument holds, when the graph knows them: a ShapeExpr,
  // or a Var bound to one or to shape_of of a tensor of known rank.
  std::optional<std::vector<ir::PrimExpr>> shape_values(const Expr& e) const {
    if (const auto* s = e.as<graph::ShapeExprNode>()) return s->values();
    if (const std::vector<ir::PrimExpr>* v = e.type().shape_values()) return *v;  // tensor_to_shape's Vars
    if (e.kind() != ExprKind::kVar) return std::nullopt;
    auto it = bound_.find(e.get());
    if (it == bound_.end()) return std::nullopt;
    if (const auto* c = it->second.as<CallNode>())
      if (c->op() == "shape_of" && c->args().size() == 1 && c->args()[0].type().has_rank())
        return c->args()[0].type().shape();
    return shape_values(it->second);
  }

  // Static values stay for the VM (a constant); symbolic ones get a small kernel.
  Expr lower_shape_to_tensor(const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call->args().size() != 1 || !call->type().is_tensor()) return e;
    std::optional<std::vector<ir::PrimExpr>> values = shape_values(call->args()[0]);
    if (!values || values->empty()) return e;
    bool all_static = true;
    for (const ir::PrimExpr& v : *values) all_static = all_static && ir::as_const_int(v).has_value();
    if (all_static) return graph::Call::make(call->op(), {graph::ShapeExpr::make(*values)}, call->attrs(), call->type());
    Expr canonical = graph::Call::make(call->op(), {graph::ShapeExpr::make(*values)}, call->attrs(), call->type());
    const graph::Type out_type = call->type();
    std::vector<ir::PrimExpr> vals = *values;
    return lower(*canonical.as<CallNode>(), [vals, out_type](const CallNode&, const std::string& name) {
      return shape_to_tensor_kernel(vals, out_type, name);
    });
  }

  // A fused group: one kernel; identical groups (same operators, wiring, attributes and types up
  // to a renaming of the symbolic dims) share it, whatever their function's name.
  Expr lower_fused(const CallNode& call) {
    const std::string& func = graph::get_string(call.attrs(), "func");
    auto it = groups_.find(func);
    if (it == groups_.end()) value_error("lower_graph: call_fused of '", func, "', not a function of the module");
    const graph::Function& group = it->second;
    graph::Attrs attrs = call.attrs();
    attrs.erase("func");
    Expr anonymous = graph::Call::make(call.op(), call.args(), std::move(attrs), call.type());
    return lower(*anonymous.as<CallNode>(), [&](const CallNode&, const std::string& name) {
      return ops::lower_fused(group, call, target_, name);
    }, &group, func);
  }

  // The call_tir that replaces `call`, lowering a new kernel (through `lower_fn`) unless an
  // identical call has one. `group` (a call_fused's) joins the sharing signature; `hint` names
  // a new kernel.
  Expr lower(const CallNode& call, const LowerFn& lower_fn, const graph::Function* group = nullptr,
             const std::string& hint = "") {
    CallShape shape = describe_call(call);
    if (group != nullptr) describe_group(*group, shape);
    std::vector<ir::Var> appearance = appearance_order(shape.dims);
    const Kernel* kernel = nullptr;
    std::vector<ir::Var> shape_vars;
    auto& bucket = kernels_[shape.signature];
    for (const Kernel& k : bucket) {
      ir::StructuralEqualizer eq(/*map_free_vars=*/true);
      if (k.shape.dims.size() != shape.dims.size() || !eq.exprs(k.shape.dims, shape.dims)) continue;
      // Equal under a one-to-one renaming: the Vars pair up by first appearance.
      kernel = &k;
      for (const ir::Var& v : k.shape_vars) {
        size_t i = 0;
        while (i < k.appearance.size() && !k.appearance[i].same_as(v)) ++i;
        ANVIL_ICHECK(i < k.appearance.size() && i < appearance.size(), "shape var ", v->name(),
                     " of kernel ", k.func, " is not among its call's dimensions");
        shape_vars.push_back(appearance[i]);
      }
      break;
    }
    if (kernel == nullptr) {
      std::string name = out_.unique_name(hint.empty() ? kernel_hint(call.op()) : hint);
      ops::LoweredCall lowered = lower_fn(call, name);
      out_.prim_funcs[name] = lowered.func;
      bucket.push_back({std::move(shape), name, lowered.implementation, appearance, lowered.shape_vars});
      kernel = &bucket.back();
      shape_vars = lowered.shape_vars;
      ++stats.kernels;
    }
    ++stats.calls_lowered;
    std::vector<Expr> tensor_args;
    for (const Expr& a : call.args())
      if (a.type().is_tensor()) tensor_args.push_back(a);
    graph::AttrValue::Strings names;
    for (const ir::Var& v : shape_vars) names.push_back(v->name());
    graph::Attrs attrs{{kCallTIRFunc, kernel->func},
                       {kCallTIRShapeVars, graph::AttrValue::strings(std::move(names))},
                       {kCallTIROp, hint.empty() ? call.op() : hint},
                       {kCallTIRImplementation, kernel->implementation}};
    return graph::Call::make(graph::kCallTIR, std::move(tensor_args), std::move(attrs), call.type());
  }

  graph::IRModule& out_;
  const std::map<std::string, graph::Function>& groups_;
  const Target& target_;
  // By signature (a Kernel pointer is used only within one lower()).
  std::unordered_map<std::string, std::vector<Kernel>> kernels_;
  std::unordered_map<const graph::ExprNode*, Expr> bound_;
};

}  // namespace

bool vm_evaluated_op(const std::string& op) {
  static const std::set<std::string> ops = {"shape_of",    "shape_to_tensor", "reshape",       "squeeze",
                                            "expand_dims", graph::kCallIf,    graph::kCallLoop, "check"};
  return ops.count(op) != 0 || graph::is_data_dependent_op(op);
}

graph::IRModule lower_graph(const graph::IRModule& mod, const Target& target, LowerGraphStats* stats) {
  graph::IRModule out = mod;
  // Fused groups are lowered where they are called, then go: the VM runs only the callers.
  // (Out of the module first, so that a group's kernel can take the group's name.)
  std::map<std::string, graph::Function> groups;
  for (const auto& [name, f] : mod.functions)
    for (const graph::Binding& b : f.bindings())
      if (const auto* c = b.value.as<CallNode>())
        if (c->op() == graph::kCallFused) {
          std::string func = graph::get_string(c->attrs(), "func");
          groups.emplace(func, mod.function(func));
          out.functions.erase(func);
        }
  Lowerer lowerer(out, groups, target);
  for (auto& [name, f] : out.functions) {
    std::vector<graph::Binding> bindings;
    for (const graph::Binding& b : f.bindings()) {
      lowerer.note_binding(b.var, b.value);
      bindings.push_back({b.var, lowerer.rewrite(b.value)});
    }
    Expr result = lowerer.rewrite(f.result());
    f = graph::Function::make(f.params(), std::move(bindings), result);
  }
  if (stats != nullptr) *stats = lowerer.stats;
  return out;
}

}  // namespace anvil::pipeline
