// Graph IR verifier (verify.h).
#include "anvil/graph/verify.h"

#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/ops.h"
#include "anvil/graph/printer.h"

namespace anvil::graph {
namespace {

bool has_unknown_rank(const Type& t) {
  if (t.is_tensor()) return !t.has_rank();
  for (const Type& f : t.fields())
    if (has_unknown_rank(f)) return true;
  return false;
}

class Verifier {
 public:
  Verifier(const std::string& name, const IRModule* mod, const VerifyOptions& options)
      : name_(name), mod_(mod), options_(options) {}

  std::vector<std::string> run(const Function& f) {
    where_ = "parameters";
    for (const Var& p : f.params()) define(p);
    for (size_t i = 0; i < f.bindings().size(); ++i) {
      const Binding& b = f.bindings()[i];
      where_ = str_cat("binding ", i, " (%", b.var.name(), ")");
      expr(b.value);
      if (!type_equal(b.var.type(), b.value.type()))
        report("the var is typed ", to_string(b.var.type()), " but its value has type ", to_string(b.value.type()));
      define(b.var);
    }
    where_ = "result";
    expr(f.result());
    return std::move(errors_);
  }

 private:
  template <typename... Args>
  void report(Args&&... args) {
    errors_.push_back(str_cat("@", name_, ", ", where_, ": ", std::forward<Args>(args)...));
  }

  void define(const Var& v) {
    if (!defined_.insert(v.get()).second) report("%", v.name(), " is bound twice");
    check_rank(v.type(), "%" + v.name());
  }

  void check_rank(const Type& t, const std::string& what) {
    if (!options_.allow_unknown_rank && has_unknown_rank(t))
      report(what, " has type ", to_string(t), ": a tensor of unknown rank after import");
  }

  void expr(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kVar:
        if (!defined_.count(e.get()))
          report("%", e.as<VarNode>()->name(), " is used but is not a parameter or an earlier binding");
        return;
      case ExprKind::kConstant:
      case ExprKind::kShapeExpr:
        return;
      case ExprKind::kTuple:
        for (const Expr& f : e.as<TupleNode>()->fields()) expr(f);
        return;
      case ExprKind::kTupleGetItem:
        expr(e.as<TupleGetItemNode>()->tuple());
        return;
      case ExprKind::kCall:
        call(*e.as<CallNode>());
        return;
    }
  }

  void call(const CallNode& c) {
    for (const Expr& a : c.args()) expr(a);
    check_rank(c.type(), c.op());
    if (c.op() == kCallTIR) {
      auto it = c.attrs().find("func");
      const std::string* func = it == c.attrs().end() ? nullptr : std::get_if<std::string>(&it->second.storage());
      if (func == nullptr) report("call_tir without a string attribute 'func'");
      else if (mod_ != nullptr && !mod_->prim_funcs.count(*func)) report("call_tir of '", *func, "', not a PrimFunc of the module");
      return;
    }
    if (c.op() == kCallFused) {
      // Typed by fuse_ops, not inferred: the callee's result type.
      auto it = c.attrs().find("func");
      const std::string* func = it == c.attrs().end() ? nullptr : std::get_if<std::string>(&it->second.storage());
      if (func == nullptr) report("call_fused without a string attribute 'func'");
      else if (mod_ != nullptr && !mod_->functions.count(*func)) report("call_fused of '", *func, "', not a function of the module");
      else if (mod_ != nullptr && !type_equal(mod_->functions.at(*func).result().type(), c.type()))
        report("the call_fused of @", *func, " is typed ", to_string(c.type()), " but @", *func, " returns ",
               to_string(mod_->functions.at(*func).result().type()));
      return;
    }
    if (c.op() == kCallIf || c.op() == kCallLoop) {
      control_flow(c);
      return;
    }
    if (is_data_dependent_op(c.op())) {
      if (std::string why = ops::check_data_dependent_type(c); !why.empty()) report(why);
      return;
    }
    if (find_op(c.op()) == nullptr) {
      report("call of '", c.op(), "', not a registered operator");
      return;
    }
    try {
      Type t = infer_call_type(c.op(), c.args(), c.attrs());
      if (!type_equal(t, c.type()))
        report("the call of ", c.op(), " is typed ", to_string(c.type()), " but its operator infers ", to_string(t));
    } catch (const Error& err) {
      report("the call of ", c.op(), " does not type-check: ", err.what());
    }
  }

