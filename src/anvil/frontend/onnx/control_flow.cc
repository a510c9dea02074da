// ONNX If and Loop as graph control flow (control_flow.h).
#include "anvil/frontend/onnx/control_flow.h"

#include <cstring>
#include <limits>
#include <set>
#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/graph_inputs.h"
#include "anvil/frontend/onnx/node_order.h"

namespace anvil::frontend::onnx {

using graph::Type;

ImportState sub_state(const ImportState& outer) {
  ImportState sub;
  sub.opset = outer.opset;
  sub.model = outer.model;
  sub.base_dir = outer.base_dir;
  sub.functions = outer.functions;
  return sub;
}

// The type of an if whose branches give a and b: theirs where they agree; a dimension they give
// differently becomes a new symbolic dimension (bound when the if has run). nullopt when they
// differ in more (dtype, rank, tuple arity).
std::optional<Type> unify(const Type& a, const Type& b, const std::string& hint, int& fresh) {
  if (graph::type_equal(a, b)) return a;
  if (a.is_tuple() && b.is_tuple() && a.fields().size() == b.fields().size()) {
    std::vector<Type> fields;
    for (size_t i = 0; i < a.fields().size(); ++i) {
      std::optional<Type> f = unify(a.fields()[i], b.fields()[i], hint, fresh);
      if (!f) return std::nullopt;
      fields.push_back(*f);
    }
    return Type::tuple(std::move(fields));
  }
  if (!a.is_tensor() || !b.is_tensor() || a.dtype() != b.dtype() || !a.has_rank() || !b.has_rank() ||
      a.ndim() != b.ndim())
    return std::nullopt;
  std::vector<ir::PrimExpr> dims;
  for (int i = 0; i < a.ndim(); ++i) {
    const ir::PrimExpr& x = a.shape()[static_cast<size_t>(i)];
    const ir::PrimExpr& y = b.shape()[static_cast<size_t>(i)];
    bool same = x.same_as(y) || (ir::as_const_int(x) && ir::as_const_int(y) && *ir::as_const_int(x) == *ir::as_const_int(y));
    dims.push_back(same ? x : ir::PrimExpr(ir::size_var(str_cat(hint, "_d", fresh++))));
  }
  return Type::tensor(std::move(dims), a.dtype());
}

namespace {

using graph::Expr;
using graph::Type;

// The names a subgraph reads from enclosing scopes (through its nested subgraphs too), in order
// of first use.
void free_names(const GraphProto& g, std::vector<std::string>& out, std::unordered_set<std::string>& seen) {
  std::unordered_set<std::string> defined;
  for (const ValueInfoProto& in : g.input()) defined.insert(in.name());
  for (const TensorProto& t : g.initializer()) defined.insert(t.name());
  for (const NodeProto& n : g.node())
    for (const std::string& o : n.output()) defined.insert(o);
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) out.push_back(name);
  };
  for (const NodeProto& n : g.node()) {
    for (const std::string& in : n.input()) use(in);
    for (const AttributeProto& a : n.attribute()) {
      std::vector<std::string> inner;
      std::unordered_set<std::string> inner_seen;
      if (a.has_g()) free_names(a.g(), inner, inner_seen);
      for (const GraphProto& sub : a.graphs()) free_names(sub, inner, inner_seen);
      for (const std::string& name : inner) use(name);
    }
  }
  for (const ValueInfoProto& o : g.output()) use(o.name());
}

const GraphProto& graph_attr(const NodeProto& node, const std::string& name, const std::string& prefix) {
  for (const AttributeProto& a : node.attribute())
    if (a.name() == name) {
      if (!a.has_g()) value_error(prefix, ": attribute '", name, "' is not a graph");
      return a.g();
    }
  value_error(prefix, ": the graph attribute '", name, "' is missing");
}

