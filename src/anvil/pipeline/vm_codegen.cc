// vm_codegen: graph functions -> VM bytecode (see vm_codegen.h). The shape heap's layout is only
// known once every expression the body needs has a slot, so each function is emitted twice:
// the first time into a scratch builder to number the heap's values, the second time for real
// with the heap's size and all its derived values computed up front.
#include "anvil/pipeline/vm_codegen.h"

#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/pipeline/lower_graph.h"
#include "anvil/pipeline/model_info.h"
#include "anvil/pipeline/shape_heap.h"
#include "anvil/runtime/vm/exec_builder.h"

namespace anvil::pipeline {
namespace {

using graph::Expr;
using graph::ExprKind;
using vm::Arg;
using vm::RegName;

std::vector<graph::Type> output_types(const graph::Type& t) {
  if (t.is_tuple()) return t.fields();
  return {t};
}

// What every function of one executable shares: the builder and the constant pool's tensors.
struct ModuleState {
  vm::ExecBuilder builder;
  std::unordered_map<const graph::ExprNode*, int64_t> constants;
};

class FunctionEmitter {
 public:
  FunctionEmitter(ModuleState& m, ShapeHeap& heap, const graph::Function& f, std::string name,
                  const StoragePlan& plan, const VmCodegenOptions& options)
      : m_(m), b_(m.builder), heap_(heap), f_(f), name_(std::move(name)), plan_(plan), options_(options) {}

  // first: the heap numbered by a previous emission (nullptr during that first emission).
  void emit(const std::vector<std::string>& param_names, const ShapeHeap* first) {
    b_.begin_function(name_, param_names);
    next_reg_ = static_cast<RegName>(f_.params().size());
    for (size_t i = 0; i < f_.params().size(); ++i) value_of_[f_.params()[i].get()] = Arg::reg(static_cast<RegName>(i));
    storage_reg_.assign(plan_.storage_bytes.size(), -1);
    prologue(param_names, first);
    for (size_t i = 0; i < f_.bindings().size(); ++i) {
      const graph::Binding& bind = f_.bindings()[i];
      Arg a = emit_expr(bind.value, static_cast<int>(i));
      // Every binding var has a register of its own (`y = x` copies), so clearing one after
      // its last use never clears another's; constants stay in the pool.
      if (bind.value.kind() == ExprKind::kVar && a.kind == vm::ArgKind::kRegister) a = copy_to_new(a);
      value_of_[bind.var.get()] = a;
      for (int k : plan_.kills[i])
        b_.emit_call("vm.builtin.null_value", {}, value_of_.at(f_.bindings()[k].var.get()).value);
    }
    Arg result = emit_expr(f_.result(), -1);
    if (result.kind != vm::ArgKind::kRegister) result = copy_to_new(result);
    b_.emit_ret(result.value);
    b_.end_function();
  }

 private:
  RegName new_reg() { return next_reg_++; }
  Arg copy_to_new(Arg a) {
    RegName r = new_reg();
    b_.emit_call("vm.builtin.copy", {a}, r);
    return Arg::reg(r);
  }
  Arg str(const std::string& s) { return Arg::constant(b_.add_constant(Value(s))); }
  Arg dtype(ir::DataType t) { return Arg::constant(b_.add_constant(Value(t))); }
  Arg heap_arg() const { return heap_reg_ >= 0 ? Arg::reg(heap_reg_) : Arg::void_value(); }

