// The model's self-description as JSON (see model_info.h).
#include "anvil/pipeline/model_info.h"

#include <cstdio>
#include <set>

#include "anvil/base/error.h"
#include "anvil/ir/printer.h"
#include "anvil/pipeline/lower_graph.h"

namespace anvil::pipeline {
namespace {

std::string tensor_json(const std::string& name, const graph::Type& t) {
  std::string out = "{\"name\": " + json_quote(name);
  if (!t.is_tensor()) return out + "}";
  out += ", \"dtype\": " + json_quote(t.dtype().to_string());
  if (t.has_rank()) {
    out += ", \"shape\": [";
    for (int i = 0; i < t.ndim(); ++i) {
      std::optional<int64_t> c = ir::as_const_int(t.dim(i));
      out += (i ? ", " : "") + (c ? std::to_string(*c) : json_quote(ir::to_string(t.dim(i))));
    }
    out += "]";
  }
  return out + "}";
}

// The call_tir calls of an expression tree, in order.
void collect_kernels(const graph::Expr& e, std::set<std::string>& seen, std::string& out) {
  if (const auto* c = e.as<graph::CallNode>()) {
    for (const graph::Expr& a : c->args()) collect_kernels(a, seen, out);
    if (c->op() != graph::kCallTIR || !graph::has_attr(c->attrs(), kCallTIRFunc)) return;
    std::string func = graph::get_string(c->attrs(), kCallTIRFunc);
    if (!seen.insert(func).second) return;
    out += std::string(out.empty() ? "" : ", ") + "{\"name\": " + json_quote(func) +
           ", \"op\": " + json_quote(graph::get_string(c->attrs(), kCallTIROp, "")) +
           ", \"implementation\": " + json_quote(graph::get_string(c->attrs(), kCallTIRImplementation, "")) + "}";
  } else if (const auto* t = e.as<graph::TupleNode>()) {
    for (const graph::Expr& f : t->fields()) collect_kernels(f, seen, out);
  } else if (const auto* g = e.as<graph::TupleGetItemNode>()) {
    collect_kernels(g->tuple(), seen, out);
  }
}

}  // namespace

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string model_info_json(const graph::IRModule& mod, const MemoryPlan& plan, const std::string& target) {
  const graph::Function& main = mod.main();
  std::vector<std::string> in_names, out_names;
  if (graph::has_attr(mod.attrs, "input_names")) in_names = graph::get_strings(mod.attrs, "input_names");
  if (graph::has_attr(mod.attrs, "output_names")) out_names = graph::get_strings(mod.attrs, "output_names");
  std::string inputs;
  for (size_t i = 0; i < main.params().size(); ++i)
    inputs += (i ? ", " : "") + tensor_json(i < in_names.size() ? in_names[i] : main.params()[i].name(),
                                            main.params()[i].type());
  const graph::Type& ret = main.result().type();
  std::vector<graph::Type> outs = ret.is_tuple() ? ret.fields() : std::vector<graph::Type>{ret};
  std::string outputs;
  for (size_t i = 0; i < outs.size(); ++i)
    outputs += (i ? ", " : "") + tensor_json(i < out_names.size() ? out_names[i] : "output" + std::to_string(i), outs[i]);
  std::string kernels;
  std::set<std::string> seen;
  for (const graph::Binding& b : main.bindings()) collect_kernels(b.value, seen, kernels);
  collect_kernels(main.result(), seen, kernels);
  std::string memory = str_cat(
      "{\"peak_bytes\": ", plan.planned_bytes + plan.symbolic_planned_bytes_at_1,
      ", \"storages\": ", plan.num_storages + plan.num_symbolic_storages, ", \"static_storages\": ", plan.num_storages,
      ", \"planned_bytes\": ", plan.planned_bytes, ", \"unplanned_bytes\": ", plan.unplanned_bytes,
      ", \"static_tensors\": ", plan.num_static_tensors, ", \"dynamic_tensors\": ", plan.num_dynamic_tensors,
      ", \"symbolic_storages\": ", plan.num_symbolic_storages,
      ", \"symbolic_planned_bytes_at_1\": ", plan.symbolic_planned_bytes_at_1,
      ", \"symbolic_unplanned_bytes_at_1\": ", plan.symbolic_unplanned_bytes_at_1, "}");
  std::string out = "{\"inputs\": [" + inputs + "], \"outputs\": [" + outputs + "], \"kernels\": [" + kernels +
                    "], \"memory\": " + memory;
  if (!target.empty()) out += ", \"target\": " + json_quote(target);
  return out + "}";
}

}  // namespace anvil::pipeline
