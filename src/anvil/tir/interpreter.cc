// Reference TIR interpreter.
#include "anvil/tir/interpreter.h"

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/ir/eval.h"
#include "anvil/ir/float16.h"
#include "anvil/ir/printer.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/workgroup_barrier.h"

namespace anvil::tir {
namespace {

using ir::EvalScalar;
using ir::EvalValue;

class Interpreter : public ir::Evaluator {
 public:
  explicit Interpreter(std::string func_name) : func_(std::move(func_name)) {}

  void bind_params(const PrimFunc& f, std::span<const InterpArg> args);
  void exec(const Stmt& s);

 protected:
  EvalValue load(const ir::BufferLoadNode* op, const std::vector<EvalValue>& indices) override;

 private:
  // Byte address of each lane of buffer[indices], bounds-checked for one element each.
  std::vector<uintptr_t> addresses(const Buffer& b, const std::vector<EvalValue>& indices, int lanes,
                                   std::string_view what);
  void bind_dim(const PrimExpr& expected, int64_t actual, const Buffer& b, std::string_view what, size_t dim);
  // Binds v for the duration of fn, restoring any previous binding.
  template <typename Fn>
  void scoped(const Var& v, EvalValue value, Fn&& fn);

  std::string func_;
  std::map<uintptr_t, size_t> regions_;  // start address -> size in bytes
};

int64_t handle_of(const void* p) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p)); }

void check_elem_type(DataType t, std::string_view what) {
  DataType e = ir::element_of(t);
  bool ok = e.is_bool() ||
            (ir::is_integer(e) && (e.bits() == 8 || e.bits() == 16 || e.bits() == 32 || e.bits() == 64)) ||
            (e.code() == DataType::kFloat && (e.bits() == 16 || e.bits() == 32 || e.bits() == 64)) ||
            (e.code() == DataType::kBFloat && e.bits() == 16);
  if (!ok)
    not_implemented_error("interpreter: ", what, " has element type ", ir::dtype_name(t),
                          ", which it does not support");
}

EvalScalar read_elem(const void* p, DataType t) {
  EvalScalar s;
  if (t.is_float()) {
    if (t.bits() == 16) {  // float16 / bfloat16: widened exactly
      uint16_t h;
      std::memcpy(&h, p, 2);
      s.f = t.code() == DataType::kBFloat ? ir::bfloat16_bits_to_double(h) : ir::half_bits_to_double(h);
    } else if (t.bits() == 32) {
      float v;
      std::memcpy(&v, p, 4);
      s.f = v;
    } else {
      std::memcpy(&s.f, p, 8);
    }
    return s;
  }
  int64_t raw = 0;
  std::memcpy(&raw, p, static_cast<size_t>(t.bits() / 8));  // little-endian host
  s.i = ir::wrap_int(raw, t);
  return s;
}

void write_elem(void* p, DataType t, const EvalScalar& s) {
  if (t.is_float()) {
    if (t.bits() == 16) {  // rounded to nearest even (a stored value normally is one already)
      uint16_t h = t.code() == DataType::kBFloat ? ir::double_to_bfloat16_bits(s.f) : ir::double_to_half_bits(s.f);
      std::memcpy(p, &h, 2);
    } else if (t.bits() == 32) {
      float v = static_cast<float>(s.f);
      std::memcpy(p, &v, 4);
    } else {
      std::memcpy(p, &s.f, 8);
    }
    return;
  }
  int64_t v = t.is_bool() ? (s.i != 0) : s.i;
  std::memcpy(p, &v, static_cast<size_t>(t.bits() / 8));
}

template <typename Fn>
void Interpreter::scoped(const Var& v, EvalValue value, Fn&& fn) {
  std::optional<EvalValue> saved;
  if (const EvalValue* old = lookup(v.get())) saved = *old;
  bind(v, std::move(value));
  fn();
  if (saved)
    bind(v, *saved);
  else
    unbind(v);
}

void Interpreter::bind_dim(const PrimExpr& expected, int64_t actual, const Buffer& b, std::string_view what,
                           size_t dim) {
  if (auto* v = expected.as<ir::VarNode>(); v && !lookup(v)) {
    bind(Var(v), EvalValue::of_int(actual, v->dtype()));
    return;
  }
  int64_t want = eval(expected).as_int();
  if (want != actual)
    value_error(func_, ": buffer ", b->name(), " expects ", what, "[", dim, "] = ", ir::to_string(expected), " = ",
                want, ", but the tensor has ", actual);
}