  // Checks and shape matching of the parameters; the heap's derived values.
  void prologue(const std::vector<std::string>& param_names, const ShapeHeap* first) {
    bool has_heap = first != nullptr ? first->size() > 0 : true;
    if (has_heap) {
      heap_reg_ = new_reg();
      b_.emit_call("vm.builtin.alloc_shape_heap", {Arg::vm(), b_.int_arg(first != nullptr ? first->size() : 0)},
                   heap_reg_);
    }
    std::vector<size_t> with_expressions;
    for (size_t i = 0; i < f_.params().size(); ++i) {
      const graph::Type& t = f_.params()[i].type();
      std::string ctx = str_cat(name_, ": input '", param_names[i], "'");
      if (!t.is_tensor())
        not_implemented_error(ctx, " has type ", graph::to_string(t), ": only tensor inputs are supported yet");
      auto reg = Arg::reg(static_cast<RegName>(i));
      b_.emit_call("vm.builtin.check_tensor_info",
                   {reg, b_.int_arg(t.has_rank() ? t.ndim() : -1), dtype(t.dtype()), b_.int_arg(options_.device_type),
                    str(ctx)});
      if (!t.has_rank() || t.ndim() == 0) continue;
      std::vector<Arg> args{reg, heap_arg(), b_.int_arg(t.ndim())};
      bool expressions = false;
      for (const ir::PrimExpr& d : t.shape()) {
        if (std::optional<int64_t> c = ir::as_const_int(d)) {
          args.push_back(Arg::imm(0)), args.push_back(b_.int_arg(*c));
        } else if (const auto* v = d.as<ir::VarNode>()) {
          std::optional<int64_t> slot = heap_.var_slot(v);
          if (slot) {
            args.push_back(Arg::imm(3)), args.push_back(Arg::imm(*slot));
          } else {
            int64_t s = heap_.bind_var(ir::Var(v));
            args.push_back(Arg::imm(1)), args.push_back(Arg::imm(s));
            bound_here_.insert(v);
            available_slots_.insert(s);
          }
        } else {
          args.push_back(Arg::imm(2)), args.push_back(Arg::imm(0));
          expressions = true;
        }
      }
      args.push_back(str(ctx));
      b_.emit_call("vm.builtin.match_shape", args);  // without a heap every code is immediate
      if (expressions) with_expressions.push_back(i);
    }
    if (first != nullptr) heap_.adopt_computes(*first);
    emitting_computes_ = first != nullptr;
    emit_ready_computes();
    // Input dimensions written as expressions (n * 2) are checked against their computed value.
    for (size_t i : with_expressions) {
      const graph::Type& t = f_.params()[i].type();
      std::string ctx = str_cat(name_, ": input '", param_names[i], "'");
      std::vector<Arg> args{Arg::reg(static_cast<RegName>(i)), heap_arg(), b_.int_arg(t.ndim())};
      for (const ir::PrimExpr& d : t.shape()) {
        bool plain = ir::as_const_int(d) || d.as<ir::VarNode>() != nullptr;
        HeapOperand o = plain ? HeapOperand{} : heap_.operand(name_, d);
        if (plain) args.push_back(Arg::imm(2)), args.push_back(Arg::imm(0));
        else if (o.is_imm()) args.push_back(Arg::imm(0)), args.push_back(b_.int_arg(o.value));
        else args.push_back(Arg::imm(3)), args.push_back(Arg::imm(o.value));
      }
      args.push_back(str(ctx));
      b_.emit_call("vm.builtin.match_shape", args);
    }
  }

  // Derived values whose operands are all bound (operands precede their users in the list):
  // those of the parameters' dims in the prologue, the rest once a control-flow result binds
  // the Vars they read (bind_result_dims).
  void emit_ready_computes() {
    if (!emitting_computes_) return;
    const std::vector<ShapeHeap::Compute>& cs = heap_.computes();
    compute_done_.resize(cs.size(), false);
    auto ready = [&](const HeapOperand& o) { return o.is_imm() || available_slots_.count(o.value) != 0; };
    for (size_t i = 0; i < cs.size(); ++i) {
      const ShapeHeap::Compute& c = cs[i];
      if (compute_done_[i] || !ready(c.a) || !ready(c.b)) continue;
      b_.emit_call("vm.builtin.shape_compute", {heap_arg(), Arg::imm(c.dst), str(c.op), Arg::imm(c.a.code),
                                                b_.int_arg(c.a.value), Arg::imm(c.b.code), b_.int_arg(c.b.value)});
      compute_done_[i] = true;
      available_slots_.insert(c.dst);
    }
  }

