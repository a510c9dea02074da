// lower_graph: operator calls -> call_tir of shared PrimFuncs (see lower_graph.h).
#include "anvil/pipeline/lower_graph.h"

#include <set>
#include <unordered_map>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/ir/expr_functor.h"
#include "anvil/ir/structural_equal.h"
#include "anvil/ops/lower_call.h"

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
  std::vector<ir::Var> appearance;  // of shape.dims
  std::vector<ir::Var> shape_vars;  // the kernel's trailing scalars, as Vars of the first call
};

std::string kernel_hint(const std::string& op) {
  std::string hint = "fused_";
  for (char c : op) hint += (c == '.' ? '_' : c);
  return hint;
}

class Lowerer {
 public:
  Lowerer(graph::IRModule& out, const Target& target) : out_(out), target_(target) {}

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
        if (vm_evaluated_op(call->op())) return c;
        return lower(*c.as<CallNode>());
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

  LowerGraphStats stats;

 private:
  // The call_tir that replaces `call`, lowering a new kernel unless an identical call has one.
  Expr lower(const CallNode& call) {
    CallShape shape = describe_call(call);
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
      std::string name = out_.unique_name(kernel_hint(call.op()));
      ops::LoweredCall lowered = ops::lower_call(call, target_, name);
      out_.prim_funcs[name] = lowered.func;
      bucket.push_back({std::move(shape), name, appearance, lowered.shape_vars});
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
                       {kCallTIROp, call.op()}};
    return graph::Call::make(graph::kCallTIR, std::move(tensor_args), std::move(attrs), call.type());
  }

  graph::IRModule& out_;
  const Target& target_;
  // By signature (a Kernel pointer is used only within one lower()).
  std::unordered_map<std::string, std::vector<Kernel>> kernels_;
};

}  // namespace

bool vm_evaluated_op(const std::string& op) {
  static const std::set<std::string> ops = {"shape_of", "shape_to_tensor", "reshape", "squeeze", "expand_dims"};
  return ops.count(op) != 0;
}

graph::IRModule lower_graph(const graph::IRModule& mod, const Target& target, LowerGraphStats* stats) {
  graph::IRModule out = mod;
  Lowerer lowerer(out, target);
  for (auto& [name, f] : out.functions) {
    std::vector<graph::Binding> bindings;
    for (const graph::Binding& b : f.bindings()) bindings.push_back({b.var, lowerer.rewrite(b.value)});
    Expr result = lowerer.rewrite(f.result());
    f = graph::Function::make(f.params(), std::move(bindings), result);
  }
  if (stats != nullptr) *stats = lowerer.stats;
  return out;
}

}  // namespace anvil::pipeline