// Converts the subgraph's initializers and nodes into `state` (already holding its inputs).
// Errors name the node and its graph attribute first ("onnx: node 15 (If, opset 20):
// then_branch 'g1': onnx: node 4 (Expand, ...): ..."): a subgraph's node numbers are its own.
void convert_body(ImportState& state, const GraphProto& g, const std::string& attr, const std::string& prefix) {
  try {
    import_initializers(g, state);
    std::unordered_set<std::string> available;
    for (const auto& [name, v] : state.values) available.insert(name);
    for (int index : node_order(g, available)) convert_node(state, g.node(index), index);
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat(prefix, ": ", attr, " '", g.name(), "': ", e.what()));
  }
}

// The outer values a node's subgraphs read: constants (copied into each body) and the others
// (passed as arguments: `args` in the outer function, one parameter each in every body).
struct Captured {
  std::vector<std::string> names;
  std::vector<Expr> exprs;  // the outer expressions, Constants included
};

Captured capture(ImportState& state, const std::vector<const GraphProto*>& bodies, const std::string& prefix) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (const GraphProto* g : bodies) free_names(*g, names, seen);
  Captured c;
  for (const std::string& name : names) {
    auto it = state.values.find(name);
    if (it == state.values.end())
      value_error(prefix, ": a subgraph reads '", name, "', which no enclosing graph defines before it");
    if (it->second.missing) not_implemented_error(prefix, ": a subgraph reads '", name, "': ", *it->second.missing);
    Expr e;
    try {
      e = materialize(state, it->second, sanitize_name(name));
    } catch (const Error& err) {
      throw Error(err.kind(), str_cat(prefix, ": outer value '", name, "': ", err.what()));
    }
    if (!e.type().is_tensor())
      not_implemented_error(prefix, ": a subgraph reads '", name, "' of type ", graph::to_string(e.type()),
                            "; only tensors can be passed into a branch or loop body");
    c.names.push_back(name);
    c.exprs.push_back(e);
  }
  return c;
}

// Adds the captured values to a body's state: constants as they are, the rest as parameters.
// Returns the arguments (outer expressions) of those parameters.
std::vector<Expr> add_captured(ImportState& sub, const Captured& c, const ImportState& outer) {
  std::vector<Expr> args;
  for (size_t i = 0; i < c.names.size(); ++i) {
    ImportedValue v;
    if (c.exprs[i].as<graph::ConstantNode>()) {
      v = outer.values.at(c.names[i]);
      v.expr = c.exprs[i];
    } else {
      v.expr = sub.builder.add_param(sanitize_name(c.names[i]), c.exprs[i].type());
      args.push_back(c.exprs[i]);
    }
    sub.values[c.names[i]] = std::move(v);
  }
  return args;
}

// The body's outputs as its result (one value, or a tuple of them), and the function, added to
// the module under a new name.
std::string finish_body(ImportState& sub, const GraphProto& g, const std::string& hint, const std::string& prefix,
                        Type* ret) {
  std::vector<Expr> results;
  for (const ValueInfoProto& out : g.output()) {
    try {
      results.push_back(output_expr(sub, out));
    } catch (const Error& e) {
      throw Error(e.kind(), str_cat(prefix, ": subgraph '", g.name(), "': ", e.what()));
    }
  }
  if (results.empty()) value_error(prefix, ": subgraph '", g.name(), "' has no outputs");
  Expr result = results.size() == 1 ? results[0] : graph::Tuple::make(results);
  std::string name = hint;
  for (int k = 1; sub.functions->count(name) || name == "main"; ++k) name = str_cat(hint, "_", k);
  *ret = result.type();
  sub.functions->emplace(name, sub.builder.finish(result));
  return name;
}

std::string node_hint(const NodeProto& node) {
  if (!node.name().empty()) return sanitize_name(node.name());
  for (const std::string& o : node.output())
    if (!o.empty()) return sanitize_name(o);
  return "cf";
}