  // A control-flow result's dimensions that are Vars this function has not bound yet (a loop's
  // iteration count, an if whose branches differ in a dimension) are bound from its shape; the
  // others are checked. Tuple results: each field.
  void bind_result_dims(Arg value, const graph::Type& t, const std::string& what = "a control-flow result") {
    if (t.is_tuple()) {
      for (size_t k = 0; k < t.fields().size(); ++k) {
        if (!has_unbound_var(t.fields()[k])) continue;
        RegName r = new_reg();
        b_.emit_call("vm.builtin.tuple_getitem", {value, Arg::imm(static_cast<int64_t>(k))}, r);
        bind_result_dims(Arg::reg(r), t.fields()[k], what);
      }
      return;
    }
    if (!has_unbound_var(t)) return;
    std::string ctx = str_cat(name_, ": ", what);
    std::vector<Arg> args{value, heap_arg(), b_.int_arg(t.ndim())};
    for (const ir::PrimExpr& d : dims_or_values(t)) {
      const auto* v = d.as<ir::VarNode>();
      if (v == nullptr || bound_here_.count(v)) {
        args.push_back(Arg::imm(2)), args.push_back(Arg::imm(0));
        continue;
      }
      std::optional<int64_t> slot = heap_.var_slot(v);
      int64_t s = slot ? *slot : heap_.bind_var(ir::Var(v));
      args.push_back(Arg::imm(1)), args.push_back(Arg::imm(s));
      bound_here_.insert(v);
      available_slots_.insert(s);
    }
    args.push_back(str(ctx));
    b_.emit_call("vm.builtin.match_shape", args);
    emit_ready_computes();
  }
  bool has_unbound_var(const graph::Type& t) const {
    if (t.is_tuple()) {
      for (const graph::Type& f : t.fields())
        if (has_unbound_var(f)) return true;
      return false;
    }
    if (!(t.is_tensor() && t.has_rank()) && t.shape_values() == nullptr) return false;
    for (const ir::PrimExpr& d : dims_or_values(t))
      if (const auto* v = d.as<ir::VarNode>(); v != nullptr && !bound_here_.count(v)) return true;
    return false;
  }
  // A tensor's dims, or a Shape's values (tensor_to_shape: match_shape reads both).
  static const std::vector<ir::PrimExpr>& dims_or_values(const graph::Type& t) {
    return t.is_shape() ? *t.shape_values() : t.shape();
  }

  // A Shape value of these dimensions: a constant when static, else make_shape from the heap.
  Arg shape_arg(const std::vector<ir::PrimExpr>& dims) {
    std::vector<HeapOperand> ops;
    for (const ir::PrimExpr& d : dims) ops.push_back(heap_.operand(name_, d));
    return shape_of_operands(ops);
  }

  // The heap is complete after the prologue, so each distinct Shape is made once, where it is
  // first needed (the code is straight-line: that point precedes every later use).
  Arg shape_of_operands(const std::vector<HeapOperand>& ops) {
    std::vector<std::pair<int64_t, int64_t>> key;
    bool all_imm = true;
    for (const HeapOperand& o : ops) {
      key.emplace_back(o.code, o.value);
      all_imm = all_imm && o.is_imm();
    }
    if (all_imm) {
      std::vector<int64_t> values;
      for (const HeapOperand& o : ops) values.push_back(o.value);
      return Arg::constant(b_.add_constant(Value::shape(std::move(values))));
    }
    auto cached = shapes_.find(key);
    if (cached != shapes_.end()) return cached->second;
    std::vector<Arg> args{heap_arg(), b_.int_arg(static_cast<int64_t>(ops.size()))};
    for (const HeapOperand& o : ops) args.push_back(Arg::imm(o.code)), args.push_back(b_.int_arg(o.value));
    RegName r = new_reg();
    b_.emit_call("vm.builtin.make_shape", args, r);
    return shapes_[key] = Arg::reg(r);
  }

