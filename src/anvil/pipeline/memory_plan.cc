// Liveness over the bindings and best-fit storage reuse (see memory_plan.h).
#include "anvil/pipeline/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/ir/expr_functor.h"
#include "anvil/ir/structural_equal.h"

namespace anvil::pipeline {
namespace {

using graph::Expr;
using graph::ExprKind;

constexpr int kForever = std::numeric_limits<int>::max();

// The tokens a value may hold: all of them (flat) and, for a tuple whose fields are known, per field.
struct Alias {
  std::vector<int> flat;
  std::vector<std::vector<int>> fields;
};

void append(std::vector<int>& to, const std::vector<int>& from) { to.insert(to.end(), from.begin(), from.end()); }

bool is_view_op(const std::string& op) { return op == "reshape" || op == "squeeze" || op == "expand_dims"; }

class Liveness {
 public:
  std::unordered_map<const graph::ExprNode*, Alias> alias;      // binding vars
  std::unordered_map<const graph::ExprNode*, int> last_use;     // binding and param vars
  std::unordered_map<const graph::ExprNode*, int> binding_of;   // binding var -> index

  Alias alias_of(const Expr& e) const {
    switch (e.kind()) {
      case ExprKind::kVar: {
        auto it = alias.find(e.get());
        return it == alias.end() ? Alias{} : it->second;
      }
      case ExprKind::kTuple: {
        Alias a;
        for (const Expr& f : e.as<graph::TupleNode>()->fields()) {
          Alias fa = alias_of(f);
          append(a.flat, fa.flat);
          a.fields.push_back(fa.flat);
        }
        return a;
      }
      case ExprKind::kTupleGetItem: {
        const auto* g = e.as<graph::TupleGetItemNode>();
        Alias t = alias_of(g->tuple());
        if (static_cast<size_t>(g->index()) < t.fields.size()) return Alias{t.fields[g->index()], {}};
        return Alias{t.flat, {}};
      }
      case ExprKind::kCall: {
        const auto* c = e.as<graph::CallNode>();
        if (is_view_op(c->op()) && !c->args().empty()) return Alias{alias_of(c->args()[0]).flat, {}};
        // A branch or loop body may return what it was given: its result may hold any argument.
        if (c->op() == graph::kCallIf || c->op() == graph::kCallLoop) {
          Alias a;
          for (const Expr& arg : c->args()) append(a.flat, alias_of(arg).flat);
          return a;
        }
        return {};
      }
      default:
        return {};
    }
  }