void Interpreter::bind_params(const PrimFunc& f, std::span<const InterpArg> args) {
  if (args.size() != f->params().size())
    value_error(func_, ": expected ", f->params().size(), " arguments, got ", args.size());
  for (size_t k = 0; k < args.size(); ++k) {
    const Var& p = f->params()[k];
    Buffer b = f->buffer_of(p);
    if (!b.defined()) {
      if (auto* i = std::get_if<int64_t>(&args[k])) {
        if (!ir::is_integer(p.dtype()) && !p.dtype().is_bool() && !p.dtype().is_float())
          type_error(func_, ": param '", p.name(), "' of dtype ", ir::dtype_name(p.dtype()), " given an integer");
        bind(p, EvalValue::of_int(*i));
      } else if (auto* d = std::get_if<double>(&args[k])) {
        if (!p.dtype().is_float())
          type_error(func_, ": param '", p.name(), "' of dtype ", ir::dtype_name(p.dtype()), " given a float");
        bind(p, EvalValue::of_float(*d));
      } else {
        type_error(func_, ": param '", p.name(), "' is a scalar, got a tensor");
      }
      continue;
    }
    auto* tp = std::get_if<DLTensor*>(&args[k]);
    if (!tp || !*tp) type_error(func_, ": param '", p.name(), "' (buffer ", b->name(), ") needs a tensor");
    const DLTensor& t = **tp;
    if (t.device.device_type != kDLCPU) value_error(func_, ": buffer ", b->name(), ": tensor is not in CPU memory");
    check_elem_type(b->dtype(), "buffer " + b->name());
    if (DataType(t.dtype) != b->dtype())
      type_error(func_, ": buffer ", b->name(), " has dtype ", ir::dtype_name(b->dtype()), ", the tensor ",
                 ir::dtype_name(DataType(t.dtype)));
    if (t.ndim != b.ndim())
      value_error(func_, ": buffer ", b->name(), " is ", b.ndim(), "-d, the tensor ", t.ndim, "-d");
    size_t elem = b->dtype().bytes();
    int64_t numel = 1, max_offset = 0;
    for (int d = 0; d < t.ndim; ++d) {
      bind_dim(b->shape()[static_cast<size_t>(d)], t.shape[d], b, "shape", static_cast<size_t>(d));
      numel *= t.shape[d];
    }
    // Strides: compact row-major unless the buffer declares them.
    std::vector<int64_t> strides(static_cast<size_t>(t.ndim));
    int64_t running = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
      strides[static_cast<size_t>(d)] = running;
      running *= t.shape[d];
    }
    bool compact = true;
    if (t.strides)
      for (int d = 0; d < t.ndim; ++d)
        if (t.shape[d] != 1 && t.strides[d] != strides[static_cast<size_t>(d)]) compact = false;
    if (b->strides().empty()) {
      if (!compact) value_error(func_, ": buffer ", b->name(), " is compact but the tensor is strided");
    } else {
      for (int d = 0; d < t.ndim; ++d) {
        int64_t s = t.strides ? t.strides[d] : strides[static_cast<size_t>(d)];
        bind_dim(b->strides()[static_cast<size_t>(d)], s, b, "strides", static_cast<size_t>(d));
        strides[static_cast<size_t>(d)] = s;
      }
    }
    if (t.byte_offset % elem != 0) value_error(func_, ": buffer ", b->name(), ": byte offset is not a whole element");
    bind_dim(b->elem_offset(), static_cast<int64_t>(t.byte_offset / elem), b, "elem_offset", 0);
    for (int d = 0; d < t.ndim; ++d) max_offset += (t.shape[d] - 1) * strides[static_cast<size_t>(d)];
    uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
    size_t bytes = numel == 0 ? 0 : static_cast<size_t>(max_offset + 1) * elem + t.byte_offset;
    regions_[base] = std::max(regions_[base], bytes);
    bind(p, EvalValue::of_int(handle_of(t.data), ir::handle_type()));
    if (!lookup(b->data().get()) || lookup(b->data().get())->as_int() != handle_of(t.data))
      bind(b->data(), EvalValue::of_int(handle_of(t.data), ir::handle_type()));
  }
}

std::vector<uintptr_t> Interpreter::addresses(const Buffer& b, const std::vector<EvalValue>& indices, int lanes,
                                              std::string_view what) {
  const ir::BufferNode* n = b.get();
  const EvalValue* data = lookup(n->data().get());
  if (!data)
    value_error(func_, ": ", what, " of buffer ", n->name(), ": its data var '", n->data().name(), "' is unbound");
  check_elem_type(n->dtype(), "buffer " + n->name());
  size_t elem = n->dtype().bytes();
  int64_t offset = eval(n->elem_offset()).as_int();
  std::vector<int64_t> strides;
  if (n->strides().empty()) {
    strides.assign(indices.size(), 1);
    for (int d = static_cast<int>(indices.size()) - 2; d >= 0; --d)
      strides[static_cast<size_t>(d)] =
          strides[static_cast<size_t>(d) + 1] * eval(n->shape()[static_cast<size_t>(d) + 1]).as_int();
  } else {
    for (const auto& s : n->strides()) strides.push_back(eval(s).as_int());
  }
  uintptr_t base = static_cast<uintptr_t>(data->as_int());
  std::vector<uintptr_t> out;
  for (int l = 0; l < lanes; ++l) {
    int64_t flat = offset;
    for (size_t d = 0; d < indices.size(); ++d) {
      const EvalValue& idx = indices[d];
      flat += idx.as_int(idx.lanes.size() == 1 ? 0 : l) * strides[d];
    }
    uintptr_t addr = base + static_cast<uintptr_t>(flat * static_cast<int64_t>(elem));
    auto it = regions_.upper_bound(addr);
    bool inside = false;
    if (it != regions_.begin()) {
      --it;
      inside = addr >= it->first && addr + elem <= it->first + it->second;
    }
    if (!inside || flat < 0) {
      std::string idx_text;
      for (size_t d = 0; d < indices.size(); ++d)
        idx_text += (d ? ", " : "") + std::to_string(indices[d].as_int(indices[d].lanes.size() == 1 ? 0 : l));
      index_error(func_, ": ", what, " ", n->name(), "[", idx_text, "] is out of bounds (element offset ", flat, ")");
    }
    out.push_back(addr);
  }
  return out;
}