  // A fresh output tensor of type t: in planned storage `storage`, or allocated on its own.
  Arg alloc_output(const graph::Type& t, int storage) {
    if (!t.is_tensor() || !t.has_rank())
      value_error(name_, ": a kernel output must be a tensor of known rank but has type ", graph::to_string(t));
    Arg shape = shape_arg(t.shape());
    Arg storage_arg;
    if (storage >= 0) {
      RegName& sr = storage_reg_[static_cast<size_t>(storage)];
      if (sr < 0) {
        // Its final size: a constant, or factor * its class's symbolic dims from the heap.
        auto s = static_cast<size_t>(storage);
        HeapOperand bytes{0, plan_.storage_bytes[s]};
        for (const ir::PrimExpr& d : plan_.storage_sym[s]) bytes = heap_.compute("mul", bytes, heap_.operand(name_, d));
        Arg size = bytes.is_imm() ? b_.int_arg(bytes.value) : shape_of_operands({bytes});
        sr = new_reg();
        b_.emit_call("vm.builtin.alloc_storage", {Arg::vm(), size, Arg::imm(0), dtype(plan_.storage_dtype[s])}, sr);
      }
      storage_arg = Arg::reg(sr);
    } else {
      // Bytes = element size * every dimension, computed in the heap when symbolic.
      HeapOperand bytes{0, static_cast<int64_t>(t.dtype().bytes())};
      for (const ir::PrimExpr& d : t.shape()) bytes = heap_.compute("mul", bytes, heap_.operand(name_, d));
      // alloc_storage takes a symbolic size as a 1-d Shape.
      Arg size = bytes.is_imm() ? b_.int_arg(bytes.value) : shape_of_operands({bytes});
      // One scratch register for these storages: overwriting it leaves the tensor as the only
      // owner, so clearing the tensor's register after its last use frees the block.
      if (scratch_storage_reg_ < 0) scratch_storage_reg_ = new_reg();
      storage_arg = Arg::reg(scratch_storage_reg_);
      b_.emit_call("vm.builtin.alloc_storage", {Arg::vm(), size, Arg::imm(0), dtype(t.dtype())}, storage_arg.value);
    }
    RegName out = new_reg();
    b_.emit_call("vm.builtin.alloc_tensor", {storage_arg, Arg::imm(0), shape, dtype(t.dtype())}, out);
    return Arg::reg(out);
  }

  Arg emit_call_tir(const graph::CallNode& call, int binding) {
    std::string func = graph::get_string(call.attrs(), kCallTIRFunc);
    std::vector<Arg> args;
    for (const Expr& a : call.args()) args.push_back(emit_expr(a, -1));
    std::vector<graph::Type> outs = output_types(call.type());
    std::vector<Arg> out_regs;
    for (size_t k = 0; k < outs.size(); ++k) {
      int storage = StoragePlan::kDynamic;
      if (binding >= 0 && k < plan_.output_storage[static_cast<size_t>(binding)].size())
        storage = plan_.output_storage[static_cast<size_t>(binding)][k];
      out_regs.push_back(alloc_output(outs[k], storage));
    }
    args.insert(args.end(), out_regs.begin(), out_regs.end());
    std::vector<std::string> shape_vars;
    if (graph::has_attr(call.attrs(), kCallTIRShapeVars)) shape_vars = graph::get_strings(call.attrs(), kCallTIRShapeVars);
    if (shape_vars.empty()) {
      b_.emit_call(func, args);
    } else {
      // call_tir_dyn appends the Shape's values as int arguments: the kernel's trailing scalars.
      std::vector<ir::PrimExpr> values;
      for (const std::string& v : shape_vars) values.push_back(heap_.var_named(name_, v));
      args.push_back(shape_arg(values));
      args.insert(args.begin(), Arg::func(b_.function_index(func)));
      b_.emit_call("vm.builtin.call_tir_dyn", args);
    }
    if (!call.type().is_tuple()) return out_regs[0];
    RegName r = new_reg();
    b_.emit_call("vm.builtin.make_tuple", out_regs, r);
    return Arg::reg(r);
  }

  Arg constant_arg(const Expr& e) {
    auto it = m_.constants.find(e.get());
    if (it != m_.constants.end()) return Arg::constant(it->second);
    int64_t index = b_.add_constant(Value(e.as<graph::ConstantNode>()->data()));
    m_.constants[e.get()] = index;
    return Arg::constant(index);
  }