// A value known at import: the condition's one element, when it is.
std::optional<bool> known_condition(const ImportState& state, const std::string& name) {
  auto it = state.values.find(name);
  if (it == state.values.end()) return std::nullopt;
  const ImportedValue& v = it->second;
  if (v.known && v.known->size() == 1)
    if (std::optional<int64_t> c = ir::as_const_int((*v.known)[0])) return *c != 0;
  if (const auto* c = v.expr.as<graph::ConstantNode>()) {
    const Tensor& t = c->data();
    if (t.numel() != 1 || !(t.dtype().is_bool() || t.dtype().is_int() || t.dtype().is_uint())) return std::nullopt;
    bool nonzero = false;
    const auto* bytes = static_cast<const uint8_t*>(t.data());
    for (size_t i = 0; i < t.dtype().bytes(); ++i) nonzero = nonzero || bytes[i] != 0;
    return nonzero;
  }
  return std::nullopt;
}

// Binds a control-flow call and records the node's outputs: the call itself for one output,
// else one projection each.
void record_outputs(ImportState& state, const NodeProto& node, const Expr& call, size_t count, const std::string& prefix) {
  if (static_cast<size_t>(node.output_size()) > count)
    value_error(prefix, ": the node has ", node.output_size(), " outputs but its subgraph gives ", count);
  Expr bound = state.builder.emit(call, node_hint(node));
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    ImportedValue v;
    v.expr = call.type().is_tuple() ? state.builder.emit(graph::TupleGetItem::make(bound, i), sanitize_name(node.output(i)))
                                    : bound;
    state.values[node.output(i)] = std::move(v);
  }
}

void convert_if(ImportState& state, const NodeProto& node, const std::string& prefix) {
  const GraphProto& then_g = graph_attr(node, "then_branch", prefix);
  const GraphProto& else_g = graph_attr(node, "else_branch", prefix);
  if (node.input_size() != 1 || node.input(0).empty()) value_error(prefix, ": If takes one input (cond)");
  if (std::optional<bool> taken = known_condition(state, node.input(0))) {
    // Only the taken branch, converted into this graph: its outputs become the node's.
    const GraphProto& g = *taken ? then_g : else_g;
    if (node.output_size() > g.output_size())
      value_error(prefix, ": the node has ", node.output_size(), " outputs but its branch gives ", g.output_size());
    convert_body(state, g, *taken ? "then_branch" : "else_branch", prefix);
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      auto it = state.values.find(g.output(i).name());
      if (it == state.values.end()) value_error(prefix, ": branch output '", g.output(i).name(), "' is not produced");
      ImportedValue v = it->second;
      state.values[node.output(i)] = std::move(v);
    }
    return;
  }
  Expr cond = materialize(state, state.values.at(node.input(0)), sanitize_name(node.input(0)));
  if (!cond.type().is_tensor() || cond.type().dtype() != DataType::boolean())
    value_error(prefix, ": the condition must be a bool tensor but is ", graph::to_string(cond.type()));
  Captured captured = capture(state, {&then_g, &else_g}, prefix);
  std::vector<Expr> args{cond};
  std::string names[2];
  Type types[2];
  const GraphProto* branches[2] = {&then_g, &else_g};
  for (int b = 0; b < 2; ++b) {
    ImportState sub = sub_state(state);
    std::vector<Expr> passed = add_captured(sub, captured, state);
    if (b == 0) args.insert(args.end(), passed.begin(), passed.end());
    convert_body(sub, *branches[b], b == 0 ? "then_branch" : "else_branch", prefix);
    names[b] = finish_body(sub, *branches[b], node_hint(node) + (b == 0 ? "_then" : "_else"), prefix, &types[b]);
  }
  int fresh = 0;
  std::optional<Type> type = unify(types[0], types[1], node_hint(node), fresh);
  if (!type)
    not_implemented_error(prefix, ": the branches give types that differ in more than dimensions (then ",
                          graph::to_string(types[0]), ", else ", graph::to_string(types[1]), ")");
  Expr call = graph::Call::make(graph::kCallIf, std::move(args),
                                {{"then_func", names[0]}, {"else_func", names[1]}}, *type);
  record_outputs(state, node, call, type->is_tuple() ? type->fields().size() : 1, prefix);
}

