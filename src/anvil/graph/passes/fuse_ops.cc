// fuse_ops (fuse_ops.h): one forward sweep over the bindings. A fusible call adopts the groups
// of those of its arguments that are fusible calls used only by it; since every adopted value
// has a single use, a group is a tree and its root is its last binding, so the group can be
// evaluated at the root's place.
#include "anvil/graph/passes/fuse_ops.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "anvil/graph/op_registry.h"
#include "anvil/graph/passes/substitute.h"

namespace anvil::graph::passes {
namespace {

bool fusible_call(const Expr& value, const FusiblePredicate& fusible) {
  const auto* call = value.as<CallNode>();
  if (call == nullptr || call->op() == kCallTIR || call->op() == kCallFused) return false;
  const OpInfo* info = find_op(call->op());
  if (info == nullptr || info->pattern > OpPattern::kInjective) return false;
  if (!call->type().is_tensor()) return false;
  for (const Expr& a : call->args())
    if (!a.type().is_tensor() && a.as<ShapeExprNode>() == nullptr) return false;
  return !fusible || fusible(*call);
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
    std::vector<bool> fusible(bindings.size()), absorbed(bindings.size(), false);
    std::vector<std::vector<size_t>> members(bindings.size());  // per root, in binding order
    bool any = false;
    for (size_t i = 0; i < bindings.size(); ++i) {
      index[bindings[i].var.get()] = i;
      fusible[i] = fusible_call(bindings[i].value, fusible_);
      if (!fusible[i]) continue;
      std::vector<size_t> group;
      for (const Expr& a : bindings[i].value.as<CallNode>()->args()) {
        auto it = index.find(a.get());
        if (a.kind() != ExprKind::kVar || it == index.end()) continue;
        size_t j = it->second;
        if (!fusible[j] || absorbed[j] || uses[a.get()] != 1) continue;
        absorbed[j] = true;
        group.insert(group.end(), members[j].begin(), members[j].end());
        members[j].clear();
      }
      group.push_back(i);
      std::sort(group.begin(), group.end());
      members[i] = std::move(group);
      any = any || members[i].size() > 1;
    }
    if (!any) return f;
    std::vector<Binding> out;
    for (size_t i = 0; i < bindings.size(); ++i) {
      if (absorbed[i]) continue;
      if (!fusible[i] || members[i].size() < 2) {
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