  Arg emit_call(const graph::CallNode& call, int binding) {
    const std::string& op = call.op();
    if (op == graph::kCallTIR) return emit_call_tir(call, binding);
    if (op == "reshape" || op == "squeeze" || op == "expand_dims") {
      Arg x = emit_expr(call.args().at(0), -1);
      Arg shape = shape_arg(call.type().shape());
      RegName r = new_reg();
      b_.emit_call("vm.builtin.reshape", {x, shape}, r);
      return Arg::reg(r);
    }
    if (op == "shape_of") {
      const graph::Type& t = call.args().at(0).type();
      if (t.has_rank()) return shape_arg(t.shape());
      RegName r = new_reg();
      b_.emit_call("vm.builtin.shape_of", {emit_expr(call.args()[0], -1)}, r);
      return Arg::reg(r);
    }
    if (op == "shape_to_tensor") return shape_to_tensor(call);
    if (op == graph::kCallIf) return emit_if(call);
    if (op == graph::kCallLoop) return emit_loop(call);
    if (op == "check") {  // a run-time assertion (graph/ops/control_flow.cc): x's copy, or the message
      Arg x = emit_expr(call.args().at(0), -1);
      Arg ok = emit_expr(call.args().at(1), -1);
      RegName r = new_reg();
      b_.emit_call("vm.builtin.check", {x, ok, str(graph::get_string(call.attrs(), "message"))}, r);
      return Arg::reg(r);
    }
    if (graph::is_data_dependent_op(op)) return emit_data_dependent(call);
    value_error(name_, ": the call of graph operator '", op, "' was not lowered to a kernel (run lower_graph first)");
  }

  // if: the condition read on the host, then a call of one branch function or the other into
  // one register. The branches are VM functions of their own (their own shape heap and memory
  // plan), so this function's code stays straight-line around them.
  Arg emit_if(const graph::CallNode& call) {
    std::vector<Arg> args;
    for (const Expr& a : call.args()) args.push_back(emit_expr(a, -1));
    std::vector<Arg> captured(args.begin() + 1, args.end());
    RegName cond = new_reg();
    b_.emit_call("vm.builtin.read_if_cond", {args[0]}, cond);
    RegName out = new_reg();
    int64_t branch = b_.emit_if(cond, 2);
    b_.emit_call(graph::get_string(call.attrs(), "then_func"), captured, out);
    int64_t skip = b_.emit_goto(1);
    b_.patch_jump(branch, b_.next_instr() - branch);
    b_.emit_call(graph::get_string(call.attrs(), "else_func"), captured, out);
    b_.patch_jump(skip, b_.next_instr() - skip);
    bind_result_dims(Arg::reg(out), call.type());
    return Arg::reg(out);
  }