Expr scalar_constant(DataType dtype, int64_t value) {
  Tensor t = Tensor::empty(std::initializer_list<int64_t>{}, dtype);
  if (dtype.is_bool()) *static_cast<uint8_t*>(t.data()) = value != 0;
  else std::memcpy(t.data(), &value, sizeof value);
  return graph::Constant::make(t);
}

// An iteration's carried value fits the loop's carried type: equal, or differing only where
// that type has a symbolic dimension (the body's prologue binds it afresh each call).
bool carried_fits(const Type& out, const Type& carried) {
  if (graph::type_equal(out, carried)) return true;
  if (!out.is_tensor() || !carried.is_tensor() || out.dtype() != carried.dtype() || !out.has_rank() ||
      !carried.has_rank() || out.ndim() != carried.ndim())
    return false;
  for (int i = 0; i < out.ndim(); ++i) {
    const ir::PrimExpr& c = carried.shape()[static_cast<size_t>(i)];
    const ir::PrimExpr& o = out.shape()[static_cast<size_t>(i)];
    std::optional<int64_t> a = ir::as_const_int(c), b = ir::as_const_int(o);
    if (c.as<ir::VarNode>() == nullptr && !c.same_as(o) && !(a && b && *a == *b)) return false;
  }
  return true;
}

