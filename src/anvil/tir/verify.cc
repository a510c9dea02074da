// Well-formedness check of PrimFuncs.
#include "anvil/tir/verify.h"

#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::tir {
namespace {

class ScopeChecker : public StmtVisitor {
 public:
  std::vector<std::string> errors;

  void define(const Var& v, std::string_view what) {
    if (!in_scope_.insert(v.get()).second)
      errors.push_back(str_cat(what, " '", v.name(), "' is defined again while already in scope"));
  }
  void undefine(const Var& v) { in_scope_.erase(v.get()); }
  void define_if_new(const PrimExpr& e) {
    if (auto* v = e.as<ir::VarNode>()) in_scope_.insert(v);
  }

  using StmtVisitor::visit_;
  void visit_(const ir::VarNode* op) override {
    if (!in_scope_.count(op)) errors.push_back(str_cat("var '", op->name(), "' is used outside any scope defining it"));
  }
  void visit_(const ir::LetNode* op) override {
    visit_expr(op->value());
    define(op->var(), "let var");
    visit_expr(op->body());
    undefine(op->var());
  }
  void visit_(const ir::BufferLoadNode* op) override {
    check_buffer(op->buffer(), "load from");
    StmtVisitor::visit_(op);
  }
  void visit_(const BufferStoreNode* op) override {
    check_buffer(op->buffer(), "store to");
    StmtVisitor::visit_(op);
  }
  void visit_(const ForNode* op) override {
    visit_expr(op->min());
    visit_expr(op->extent());
    for (const auto& [k, v] : op->annotations()) visit_expr(v);
    define(op->loop_var(), "loop var");
    visit_stmt(op->body());
    undefine(op->loop_var());
  }
  void visit_(const LetStmtNode* op) override {
    visit_expr(op->value());
    define(op->var(), "let var");
    visit_stmt(op->body());
    undefine(op->var());
  }
  void visit_(const AllocateNode* op) override {
    for (const auto& e : op->extents()) visit_expr(e);
    define(op->buffer_var(), "allocated buffer var");
    visit_stmt(op->body());
    undefine(op->buffer_var());
  }

 private:
  void check_buffer(const Buffer& b, std::string_view what) {
    if (!in_scope_.count(b->data().get()))
      errors.push_back(str_cat(what, " buffer ", b->name(), ": its data var '", b->data().name(), "' is not in scope"));
    for (const auto& d : b->shape()) visit_expr(d);
    for (const auto& s : b->strides()) visit_expr(s);
    visit_expr(b->elem_offset());
  }

  std::unordered_set<const ir::VarNode*> in_scope_;
};

}  // namespace

std::vector<std::string> well_formed_errors(const PrimFunc& f) {
  ScopeChecker c;
  for (const auto& p : f->params()) c.define(p, "param");
  for (const auto& [p, b] : f->buffer_map()) {
    c.define_if_new(b->data());
    for (const auto& d : b->shape()) c.define_if_new(d);
    for (const auto& s : b->strides()) c.define_if_new(s);
    c.define_if_new(b->elem_offset());
  }
  c.visit_stmt(f->body());
  // One line per distinct problem, in order of discovery.
  std::vector<std::string> unique;
  std::unordered_set<std::string> seen;
  for (auto& e : c.errors)
    if (seen.insert(e).second) unique.push_back(std::move(e));
  return unique;
}

void check_well_formed(const PrimFunc& f, const std::string& stage) {
  std::vector<std::string> errors = well_formed_errors(f);
  if (errors.empty()) return;
  std::string text;
  for (const auto& e : errors) text += "  - " + e + "\n";
  throw Error(ErrorKind::kInternal, str_cat("ill-formed IR after ", stage, ":\n", text, "in:\n", to_string(f)));
}

}  // namespace anvil::tir