  // loop: a counted while loop in this function's bytecode around calls of the body function.
  //   i = 0; cond, carried = the initial values; lists = []
  //   head: if !(i < max_trip && cond) goto done
  //         r = body(tensor(i), cond, carried..., captured...); cond, carried = r[0], r[1..N]
  //         lists[j] += r[1 + N + j]; i = i + 1; goto head
  //   done: scans[j] = stack(lists[j]); result = (carried..., scans...)
  Arg emit_loop(const graph::CallNode& call) {
    std::vector<Arg> args;
    for (const Expr& a : call.args()) args.push_back(emit_expr(a, -1));
    auto num_carried = static_cast<size_t>(graph::get_int(call.attrs(), "num_carried"));
    const std::vector<graph::Type>& outs = call.type().fields();
    ANVIL_ICHECK(args.size() >= 2 + num_carried && outs.size() >= num_carried, "loop arity");
    size_t num_scans = outs.size() - num_carried;
    RegName iter = new_reg(), cond = new_reg();
    b_.emit_call("vm.builtin.copy", {b_.int_arg(0)}, iter);
    b_.emit_call("vm.builtin.copy", {args[1]}, cond);
    std::vector<RegName> carried, lists;
    for (size_t k = 0; k < num_carried; ++k) {
      carried.push_back(new_reg());
      b_.emit_call("vm.builtin.copy", {args[2 + k]}, carried.back());
    }
    for (size_t j = 0; j < num_scans; ++j) {
      lists.push_back(new_reg());
      b_.emit_call("vm.builtin.make_tuple", {}, lists.back());
    }
    int64_t head = b_.next_instr();
    RegName go = new_reg();
    b_.emit_call("vm.builtin.loop_continue", {Arg::reg(iter), args[0], Arg::reg(cond)}, go);
    int64_t exit = b_.emit_if(go, 2);
    RegName iter_tensor = new_reg();
    b_.emit_call("vm.builtin.iteration_tensor", {Arg::reg(iter)}, iter_tensor);
    std::vector<Arg> body_args{Arg::reg(iter_tensor), Arg::reg(cond)};
    for (RegName r : carried) body_args.push_back(Arg::reg(r));
    body_args.insert(body_args.end(), args.begin() + 2 + static_cast<std::ptrdiff_t>(num_carried), args.end());
    RegName r = new_reg();
    b_.emit_call(graph::get_string(call.attrs(), "body"), body_args, r);
    b_.emit_call("vm.builtin.tuple_getitem", {Arg::reg(r), Arg::imm(0)}, cond);
    for (size_t k = 0; k < num_carried; ++k)
      b_.emit_call("vm.builtin.tuple_getitem", {Arg::reg(r), b_.int_arg(static_cast<int64_t>(1 + k))}, carried[k]);
    for (size_t j = 0; j < num_scans; ++j)
      b_.emit_call("vm.builtin.list_append",
                   {Arg::reg(lists[j]), Arg::reg(r), b_.int_arg(static_cast<int64_t>(1 + num_carried + j))}, lists[j]);
    b_.emit_call("vm.builtin.add", {Arg::reg(iter), Arg::imm(1)}, iter);
    b_.emit_goto(head - b_.next_instr());
    b_.patch_jump(exit, b_.next_instr() - exit);
    std::vector<Arg> fields;
    for (RegName c : carried) fields.push_back(Arg::reg(c));
    for (size_t j = 0; j < num_scans; ++j) {
      const graph::Type& t = outs[num_carried + j];
      if (!t.is_tensor() || !t.has_rank() || t.ndim() < 1)
        value_error(name_, ": a loop's scan output must be a tensor of known rank, not ", graph::to_string(t));
      // An empty scan (no iteration) has the element shape's static dims, 0 for symbolic ones.
      std::vector<int64_t> rest;
      for (size_t d = 1; d < t.shape().size(); ++d) rest.push_back(ir::as_const_int(t.shape()[d]).value_or(0));
      RegName out = new_reg();
      b_.emit_call("vm.builtin.stack_tensors",
                   {Arg::reg(lists[j]), dtype(t.dtype()), Arg::constant(b_.add_constant(Value::shape(std::move(rest))))},
                   out);
      fields.push_back(Arg::reg(out));
    }
    RegName result = new_reg();
    b_.emit_call("vm.builtin.make_tuple", fields, result);
    bind_result_dims(Arg::reg(result), call.type());
    return Arg::reg(result);
  }

  // nonzero / dynamic_slice / unique / tensor_to_shape / reshape_target: a host builtin computes the
  // result (its shape or values depend on values), whose fresh Vars are then bound from it like a
  // control-flow result's.
  Arg emit_data_dependent(const graph::CallNode& call) {
    std::vector<Arg> args;
    for (const Expr& a : call.args()) args.push_back(emit_expr(a, -1));
    if (call.op() == graph::kDynamicSlice && args.size() == 4)
      args.push_back(Arg::constant(b_.add_constant(Value::shape(graph::get_ints(call.attrs(), "axes")))));
    if (call.op() == graph::kReshapeTarget) args.push_back(b_.int_arg(graph::get_int(call.attrs(), "allowzero")));
    if (call.op() == graph::kUnique) {
      args.push_back(b_.int_arg(graph::get_int(call.attrs(), "sorted")));
      args.push_back(b_.int_arg(graph::get_int(call.attrs(), "axis")));
    }
    RegName out = new_reg();
    b_.emit_call(str_cat("vm.builtin.", call.op()), args, out);
    bind_result_dims(Arg::reg(out), call.type(), str_cat("the result of ", call.op()));
    return Arg::reg(out);
  }

