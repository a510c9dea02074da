// Graph IR structural equality (structural_equal.h).
#include "anvil/graph/structural_equal.h"

#include <cstring>
#include <unordered_map>

#include "anvil/tir/structural_equal.h"

namespace anvil::graph {
namespace {

class Equalizer {
 public:
  bool type(const Type& a, const Type& b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined() || a.kind() != b.kind()) return false;
    switch (a.kind()) {
      case TypeKind::kTensor:
        if (a.dtype() != b.dtype() || a.has_rank() != b.has_rank()) return false;
        return !a.has_rank() || dims_.exprs(a.shape(), b.shape());
      case TypeKind::kTuple:
        if (a.fields().size() != b.fields().size()) return false;
        for (size_t i = 0; i < a.fields().size(); ++i)
          if (!type(a.fields()[i], b.fields()[i])) return false;
        return true;
      case TypeKind::kShape:
        if (a.ndim() != b.ndim() || (a.shape_values() == nullptr) != (b.shape_values() == nullptr)) return false;
        return a.shape_values() == nullptr || dims_.exprs(*a.shape_values(), *b.shape_values());
      case TypeKind::kObject:
        return true;
    }
    return false;
  }

  bool define(const Var& a, const Var& b) {
    if (!type(a.type(), b.type())) return false;
    l2r_[a.get()] = b.get();
    r2l_[b.get()] = a.get();
    return true;
  }

  bool function(const Function& a, const Function& b) {
    if (a.params().size() != b.params().size() || a.bindings().size() != b.bindings().size()) return false;
    for (size_t i = 0; i < a.params().size(); ++i)
      if (!define(a.params()[i], b.params()[i])) return false;
    for (size_t i = 0; i < a.bindings().size(); ++i) {
      const Binding& x = a.bindings()[i];
      const Binding& y = b.bindings()[i];
      if (!expr(x.value, y.value) || !define(x.var, y.var)) return false;
    }
    return expr(a.result(), b.result());
  }

  bool expr(const Expr& a, const Expr& b) {
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
      case ExprKind::kVar: {
        auto it = l2r_.find(a.get());
        auto jt = r2l_.find(b.get());
        // A var neither side defined (ill-formed IR) equals only itself.
        if (it == l2r_.end() || jt == r2l_.end()) return a.same_as(b) && it == l2r_.end() && jt == r2l_.end();
        return it->second == b.get() && jt->second == a.get();
      }
      case ExprKind::kConstant:
        return constant(a.as<ConstantNode>()->data(), b.as<ConstantNode>()->data());
      case ExprKind::kShapeExpr:
        return dims_.exprs(a.as<ShapeExprNode>()->values(), b.as<ShapeExprNode>()->values());
      case ExprKind::kTuple:
        return exprs(a.as<TupleNode>()->fields(), b.as<TupleNode>()->fields());
      case ExprKind::kTupleGetItem: {
        const auto* x = a.as<TupleGetItemNode>();
        const auto* y = b.as<TupleGetItemNode>();
        return x->index() == y->index() && expr(x->tuple(), y->tuple());
      }
      case ExprKind::kCall: {
        const auto* x = a.as<CallNode>();
        const auto* y = b.as<CallNode>();
        return x->op() == y->op() && x->attrs() == y->attrs() && exprs(x->args(), y->args()) && type(a.type(), b.type());
      }
    }
    return false;
  }

 private:
  bool exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!expr(a[i], b[i])) return false;
    return true;
  }

  static bool constant(const Tensor& a, const Tensor& b) {
    if (a.same_as(b)) return true;
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
    return a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
  }

  ir::StructuralEqualizer dims_{/*map_free_vars=*/true};
  std::unordered_map<const ExprNode*, const ExprNode*> l2r_, r2l_;
};

}  // namespace

bool structural_equal(const Function& a, const Function& b) { return Equalizer().function(a, b); }

bool structural_equal(const Type& a, const Type& b) { return Equalizer().type(a, b); }

bool structural_equal(const IRModule& a, const IRModule& b) {
  if (a.functions.size() != b.functions.size() || a.prim_funcs.size() != b.prim_funcs.size() || !(a.attrs == b.attrs))
    return false;
  Equalizer eq;
  for (auto it = a.functions.begin(), jt = b.functions.begin(); it != a.functions.end(); ++it, ++jt)
    if (it->first != jt->first || !eq.function(it->second, jt->second)) return false;
  for (auto it = a.prim_funcs.begin(), jt = b.prim_funcs.begin(); it != a.prim_funcs.end(); ++it, ++jt)
    if (it->first != jt->first || !tir::structural_equal(it->second, jt->second, /*map_free_vars=*/true)) return false;
  return true;
}

}  // namespace anvil::graph
