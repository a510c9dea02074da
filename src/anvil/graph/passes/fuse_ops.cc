// fuse_ops (fuse_ops.h): one forward sweep over the bindings. A fusible call adopts the groups
// of those of its arguments that are fusible calls used only by it; since every adopted value
// has a single use, a group is a tree and its root is its last binding, so the group can be
// evaluated at the root's place. An anchor (kOutEWiseFusable: conv, dense, matmul, pool) starts
// a group of its own and adopts nothing; elementwise/broadcast consumers of its shape and dtype
// adopt it as their epilogue. An anchor group's root may have several uses when all of them are
// in the consuming group (HardSwish reads the conv twice): the anchor's result is computed once
// per tile and both reads see it, so nothing is recomputed but the cheap epilogue. A reduction
// (sum, mean, max, min, prod, argmax, argmin) is an anchor too, and also adopts the single-use
// plain group computing its data input (its prologue: mean(multiply(d, d)), sum(exp(x - m))).
#include "anvil/graph/passes/fuse_ops.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "anvil/graph/op_registry.h"
#include "anvil/graph/passes/substitute.h"

namespace anvil::graph::passes {
namespace {

enum class Role { kNone, kPlain, kAnchor, kReduce };

// The reductions with one data input whose CPU schedule (ops/cpu/schedule_reduce.cc) inlines
// injective stages before it and computes an epilogue output after it.
bool reduce_anchor(const std::string& op) {
  for (const char* r : {"sum", "mean", "max", "min", "prod", "argmax", "argmin"})
    if (op == r) return true;
  return false;
}

Role role_of(const Expr& value, const FusiblePredicate& fusible) {
  const auto* call = value.as<CallNode>();
  if (call == nullptr || call->op() == kCallTIR || call->op() == kCallFused) return Role::kNone;
  const OpInfo* info = find_op(call->op());
  if (info == nullptr) return Role::kNone;
  const bool anchor = info->pattern == OpPattern::kOutEWiseFusable;
  const bool reduce = info->pattern == OpPattern::kCommReduce && reduce_anchor(call->op());
  if (info->pattern > OpPattern::kInjective && !anchor && !reduce) return Role::kNone;
  if (!call->type().is_tensor()) return Role::kNone;
  for (const Expr& a : call->args())
    if (!a.type().is_tensor() && a.as<ShapeExprNode>() == nullptr) return Role::kNone;
  if (fusible && !fusible(*call)) return Role::kNone;
  return anchor ? Role::kAnchor : reduce ? Role::kReduce : Role::kPlain;
}

// Whether `call` may read an anchor group's value as an epilogue: elementwise or broadcast,
// producing exactly the anchor's type (so it reads the value at its own output position, the
// position the anchor's schedule computes for that tile).
bool epilogue_of(const CallNode& call, const Type& anchor_type) {
  const OpInfo* info = find_op(call.op());
  return info != nullptr && info->pattern <= OpPattern::kBroadcast && type_equal(call.type(), anchor_type);
}

// "fused_add_clip_multiply_divide": the first operators of the group, dots as underscores.
std::string group_hint(const std::vector<const CallNode*>& calls) {
  constexpr size_t kMaxOpsInName = 6;
  std::string hint = "fused";
  for (size_t i = 0; i < calls.size() && i < kMaxOpsInName; ++i) {
    hint += '_';
    for (char c : calls[i]->op()) hint += (c == '.' ? '_' : c);
  }
  if (calls.size() > kMaxOpsInName) hint += "_etc";
  return hint;
}

class Fuser {
 public:
  Fuser(IRModule& out, const FusiblePredicate& fusible) : out_(out), fusible_(fusible) {}