  // A static shape becomes an int64 constant; a symbolic one needs a builtin the VM lacks yet.
  Arg shape_to_tensor(const graph::CallNode& call) {
    const Expr& a = call.args().at(0);
    const auto* s = a.as<graph::ShapeExprNode>();
    std::vector<int64_t> values;
    if (s != nullptr)
      for (const ir::PrimExpr& v : s->values())
        if (std::optional<int64_t> c = ir::as_const_int(v)) values.push_back(*c);
    if (s == nullptr || values.size() != s->values().size())
      not_implemented_error(name_, ": shape_to_tensor of a shape that is not a static ShapeExpr (",
                            graph::to_string(a.type()), ") needs a VM builtin that does not exist yet");
    Tensor t = Tensor::empty({static_cast<int64_t>(values.size())}, DataType::int64());
    if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(int64_t));
    return Arg::constant(b_.add_constant(Value(t)));
  }

  Arg emit_expr(const Expr& e, int binding) {
    switch (e.kind()) {
      case ExprKind::kVar: {
        auto it = value_of_.find(e.get());
        if (it == value_of_.end())
          value_error(name_, ": variable '", e.as<graph::VarNode>()->name(), "' is used before it is bound");
        return it->second;
      }
      case ExprKind::kConstant:
        return constant_arg(e);
      case ExprKind::kShapeExpr:
        return shape_arg(e.as<graph::ShapeExprNode>()->values());
      case ExprKind::kTuple: {
        std::vector<Arg> fields;
        for (const Expr& f : e.as<graph::TupleNode>()->fields()) fields.push_back(emit_expr(f, -1));
        RegName r = new_reg();
        b_.emit_call("vm.builtin.make_tuple", fields, r);
        return Arg::reg(r);
      }
      case ExprKind::kTupleGetItem: {
        const auto* g = e.as<graph::TupleGetItemNode>();
        Arg t = emit_expr(g->tuple(), -1);
        RegName r = new_reg();
        b_.emit_call("vm.builtin.tuple_getitem", {t, Arg::imm(g->index())}, r);
        return Arg::reg(r);
      }
      case ExprKind::kCall:
        return emit_call(*e.as<graph::CallNode>(), binding);
    }
    internal_check_failed(__FILE__, __LINE__, "known expression kind", "");
  }

  ModuleState& m_;
  vm::ExecBuilder& b_;
  ShapeHeap& heap_;
  const graph::Function& f_;
  std::string name_;
  const StoragePlan& plan_;
  const VmCodegenOptions& options_;
  RegName next_reg_ = 0;
  RegName heap_reg_ = -1;
  RegName scratch_storage_reg_ = -1;
  std::vector<RegName> storage_reg_;
  bool emitting_computes_ = false;  // the second emission: the heap's numbering is known
  std::vector<bool> compute_done_;
  std::unordered_set<int64_t> available_slots_;          // heap slots holding their value here
  std::unordered_set<const ir::VarNode*> bound_here_;     // Vars match_shape bound in this function
  std::unordered_map<const graph::ExprNode*, Arg> value_of_;
  std::map<std::vector<std::pair<int64_t, int64_t>>, Arg> shapes_;  // make_shape results by operands
};

std::vector<std::string> param_names_of(const graph::IRModule& mod, const std::string& name, const graph::Function& f) {
  std::vector<std::string> names;
  if (name == "main" && graph::has_attr(mod.attrs, "input_names")) {
    names = graph::get_strings(mod.attrs, "input_names");
    if (names.size() != f.params().size())
      value_error("vm_codegen: the module's input_names has ", names.size(), " names but main has ", f.params().size(),
                  " parameters");
    return names;
  }
  for (const graph::Var& p : f.params()) names.push_back(p.name());
  return names;
}

}  // namespace