  // Records every Var `e` reads as used at binding `at`.
  void mark_uses(const Expr& e, int at) {
    switch (e.kind()) {
      case ExprKind::kVar: {
        int& u = last_use[e.get()];
        u = std::max(u, at);
        return;
      }
      case ExprKind::kTuple:
        for (const Expr& f : e.as<graph::TupleNode>()->fields()) mark_uses(f, at);
        return;
      case ExprKind::kTupleGetItem:
        mark_uses(e.as<graph::TupleGetItemNode>()->tuple(), at);
        return;
      case ExprKind::kCall:
        for (const Expr& a : e.as<graph::CallNode>()->args()) mark_uses(a, at);
        return;
      default:
        return;
    }
  }

};

// The product of symbolic dims with every variable set to 1 (1 when it does not fold).
int64_t value_at_1(const std::vector<ir::PrimExpr>& sym) {
  int64_t product = 1;
  for (const ir::PrimExpr& d : sym) {
    ir::PrimExpr one = ir::substitute(d, [](const ir::Var& v) -> std::optional<ir::PrimExpr> {
      return ir::int_imm(1, v.dtype());
    });
    product *= ir::as_const_int(arith::simplify(one)).value_or(1);
  }
  return product;
}

std::vector<graph::Type> output_types(const graph::Type& t) {
  if (t.is_tuple()) return t.fields();
  return {t};
}

std::string human_bytes(int64_t n) {
  char buf[64];
  if (n < 1024) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(n));
  else if (n < (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.2f KiB", n / 1024.0);
  else if (n < (int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f MiB", n / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.2f GiB", n / 1073741824.0);
  return buf;
}

std::optional<int64_t> json_int(const std::string& text, const std::string& key) {
  size_t at = text.find("\"" + key + "\"");
  if (at == std::string::npos) return std::nullopt;
  at = text.find(':', at);
  if (at == std::string::npos) return std::nullopt;
  long long v = 0;
  if (std::sscanf(text.c_str() + at + 1, " %lld", &v) != 1) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int64_t> static_nbytes(const graph::Type& t) {
  if (!t.is_tensor() || !t.has_rank()) return std::nullopt;
  std::optional<std::vector<int64_t>> shape = t.static_shape();
  if (!shape) return std::nullopt;
  int64_t n = static_cast<int64_t>(t.dtype().bytes());
  for (int64_t d : *shape) n *= d;
  return n;
}

MemoryPlan& MemoryPlan::operator+=(const MemoryPlan& o) {
  planned_bytes += o.planned_bytes;
  unplanned_bytes += o.unplanned_bytes;
  num_storages += o.num_storages;
  num_static_tensors += o.num_static_tensors;
  num_dynamic_tensors += o.num_dynamic_tensors;
  num_symbolic_storages += o.num_symbolic_storages;
  symbolic_planned_bytes_at_1 += o.symbolic_planned_bytes_at_1;
  symbolic_unplanned_bytes_at_1 += o.symbolic_unplanned_bytes_at_1;
  return *this;
}

std::string MemoryPlan::to_json() const {
  return str_cat("{\"planned_bytes\": ", planned_bytes, ", \"unplanned_bytes\": ", unplanned_bytes,
                 ", \"storages\": ", num_storages, ", \"static_tensors\": ", num_static_tensors,
                 ", \"dynamic_tensors\": ", num_dynamic_tensors, ", \"symbolic_storages\": ", num_symbolic_storages,
                 ", \"symbolic_planned_bytes_at_1\": ", symbolic_planned_bytes_at_1,
                 ", \"symbolic_unplanned_bytes_at_1\": ", symbolic_unplanned_bytes_at_1, "}");
}

std::string MemoryPlan::to_string() const {
  std::string out = str_cat(human_bytes(planned_bytes), " in ", num_storages, " storages for ", num_static_tensors,
                            " static tensors (", human_bytes(unplanned_bytes), " without reuse)");
  if (num_dynamic_tensors > 0)
    out += str_cat("; ", num_dynamic_tensors, " symbolic-size tensors in ", num_symbolic_storages, " storages: ",
                   human_bytes(symbolic_planned_bytes_at_1), " with every symbolic dim 1 (",
                   human_bytes(symbolic_unplanned_bytes_at_1), " without reuse)");
  return out;
}

std::optional<MemoryPlan> MemoryPlan::from_json(const std::string& text) {
  MemoryPlan p;
  auto a = json_int(text, "planned_bytes"), b = json_int(text, "unplanned_bytes"), c = json_int(text, "storages"),
       d = json_int(text, "static_tensors"), e = json_int(text, "dynamic_tensors"),
       g = json_int(text, "symbolic_storages"), h = json_int(text, "symbolic_planned_bytes_at_1"),
       k = json_int(text, "symbolic_unplanned_bytes_at_1");
  if (!a || !b || !c || !d || !e || !g || !h || !k) return std::nullopt;
  p.planned_bytes = *a, p.unplanned_bytes = *b, p.num_storages = *c, p.num_static_tensors = *d;
  p.num_dynamic_tensors = *e, p.num_symbolic_storages = *g, p.symbolic_planned_bytes_at_1 = *h;
  p.symbolic_unplanned_bytes_at_1 = *k;
  return p;
}

StoragePlan plan_storage(const graph::Function& f, bool reuse) {
  const auto& bindings = f.bindings();
  const int n = static_cast<int>(bindings.size());
  Liveness live;
  StoragePlan plan;
  plan.output_storage.resize(bindings.size());
  plan.kills.resize(bindings.size());

  // Tokens: the outputs of top-level call_tir bindings. Size = factor (dtype bytes times the
  // constant dims) times the symbolic dims `sym`; tokens whose sym lists are structurally equal
  // are in one size class, comparable by factor alone (dims are >= 0).
  struct Token {
    int binding;
    int64_t factor = 0;
    std::vector<ir::PrimExpr> sym;
    bool sized = false;  // a tensor of known rank
    ir::DataType dtype;
    int last = 0;
    int storage = StoragePlan::kDynamic;
  };
  std::vector<Token> tokens;
  for (int i = 0; i < n; ++i) {
    const Expr& v = bindings[i].value;
    live.binding_of[bindings[i].var.get()] = i;
    Alias a;
    const auto* call = v.as<graph::CallNode>();
    if (call != nullptr && call->op() == graph::kCallTIR) {
      for (const graph::Type& t : output_types(call->type())) {
        int id = static_cast<int>(tokens.size());
        Token tok;
        tok.binding = tok.last = i;
        tok.dtype = t.is_tensor() ? t.dtype() : ir::DataType::float32();
        if (t.is_tensor() && t.has_rank()) {
          tok.sized = true;
          tok.factor = static_cast<int64_t>(t.dtype().bytes());
          for (const ir::PrimExpr& d : t.shape()) {
            if (std::optional<int64_t> c = ir::as_const_int(d)) tok.factor *= *c;
            else tok.sym.push_back(d);
          }
        }
        tokens.push_back(std::move(tok));
        a.flat.push_back(id);
        if (call->type().is_tuple()) a.fields.push_back({id});
      }
    } else {
      a = live.alias_of(v);
    }
    live.alias[bindings[i].var.get()] = a;
    live.mark_uses(v, i);
  }
  live.mark_uses(f.result(), kForever);

  // A token lives until the last use of any value aliasing it.
  for (int i = 0; i < n; ++i) {
    const graph::ExprNode* var = bindings[i].var.get();
    auto u = live.last_use.find(var);
    int last = u == live.last_use.end() ? i : u->second;
    for (int t : live.alias[var].flat) tokens[t].last = std::max(tokens[t].last, last);
  }
  for (int t : live.alias_of(f.result()).flat) tokens[t].last = kForever;

  // Placement in binding order; busy[s] = the last binding that reads a tensor of storage s.
  std::vector<int> busy, storage_class;
  std::vector<std::vector<ir::PrimExpr>> classes{{}};  // class 0: static sizes
  auto class_of = [&](const std::vector<ir::PrimExpr>& sym) {
    for (size_t c = 0; c < classes.size(); ++c) {
      if (classes[c].size() != sym.size()) continue;
      bool same = true;
      for (size_t k = 0; k < sym.size() && same; ++k) same = ir::structural_equal(classes[c][k], sym[k]);
      if (same) return static_cast<int>(c);
    }
    classes.push_back(sym);
    return static_cast<int>(classes.size() - 1);
  };
  for (Token& tok : tokens) {
    auto& outs = plan.output_storage[tok.binding];
    bool symbolic = !tok.sym.empty();
    if (!tok.sized || (symbolic && !reuse)) {
      outs.push_back(StoragePlan::kDynamic);  // allocated on its own, its register cleared after use
      ++plan.summary.num_dynamic_tensors;
      continue;
    }
    int cls = class_of(tok.sym);
    if (symbolic) {
      ++plan.summary.num_dynamic_tensors;
      plan.summary.symbolic_unplanned_bytes_at_1 += tok.factor * value_at_1(tok.sym);
    } else {
      ++plan.summary.num_static_tensors;
      plan.summary.unplanned_bytes += tok.factor;
    }
    int chosen = -1;
    if (reuse) {
      int largest = -1;
      for (int s = 0; s < static_cast<int>(busy.size()); ++s) {
        // Another size class, or a tensor in it still read at or after this binding.
        if (storage_class[s] != cls || busy[s] >= tok.binding) continue;
        if (plan.storage_bytes[s] >= tok.factor && (chosen < 0 || plan.storage_bytes[s] < plan.storage_bytes[chosen]))
          chosen = s;
        if (largest < 0 || plan.storage_bytes[s] > plan.storage_bytes[largest]) largest = s;
      }
      if (chosen < 0 && largest >= 0) {
        chosen = largest;
        plan.storage_bytes[chosen] = tok.factor;  // grows: allocated once, with its final size
      }
    }
    if (chosen < 0) {
      chosen = static_cast<int>(busy.size());
      busy.push_back(0);
      storage_class.push_back(cls);
      plan.storage_bytes.push_back(tok.factor);
      plan.storage_sym.push_back(tok.sym);
      plan.storage_dtype.push_back(tok.dtype);
    }
    busy[chosen] = tok.last;
    tok.storage = chosen;
    outs.push_back(chosen);
  }
  for (size_t s = 0; s < plan.storage_bytes.size(); ++s) {
    if (plan.storage_sym[s].empty()) {
      ++plan.summary.num_storages;
      plan.summary.planned_bytes += plan.storage_bytes[s];
    } else {
      ++plan.summary.num_symbolic_storages;
      plan.summary.symbolic_planned_bytes_at_1 += plan.storage_bytes[s] * value_at_1(plan.storage_sym[s]);
    }
  }

  // Registers holding symbolic-size tensors are cleared after their last use, unless returned
  // (a var the result reads has last use kForever).
  for (int i = 0; i < n; ++i) {
    const graph::ExprNode* var = bindings[i].var.get();
    const auto& flat = live.alias[var].flat;
    bool dynamic = std::any_of(flat.begin(), flat.end(), [&](int t) { return tokens[t].storage == StoragePlan::kDynamic; });
    if (!dynamic) continue;
    auto u = live.last_use.find(var);
    int last = u == live.last_use.end() ? i : u->second;
    if (last != kForever) plan.kills[last].push_back(i);
  }
  return plan;
}

}  // namespace anvil::pipeline