EvalValue Interpreter::load(const ir::BufferLoadNode* op, const std::vector<EvalValue>& indices) {
  DataType t = op->dtype();
  DataType elem = op->buffer()->dtype();
  std::vector<uintptr_t> addr = addresses(op->buffer(), indices, t.lanes() / elem.lanes(), "load");
  EvalValue v;
  v.dtype = t;
  for (uintptr_t a : addr) v.lanes.push_back(read_elem(reinterpret_cast<const void*>(a), elem));
  return v;
}

void Interpreter::exec(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::kFor: {
      auto* op = s.as<ForNode>();
      int64_t min = eval(op->min()).as_int(), extent = eval(op->extent()).as_int();
      for (int64_t i = min; i < min + extent; ++i)
        scoped(op->loop_var(), EvalValue::of_int(i, op->loop_var().dtype()), [&] { exec(op->body()); });
      return;
    }
    case StmtKind::kBufferStore: {
      auto* op = s.as<BufferStoreNode>();
      EvalValue value = eval(op->value());
      std::vector<EvalValue> idx;
      for (const auto& i : op->indices()) idx.push_back(eval(i));
      DataType elem = op->buffer()->dtype();
      std::vector<uintptr_t> addr =
          addresses(op->buffer(), idx, op->value().dtype().lanes() / elem.lanes(), "store to");
      for (size_t l = 0; l < addr.size(); ++l) write_elem(reinterpret_cast<void*>(addr[l]), elem, value.lanes[l]);
      return;
    }
    case StmtKind::kAllocate: {
      auto* op = s.as<AllocateNode>();
      check_elem_type(op->dtype(), "allocation " + op->buffer_var().name());
      int64_t n = 1;
      for (const auto& e : op->extents()) n *= eval(e).as_int();
      if (n < 0 || n > (int64_t{1} << 34))
        value_error(func_, ": allocation ", op->buffer_var().name(), " of ", n, " elements");
      size_t bytes = static_cast<size_t>(n) * op->dtype().bytes();
      auto mem = std::make_unique<uint64_t[]>(bytes / 8 + 1);  // zeroed, 8-byte aligned
      uintptr_t base = reinterpret_cast<uintptr_t>(mem.get());
      regions_[base] = bytes;
      scoped(op->buffer_var(), EvalValue::of_int(static_cast<int64_t>(base), ir::handle_type()),
             [&] { exec(op->body()); });
      regions_.erase(base);
      return;
    }
    case StmtKind::kLetStmt: {
      auto* op = s.as<LetStmtNode>();
      scoped(op->var(), eval(op->value()), [&] { exec(op->body()); });
      return;
    }
    case StmtKind::kIfThenElse: {
      auto* op = s.as<IfThenElseNode>();
      if (eval(op->cond()).as_int())
        exec(op->then_case());
      else if (op->else_case().defined())
        exec(op->else_case());
      return;
    }
    case StmtKind::kSeqStmt:
      for (const auto& st : s.as<SeqStmtNode>()->seq()) exec(st);
      return;
    case StmtKind::kEvaluate: {
      const PrimExpr& v = s.as<EvaluateNode>()->value();
      if (!v.as<ir::StringImmNode>()) eval(v);
      return;
    }
    case StmtKind::kAttrStmt:
      // A workgroup barrier needs invocations running side by side; the interpreter runs
      // thread-bound loops one iteration after another.
      if (is_workgroup_barrier(s.as<AttrStmtNode>()))
        not_implemented_error("interpreter: a workgroup barrier (attribute 'workgroup_barrier') needs a GPU target");
      exec(s.as<AttrStmtNode>()->body());
      return;
    case StmtKind::kAssertStmt: {
      auto* op = s.as<AssertStmtNode>();
      if (!eval(op->condition()).as_int()) {
        std::vector<std::string> pieces = assert_message_pieces(op->message());
        std::string message = pieces[0];
        for (size_t i = 0; i < op->message_args().size(); ++i)
          message += std::to_string(eval(op->message_args()[i]).as_int()) + pieces[i + 1];
        throw Error(ErrorKind::kValue, message);
      }
      exec(op->body());
      return;
    }
  }
}

}  // namespace

void run_prim_func(const PrimFunc& f, std::span<const InterpArg> args) {
  if (!f.defined()) value_error("run_prim_func: function is undefined");
  Interpreter interp(f->str_attr(attr::kGlobalSymbol).value_or("main"));
  interp.bind_params(f, args);
  interp.exec(f->body());
}

}  // namespace anvil::tir