VmCodegenResult vm_codegen(const graph::IRModule& mod, const VmCodegenOptions& options) {
  ModuleState state;
  VmCodegenResult result;
  // Every function is declared first: an if/loop calls its branch or body by name, whichever
  // order the module lists them in.
  auto declare_all = [&](vm::ExecBuilder& b) {
    for (const auto& [name, f] : mod.functions) b.declare_function(name, param_names_of(mod, name, f));
  };
  declare_all(state.builder);
  for (const auto& [name, f] : mod.functions) {
    StoragePlan plan = plan_storage(f, options.plan_memory);
    std::vector<std::string> params = param_names_of(mod, name, f);
    ShapeHeap first;
    {
      ModuleState scratch;
      declare_all(scratch.builder);
      FunctionEmitter(scratch, first, f, name, plan, options).emit(params, nullptr);
    }
    ShapeHeap heap;
    FunctionEmitter(state, heap, f, name, plan, options).emit(params, &first);
    ANVIL_ICHECK(heap.size() == first.size(), "vm_codegen: the shape heap of ", name, " changed between passes");
    result.memory_plan += plan.summary;
  }
  // The plan travels in the executable: a function returning its JSON (read_memory_plan).
  vm::ExecBuilder& b = state.builder;
  b.begin_function(kMemoryPlanFunction, {});
  b.emit_call("vm.builtin.copy", {Arg::constant(b.add_constant(Value(result.memory_plan.to_json())))}, 0);
  b.emit_ret(0);
  b.end_function();
  // What the model says about itself (inputs, outputs, kernels, memory, target): model_info.h.
  if (mod.functions.count("main") != 0) {
    b.begin_function(kModelInfoFunction, {});
    std::string info = model_info_json(mod, result.memory_plan, options.target);
    b.emit_call("vm.builtin.copy", {Arg::constant(b.add_constant(Value(info)))}, 0);
    b.emit_ret(0);
    b.end_function();
  }
  // The module's output names (ONNX graph outputs), for runners that key outputs by name.
  if (graph::has_attr(mod.attrs, "output_names")) {
    b.begin_function(kOutputNamesFunction, {});
    std::vector<Arg> names;
    for (const std::string& n : graph::get_strings(mod.attrs, "output_names"))
      names.push_back(Arg::constant(b.add_constant(Value(n))));
    b.emit_call("vm.builtin.make_tuple", names, 0);
    b.emit_ret(0);
    b.end_function();
  }
  result.exec = b.get();
  return result;
}

std::optional<std::vector<std::string>> read_output_names(const vm::Executable& exec) {
  if (!exec.defined()) return std::nullopt;
  int64_t index = exec->find_function(kOutputNamesFunction);
  if (index < 0) return std::nullopt;
  const vm::FuncInfo& info = exec->func_table[static_cast<size_t>(index)];
  if (info.kind != vm::FuncKind::kVMFunc || info.end_instr - info.start_instr < 2) return std::nullopt;
  const vm::Word* call = exec->instruction(info.start_instr);
  if (call[0] != static_cast<vm::Word>(vm::Opcode::kCall) || call[3] < 0) return std::nullopt;
  std::vector<std::string> names;
  for (int64_t i = 0; i < call[3]; ++i) {
    Arg a = Arg::decode(call[4 + i]);
    if (a.kind != vm::ArgKind::kConstant || a.value < 0 || a.value >= static_cast<int64_t>(exec->constants.size()))
      return std::nullopt;
    const Value& v = exec->constants[static_cast<size_t>(a.value)];
    if (v.kind() != ValueKind::kString) return std::nullopt;
    names.push_back(v.as_string());
  }
  return names;
}

std::optional<MemoryPlan> read_memory_plan(const vm::Executable& exec) {
  if (!exec.defined()) return std::nullopt;
  int64_t index = exec->find_function(kMemoryPlanFunction);
  if (index < 0) return std::nullopt;
  const vm::FuncInfo& info = exec->func_table[static_cast<size_t>(index)];
  if (info.kind != vm::FuncKind::kVMFunc || info.end_instr - info.start_instr < 2) return std::nullopt;
  const vm::Word* call = exec->instruction(info.start_instr);
  if (call[0] != static_cast<vm::Word>(vm::Opcode::kCall) || call[3] != 1) return std::nullopt;
  Arg a = Arg::decode(call[4]);
  if (a.kind != vm::ArgKind::kConstant || a.value < 0 || a.value >= static_cast<int64_t>(exec->constants.size()))
    return std::nullopt;
  const Value& v = exec->constants[static_cast<size_t>(a.value)];
  if (v.kind() != ValueKind::kString) return std::nullopt;
  return MemoryPlan::from_json(v.as_string());
}

}  // namespace anvil::pipeline