  Function run(const Function& f) {
    const std::vector<Binding>& bindings = f.bindings();
    std::unordered_map<const ExprNode*, int> uses = use_counts(f);
    std::unordered_map<const ExprNode*, size_t> index;  // binding var -> its index
    std::vector<Role> role(bindings.size());
    std::vector<bool> absorbed(bindings.size(), false);
    std::vector<std::vector<size_t>> members(bindings.size());  // per root, in binding order
    std::vector<std::optional<Type>> anchor(bindings.size());   // per root: its anchor's type
    // Roots no consumer may adopt: a reduction of unknown rank (lowering needs the rank). A 0-d
    // one is adopted like any other: its result becomes a one-element buffer in the kernel.
    std::vector<bool> sealed(bindings.size(), false);
    auto call_at = [&](size_t k) { return bindings[k].value.as<CallNode>(); };
    // The binding index of `a` when it is the root of a group that may still be adopted.
    auto open_root = [&](const Expr& a) -> std::optional<size_t> {
      auto it = index.find(a.get());
      if (a.kind() != ExprKind::kVar || it == index.end()) return std::nullopt;
      if (role[it->second] == Role::kNone || absorbed[it->second] || sealed[it->second]) return std::nullopt;
      return it->second;
    };
    bool any = false;
    for (size_t i = 0; i < bindings.size(); ++i) {
      index[bindings[i].var.get()] = i;
      role[i] = role_of(bindings[i].value, fusible_);
      if (role[i] == Role::kNone) continue;
      members[i] = {i};
      if (role[i] == Role::kAnchor) {
        anchor[i] = bindings[i].value.type();
        continue;
      }
      if (role[i] == Role::kReduce) {
        // The prologue: the single-use plain group computing the data input, inlined into the
        // reduction (no anchor group: that would be a second anchor).
        const Expr& data = call_at(i)->args()[0];
        std::optional<size_t> j = open_root(data);
        if (j && uses[data.get()] == 1 && !anchor[*j]) {
          absorbed[*j] = true;
          members[i] = members[*j];
          members[*j].clear();
          members[i].push_back(i);
        }
        anchor[i] = bindings[i].value.type();
        sealed[i] = !bindings[i].value.type().has_rank();
        any = any || members[i].size() > 1;
        continue;
      }
      const CallNode* call = call_at(i);
      std::vector<size_t> group = {i};
      std::optional<Type> group_anchor;
      auto adopt = [&](size_t j) {
        absorbed[j] = true;
        group.insert(group.end(), members[j].begin(), members[j].end());
        members[j].clear();
        if (anchor[j]) group_anchor = anchor[j];
      };
      // Single-use arguments; at most one anchor group, read as an epilogue.
      for (const Expr& a : call->args()) {
        std::optional<size_t> j = open_root(a);
        if (!j || uses[a.get()] != 1) continue;
        if (anchor[*j] && (group_anchor || !epilogue_of(*call, *anchor[*j]))) continue;
        adopt(*j);
      }
      // An anchor group whose root's every use is in the group formed so far, each an epilogue.
      if (!group_anchor) {
        for (const Expr& a : call->args()) {
          std::optional<size_t> j = open_root(a);
          if (!j || !anchor[*j] || uses[a.get()] < 2) continue;
          int inside = 0;
          bool epilogues = true;
          for (size_t m : group)
            for (const Expr& arg : call_at(m)->args())
              if (arg.same_as(a)) {
                ++inside;
                epilogues = epilogues && epilogue_of(*call_at(m), *anchor[*j]);
              }
          if (inside != uses[a.get()] || !epilogues) continue;
          adopt(*j);
          break;
        }
      }
      std::sort(group.begin(), group.end());
      members[i] = std::move(group);
      anchor[i] = group_anchor;
      any = any || members[i].size() > 1;
    }
    if (!any) return f;
    std::vector<Binding> out;
    for (size_t i = 0; i < bindings.size(); ++i) {
      if (absorbed[i]) continue;
      if (role[i] == Role::kNone || members[i].size() < 2) {
        out.push_back(bindings[i]);
        continue;
      }
      out.push_back({bindings[i].var, make_group(bindings, members[i])});
    }
    return Function::make(f.params(), std::move(out), f.result());
  }

 private:
  // The group's Function (added to the module) and the call_fused that replaces its root.
  Expr make_group(const std::vector<Binding>& bindings, const std::vector<size_t>& group) {
    std::unordered_map<const ExprNode*, Expr> inner;  // member var or external input -> group value
    std::vector<Var> params;
    std::vector<Expr> call_args;
    std::vector<Binding> body;
    std::vector<const CallNode*> calls;
    for (size_t k = 0; k < group.size(); ++k) {
      const Binding& b = bindings[group[k]];
      const auto* call = b.value.as<CallNode>();
      calls.push_back(call);
      std::vector<Expr> args;
      for (const Expr& a : call->args()) {
        if (a.as<ShapeExprNode>() != nullptr) {
          args.push_back(a);
          continue;
        }
        auto it = inner.find(a.get());
        if (it == inner.end()) {
          Var p = Var::make("p" + std::to_string(params.size()), a.type());
          params.push_back(p);
          call_args.push_back(a);
          it = inner.emplace(a.get(), p).first;
        }
        args.push_back(it->second);
      }
      Var v = Var::make("t" + std::to_string(k), b.var.type());
      body.push_back({v, Call::make(call->op(), std::move(args), call->attrs(), call->type())});
      inner[b.var.get()] = v;
    }
    Expr result = body.back().var;
    Type type = result.type();
    std::string name = out_.unique_name(group_hint(calls));
    out_.functions[name] = Function::make(std::move(params), std::move(body), result);
    return Call::make(kCallFused, std::move(call_args), {{"func", name}}, type);
  }

  IRModule& out_;
  const FusiblePredicate& fusible_;
};

}  // namespace

IRModule fuse_ops(const IRModule& mod, const FusiblePredicate& fusible) {
  IRModule out = mod;
  Fuser fuser(out, fusible);
  for (const auto& [name, f] : mod.functions) out.functions[name] = fuser.run(f);
  return out;
}

}  // namespace anvil::graph::passes
