// Statement and PrimFunc printer.
#include "anvil/tir/printer.h"

#include "anvil/ir/structural_equal.h"

namespace anvil::tir {
namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

}  // namespace

// The loop's end, min + extent, without the arithmetic the reader would do: the extent alone from
// 0, a constant from constants, and X for an extent of the form X - min (a loop partitioned at min).
std::string StmtPrinter::loop_stop(const PrimExpr& min, const PrimExpr& extent) {
  auto mn = ir::as_const_int(min), ex = ir::as_const_int(extent);
  if (mn == 0) return print(extent);
  if (mn && ex && min.dtype() == DataType::int32()) return std::to_string(*mn + *ex);
  if (auto* sub = extent.as<ir::SubNode>(); sub && ir::structural_equal(sub->b(), min)) return print(sub->a());
  return print(ir::AddNode::make(min, extent));
}

void StmtPrinter::line(int indent, const std::string& text, std::string* out) {
  out->append(static_cast<size_t>(indent) * 2, ' ');
  out->append(text);
  out->push_back('\n');
}

void StmtPrinter::block(const Stmt& s, int indent, std::string* out) { stmt(s, indent, out); }

std::string StmtPrinter::print_stmt(const Stmt& s, int indent) {
  std::string out;
  stmt(s, indent, &out);
  return out;
}

void StmtPrinter::stmt(const Stmt& s, int indent, std::string* out) {
  if (!s.defined()) {
    line(indent, "<undefined>", out);
    return;
  }
  switch (s.kind()) {
    case StmtKind::kFor: {
      auto* op = s.as<ForNode>();
      // The range first: it is outside the loop var's scope.
      std::string start = print(op->min());
      std::string range = "range(" + start + ", " + loop_stop(op->min(), op->extent()) + ")";
      std::string text = "for " + bind_var(op->loop_var().get()) + " in " + range;
      switch (op->for_kind()) {
        case ForKind::kSerial:
          break;
        case ForKind::kThreadBinding:
          text += " thread(" + ir::quote_string(op->thread_tag()) + ")";
          break;
        default:
          text += " " + std::string(for_kind_name(op->for_kind()));
      }
      if (!op->annotations().empty()) {
        std::vector<std::string> ann;
        for (const auto& [k, v] : op->annotations()) ann.push_back(k + ": " + print(v));
        text += " {" + join(ann) + "}";
      }
      line(indent, text + ":", out);
      block(op->body(), indent + 1, out);
      unbind_var(op->loop_var().get());
      return;
    }
    case StmtKind::kBufferStore: {
      auto* op = s.as<BufferStoreNode>();
      std::string name = buffer_name(op->buffer().get());
      std::vector<std::string> idx;
      for (const auto& i : op->indices()) idx.push_back(print(i));
      std::string target = name + "[" + join(idx) + "]";
      line(indent, target + " = " + print(op->value()), out);
      return;
    }
    case StmtKind::kAllocate: {
      auto* op = s.as<AllocateNode>();
      std::vector<std::string> ext;
      for (const auto& e : op->extents()) ext.push_back(print(e));
      line(indent,
           var_name(op->buffer_var().get()) + " = allocate(" + ir::dtype_name(op->dtype()) + ", [" + join(ext) + "], " +
               ir::quote_string(op->scope()) + ")",
           out);
      stmt(op->body(), indent, out);
      return;
    }
    case StmtKind::kLetStmt: {
      auto* op = s.as<LetStmtNode>();
      std::string value = print(op->value());
      line(indent, bind_var(op->var().get()) + ": " + ir::dtype_name(op->var().dtype()) + " = " + value, out);
      stmt(op->body(), indent, out);
      unbind_var(op->var().get());
      return;
    }
    case StmtKind::kIfThenElse: {
      auto* op = s.as<IfThenElseNode>();
      line(indent, "if " + print(op->cond()) + ":", out);
      block(op->then_case(), indent + 1, out);
      const IfThenElseNode* cur = op;
      while (cur->else_case().defined()) {
        if (auto* elif = cur->else_case().as<IfThenElseNode>()) {
          line(indent, "elif " + print(elif->cond()) + ":", out);
          block(elif->then_case(), indent + 1, out);
          cur = elif;
        } else {
          line(indent, "else:", out);
          block(cur->else_case(), indent + 1, out);
          break;
        }
      }
      return;
    }
    case StmtKind::kSeqStmt:
      for (const auto& st : s.as<SeqStmtNode>()->seq()) stmt(st, indent, out);
      return;
    case StmtKind::kEvaluate:
      line(indent, "evaluate(" + print(s.as<EvaluateNode>()->value()) + ")", out);
      return;
    case StmtKind::kAttrStmt: {
      auto* op = s.as<AttrStmtNode>();
      std::string node = op->node().defined() ? print(op->node()) + ", " : "";
      line(indent, "with attr(" + node + ir::quote_string(op->key()) + ", " + print(op->value()) + "):", out);
      block(op->body(), indent + 1, out);
      return;
    }
    case StmtKind::kAssertStmt: {
      auto* op = s.as<AssertStmtNode>();
      std::string text = "assert(" + print(op->condition()) + ", " + ir::quote_string(op->message());
      for (const auto& a : op->message_args()) text += ", " + print(a);
      line(indent, text + ")", out);
      stmt(op->body(), indent, out);
      return;
    }
  }
}

std::string StmtPrinter::print_func(const PrimFunc& f) {
  if (!f.defined()) return "<undefined func>\n";
  std::string name = f->str_attr(attr::kGlobalSymbol).value_or("main");
  std::vector<std::string> params;
  for (const auto& p : f->params()) {
    Buffer b = f->buffer_of(p);
    const std::string& pname = var_name(p.get());
    if (!b.defined()) {
      params.push_back(pname + ": " + ir::dtype_name(p.dtype()));
      continue;
    }
    const std::string& bname = buffer_name(b.get());
    std::string decl = buffer_decl(b);
    params.push_back(bname == pname ? bname + ": " + decl : pname + ": " + bname + " = " + decl);
  }
  std::string out = "func " + name + "(" + join(params) + ")";
  if (!ir::is_void(f->ret_type())) out += " -> " + ir::dtype_name(f->ret_type());
  out += ":\n";
  for (const auto& [key, value] : f->attrs()) {
    if (key == attr::kGlobalSymbol && value.as<ir::StringImmNode>()) continue;
    line(1, "attr " + key + " = " + print(value), &out);
  }
  stmt(f->body(), 1, &out);
  return out;
}

std::string to_string(const Stmt& s) {
  StmtPrinter p;
  return p.print_stmt(s);
}

std::string to_string(const PrimFunc& f) {
  StmtPrinter p;
  return p.print_func(f);
}

std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }
std::ostream& operator<<(std::ostream& os, const PrimFunc& f) { return os << to_string(f); }

}  // namespace anvil::tir