  // A branch's result type fits its if's: equal, except where the if has a symbolic dimension
  // (bound from the result when the if has run).
  static bool fits(const Type& ret, const Type& t) {
    if (type_equal(ret, t)) return true;
    if (ret.is_tuple() && t.is_tuple() && ret.fields().size() == t.fields().size()) {
      for (size_t i = 0; i < t.fields().size(); ++i)
        if (!fits(ret.fields()[i], t.fields()[i])) return false;
      return true;
    }
    if (!ret.is_tensor() || !t.is_tensor() || ret.dtype() != t.dtype() || !ret.has_rank() || !t.has_rank() ||
        ret.ndim() != t.ndim())
      return false;
    for (size_t i = 0; i < t.shape().size(); ++i) {
      const PrimExpr& td = t.shape()[i];
      const PrimExpr& rd = ret.shape()[i];
      if (td.as<ir::VarNode>() != nullptr || td.same_as(rd)) continue;
      std::optional<int64_t> a = ir::as_const_int(td), b = ir::as_const_int(rd);
      if (!a || !b || *a != *b) return false;
    }
    return true;
  }

  // if/loop: the named functions exist, take the call's arguments and return its type (up to
  // the if's symbolic dimensions).
  void control_flow(const CallNode& c) {
    auto func_attr = [&](const char* key) -> const Function* {
      auto it = c.attrs().find(key);
      const std::string* func = it == c.attrs().end() ? nullptr : std::get_if<std::string>(&it->second.storage());
      if (func == nullptr) {
        report(c.op(), " without a string attribute '", key, "'");
        return nullptr;
      }
      if (mod_ == nullptr) return nullptr;
      auto f = mod_->functions.find(*func);
      if (f == mod_->functions.end()) report(c.op(), " of '", *func, "', not a function of the module");
      return f == mod_->functions.end() ? nullptr : &f->second;
    };
    auto check_params = [&](const Function& f, const char* what, size_t skip_params, size_t skip_args) {
      if (f.params().size() - skip_params != c.args().size() - skip_args) {
        report("the ", c.op(), "'s ", what, " takes ", f.params().size(), " parameters for ", c.args().size(), " arguments");
        return;
      }
      for (size_t i = skip_params; i < f.params().size(); ++i) {
        const Type& p = f.params()[i].type();
        const Type& a = c.args()[i - skip_params + skip_args].type();
        if (p.is_tensor() != a.is_tensor() || (p.is_tensor() && p.dtype() != a.dtype()))
          report("the ", c.op(), "'s ", what, " parameter %", f.params()[i].name(), " is ", to_string(p),
                 " but its argument is ", to_string(a));
      }
    };
    if (c.op() == kCallIf) {
      const Function* then_f = func_attr("then_func");
      const Function* else_f = func_attr("else_func");
      for (const Function* f : {then_f, else_f}) {
        if (f == nullptr) continue;
        check_params(*f, f == then_f ? "then_func" : "else_func", 0, 1);
        if (!fits(f->ret_type(), c.type()))
          report("the if is typed ", to_string(c.type()), " but a branch returns ", to_string(f->ret_type()));
      }
      return;
    }
    const Function* body = func_attr("body");
    if (body == nullptr) return;
    if (body->params().size() < 2 || c.args().size() < 2) {
      report("a loop takes max_trip and cond, its body the iteration and cond");
      return;
    }
    check_params(*body, "body", 2, 2);
    if (!body->ret_type().is_tuple() || !c.type().is_tuple())
      report("a loop and its body return tuples, not ", to_string(c.type()), " and ", to_string(body->ret_type()));
  }

  std::string name_;
  const IRModule* mod_;
  VerifyOptions options_;
  std::string where_;
  std::unordered_set<const ExprNode*> defined_;
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<std::string> well_formed_errors(const Function& f, const std::string& name, const IRModule* mod,
                                            const VerifyOptions& options) {
  return Verifier(name, mod, options).run(f);
}

std::vector<std::string> well_formed_errors(const IRModule& mod, const VerifyOptions& options) {
  std::vector<std::string> out;
  for (const auto& [name, f] : mod.functions) {
    std::vector<std::string> e = well_formed_errors(f, name, &mod, options);
    out.insert(out.end(), e.begin(), e.end());
  }
  return out;
}

void check_well_formed(const IRModule& mod, const std::string& stage, const VerifyOptions& options) {
  std::vector<std::string> errors = well_formed_errors(mod, options);
  if (errors.empty()) return;
  std::string lines;
  for (const std::string& e : errors) lines += "\n  " + e;
  throw_error(ErrorKind::kInternal, "graph IR after ", stage, " is not well formed:", lines);
}

}  // namespace anvil::graph
