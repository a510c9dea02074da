// Expression printer.
#include "anvil/ir/printer.h"

#include <charconv>
#include <cmath>

namespace anvil::ir {
namespace {

constexpr int kLetPrec = 0;
constexpr int kNotPrec = 3;
constexpr int kUnaryPrec = 7;

bool is_comparison(ExprKind k) {
  return k == ExprKind::kEQ || k == ExprKind::kNE || k == ExprKind::kLT || k == ExprKind::kLE || k == ExprKind::kGT ||
         k == ExprKind::kGE;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

}  // namespace

std::string format_float(double value, DataType dtype) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  std::to_chars_result r = dtype.bits() == 32 ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(value))
                                              : std::to_chars(buf, buf + sizeof(buf), value);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string quote_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

template <typename Taken>
std::string ExprPrinter::unique(const std::string& base, const Taken& taken) {
  std::string name = base;
  for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

bool ExprPrinter::holds(const std::string& name, const VarNode* v) const {
  auto h = holder_.find(name);
  return h == holder_.end() || h->second == v;
}

std::string ExprPrinter::var_name(const VarNode* v) {
  auto it = vars_.find(v);
  std::string name = it != vars_.end() && holds(it->second, v) ? it->second : unique(v->name(), holder_);
  holder_[name] = v;
  vars_[v] = name;
  auto depth = bind_depth_.find(v);
  if (depth == bind_depth_.end() || depth->second == 0) free_.insert(v);
  return name;
}

std::string ExprPrinter::bind_var(const VarNode* v) {
  auto it = vars_.find(v);
  std::string name = it != vars_.end() && holds(it->second, v) ? it->second : unique(v->name(), holder_);
  holder_[name] = v;
  vars_[v] = name;
  ++bind_depth_[v];
  return name;
}

void ExprPrinter::unbind_var(const VarNode* v) {
  int& depth = bind_depth_[v];
  if (depth > 0) --depth;
  if (depth > 0 || free_.count(v)) return;
  auto h = holder_.find(vars_[v]);
  if (h != holder_.end() && h->second == v) holder_.erase(h);
}

const std::string& ExprPrinter::buffer_name(const BufferNode* b) {
  auto it = buffers_.find(b);
  if (it != buffers_.end()) return it->second;
  auto& views = buffer_views_[b->data().get()];
  auto view = views.find(b->name());
  std::string name;
  if (view != views.end()) {
    name = view->second;
  } else {
    name = unique(b->name(), used_buffer_names_);
    used_buffer_names_.insert(name);
    views.emplace(b->name(), name);
  }
  return buffers_.emplace(b, std::move(name)).first->second;
}

std::string ExprPrinter::print(const PrimExpr& e) {
  int prec = 0;
  return text(e, &prec);
}

// Operands are printed left to right (names are assigned in reading order).
std::string ExprPrinter::call_text(const std::string& name, std::initializer_list<PrimExpr> args) {
  std::vector<std::string> parts;
  for (const PrimExpr& a : args) parts.push_back(print(a));
  return name + "(" + join(parts) + ")";
}

std::string ExprPrinter::operand(const PrimExpr& e, int min_prec) {
  int prec = 0;
  std::string s = text(e, &prec);
  return prec < min_prec ? "(" + s + ")" : s;
}

std::string ExprPrinter::buffer_decl(const Buffer& b) {
  std::vector<std::string> shape;
  for (const auto& d : b->shape()) shape.push_back(print(d));
  std::string out = "Buffer(" + dtype_name(b->dtype()) + ", [" + join(shape) + "]";
  if (!b->strides().empty()) {
    std::vector<std::string> strides;
    for (const auto& s : b->strides()) strides.push_back(print(s));
    out += ", strides=[" + join(strides) + "]";
  }
  if (as_const_int(b->elem_offset()) != 0) out += ", offset=" + print(b->elem_offset());
  if (b->alignment() != kDefaultBufferAlignment) out += ", align=" + std::to_string(b->alignment());
  if (b->scope() != "global") out += ", scope=" + quote_string(b->scope());
  return out + ")";
}

std::string ExprPrinter::text(const PrimExpr& e, int* prec) {
  *prec = kAtom;
  if (!e.defined()) return "<undefined>";
  DataType t = e.dtype();
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      int64_t v = e.as<IntImmNode>()->value();
      if (t.is_bool()) return v ? "True" : "False";
      if (t == DataType::int32()) {
        if (v < 0) *prec = kUnaryPrec;
        return std::to_string(v);
      }
      return dtype_name(t) + "(" + std::to_string(v) + ")";
    }
    case ExprKind::kFloatImm: {
      double v = e.as<FloatImmNode>()->value();
      std::string s = format_float(v, t);
      bool plain = std::isfinite(v) && (t == DataType::float32() || t == DataType::float64());
      if (!plain) return dtype_name(t) + "(" + s + ")";
      if (std::signbit(v)) *prec = kUnaryPrec;
      return t == DataType::float32() ? s + "f" : s;
    }
    case ExprKind::kStringImm:
      return quote_string(e.as<StringImmNode>()->value());
    case ExprKind::kVar:
      return var_name(e.as<VarNode>());
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, op_text, op_prec)                                             \
  case ExprKind::k##Name: {                                                                            \
    auto* node = static_cast<const Name##Node*>(e.get());                                              \
    int p = (op_prec);                                                                                 \
    std::string sym = (op_text);                                                                       \
    if (ExprKind::k##Name == ExprKind::kDiv && !node->a().dtype().is_float()) p = 0, sym = "truncdiv"; \
    if (p == 0) return call_text(sym, {node->a(), node->b()});                                         \
    *prec = p;                                                                                         \
    int left_min = is_comparison(ExprKind::k##Name) ? p + 1 : p;                                       \
    std::string lhs = operand(node->a(), left_min);                                                    \
    return lhs + " " + sym + " " + operand(node->b(), p + 1);                                          \
  }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    case ExprKind::kNot:
      *prec = kNotPrec;
      return "not " + operand(e.as<NotNode>()->a(), kNotPrec);
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      return call_text("select", {n->cond(), n->true_value(), n->false_value()});
    }
    case ExprKind::kCast:
      return dtype_name(t) + "(" + print(e.as<CastNode>()->value()) + ")";
    case ExprKind::kRamp: {
      auto* n = e.as<RampNode>();
      std::string base = print(n->base());
      return "ramp(" + base + ", " + print(n->stride()) + ", " + std::to_string(n->lanes()) + ")";
    }
    case ExprKind::kBroadcast: {
      auto* n = e.as<BroadcastNode>();
      return "broadcast(" + print(n->value()) + ", " + std::to_string(n->lanes()) + ")";
    }
    case ExprKind::kLet: {
      auto* n = e.as<LetNode>();
      *prec = kLetPrec;
      std::string value = operand(n->value(), kLetPrec + 1);
      std::string name = bind_var(n->var().get());
      std::string body = print(n->body());
      unbind_var(n->var().get());
      return "let " + name + " = " + value + " in " + body;
    }
    case ExprKind::kCall: {
      auto* n = e.as<CallNode>();
      std::vector<std::string> args;
      for (const auto& a : n->args()) args.push_back(print(a));
      return std::string(call_op_name(n->op())) + "(" + join(args) + ")";
    }
    case ExprKind::kBufferLoad: {
      auto* n = e.as<BufferLoadNode>();
      std::string name = buffer_name(n->buffer().get());
      std::vector<std::string> idx;
      for (const auto& i : n->indices()) idx.push_back(print(i));
      return name + "[" + join(idx) + "]";
    }
  }
  return "<unknown>";
}

std::string to_string(const PrimExpr& e) {
  ExprPrinter p;
  return p.print(e);
}

std::ostream& operator<<(std::ostream& os, const PrimExpr& e) { return os << to_string(e); }

std::string to_string(const Buffer& b) {
  if (!b.defined()) return "<undefined buffer>";
  ExprPrinter p;
  return p.buffer_name(b.get()) + ": " + p.buffer_decl(b);
}

std::ostream& operator<<(std::ostream& os, const Buffer& b) { return os << to_string(b); }

}  // namespace anvil::ir