void convert_loop(ImportState& state, const NodeProto& node, const std::string& prefix) {
  const GraphProto& body = graph_attr(node, "body", prefix);
  if (node.input_size() < 2) value_error(prefix, ": Loop takes M, cond and the loop-carried values (", node.input_size(), " inputs)");
  auto num_carried = static_cast<size_t>(node.input_size() - 2);
  if (static_cast<size_t>(body.input_size()) != 2 + num_carried)
    value_error(prefix, ": the body takes ", body.input_size(), " inputs for ", num_carried, " loop-carried values");
  if (static_cast<size_t>(body.output_size()) < 1 + num_carried)
    value_error(prefix, ": the body gives ", body.output_size(), " outputs for ", num_carried, " loop-carried values");
  size_t num_scans = static_cast<size_t>(body.output_size()) - 1 - num_carried;
  auto input = [&](int i, const std::string& what) {
    Expr e = materialize(state, state.values.at(node.input(i)), sanitize_name(node.input(i)));
    if (!e.type().is_tensor() || !e.type().has_rank())
      not_implemented_error(prefix, ": ", what, " has type ", graph::to_string(e.type()), "; only tensors are supported");
    return e;
  };
  Expr max_trip = node.input(0).empty() ? scalar_constant(DataType::int64(), std::numeric_limits<int64_t>::max())
                                        : input(0, "M");
  Expr cond = node.input(1).empty() ? scalar_constant(DataType::boolean(), 1) : input(1, "cond");
  if (max_trip.type().dtype() != DataType::int64() || cond.type().dtype() != DataType::boolean())
    value_error(prefix, ": M must be an int64 and cond a bool tensor, not ", graph::to_string(max_trip.type()), " and ",
                graph::to_string(cond.type()));
  std::vector<Expr> args{max_trip, cond};
  std::vector<Type> carried_types;
  for (size_t k = 0; k < num_carried; ++k) {
    if (node.input(static_cast<int>(2 + k)).empty()) value_error(prefix, ": loop-carried input ", k, " is omitted");
    args.push_back(input(static_cast<int>(2 + k), str_cat("loop-carried value '", node.input(static_cast<int>(2 + k)), "'")));
    carried_types.push_back(args.back().type());
  }
  Captured captured = capture(state, {&body}, prefix);
  std::vector<Expr> passed;
  Type ret;
  std::string name;
  // The body, its carried values typed `carried_types`.
  auto import_body = [&] {
    ImportState sub = sub_state(state);
    // (iteration, cond, carried...) first, with the types the loop gives them; captured after.
    sub.values[body.input(0).name()].expr = sub.builder.add_param(sanitize_name(body.input(0).name(), "iteration"),
                                                                 Type::tensor(std::vector<int64_t>{}, DataType::int64()));
    sub.values[body.input(1).name()].expr = sub.builder.add_param(
        sanitize_name(body.input(1).name(), "cond"), Type::tensor(std::vector<int64_t>{}, DataType::boolean()));
    for (size_t k = 0; k < num_carried; ++k) {
      const std::string& name = body.input(static_cast<int>(2 + k)).name();
      sub.values[name].expr = sub.builder.add_param(sanitize_name(name), carried_types[k]);
    }
    passed = add_captured(sub, captured, state);
    convert_body(sub, body, "body", prefix);
    name = finish_body(sub, body, node_hint(node) + "_body", prefix, &ret);
  };
  std::set<std::string> before;  // the module's functions before the body (and those nested in it)
  for (const auto& kv : *state.functions) before.insert(kv.first);
  import_body();
  // A carried value whose dimensions an iteration changes (a slice by the iteration number):
  // those dimensions become symbolic (bound per call and from the result) and the body is
  // imported again with them.
  {
    std::vector<Type> outs = ret.is_tuple() ? ret.fields() : std::vector<Type>{ret};
    bool widened = false;
    int fresh = 0;
    for (size_t k = 0; k < num_carried && 1 + k < outs.size(); ++k) {
      if (graph::type_equal(outs[1 + k], carried_types[k])) continue;
      std::optional<Type> u = unify(carried_types[k], outs[1 + k], node_hint(node) + "_carried", fresh);
      if (u) carried_types[k] = *u, widened = true;
    }
    if (widened) {
      for (auto it = state.functions->begin(); it != state.functions->end();)
        it = before.count(it->first) ? std::next(it) : state.functions->erase(it);
      import_body();
    }
  }
  args.insert(args.end(), passed.begin(), passed.end());
  std::vector<Type> outs = ret.is_tuple() ? ret.fields() : std::vector<Type>{ret};
  const Type& cond_out = outs[0];
  if (!cond_out.is_tensor() || cond_out.dtype() != DataType::boolean() || !cond_out.has_rank())
    value_error(prefix, ": the body's condition output is ", graph::to_string(cond_out), ", not a bool tensor");
  std::vector<Type> fields;
  for (size_t k = 0; k < num_carried; ++k) {
    if (!carried_fits(outs[1 + k], carried_types[k]))
      not_implemented_error(prefix, ": loop-carried value '", body.output(static_cast<int>(1 + k)).name(), "' changes type from ",
                            graph::to_string(carried_types[k]), " to ", graph::to_string(outs[1 + k]),
                            " in an iteration; only loop-invariant types are supported");
    fields.push_back(carried_types[k]);
  }
  // A scan output stacks one element per iteration: its length is known only when it has run.
  ir::Var length = ir::size_var(name + "_iterations");
  for (size_t j = 0; j < num_scans; ++j) {
    const Type& t = outs[1 + num_carried + j];
    if (!t.is_tensor() || !t.has_rank())
      not_implemented_error(prefix, ": scan output ", j, " is ", graph::to_string(t), "; only tensors of known rank stack");
    std::vector<ir::PrimExpr> dims{length};
    dims.insert(dims.end(), t.shape().begin(), t.shape().end());
    fields.push_back(Type::tensor(dims, t.dtype()));
  }
  Expr call = graph::Call::make(graph::kCallLoop, std::move(args),
                                {{"body", name}, {"num_carried", static_cast<int64_t>(num_carried)}},
                                Type::tuple(fields));
  record_outputs(state, node, call, fields.size(), prefix);
}

}  // namespace

bool is_control_flow(const std::string& op_type) { return op_type == "If" || op_type == "Loop"; }

void convert_control_flow(ImportState& state, const NodeProto& node, int index) {
  std::string prefix = "onnx: " + node_label(node, index, *state.model);
  if (state.functions == nullptr) internal_check_failed(__FILE__, __LINE__, "ImportState::functions", prefix);
  if (node.op_type() == "If") convert_if(state, node, prefix);
  else convert_loop(state, node, prefix);
}

}  // namespace anvil::frontend::onnx
