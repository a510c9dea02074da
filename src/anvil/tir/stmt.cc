// Statement nodes: names and checking factories.
#include "anvil/tir/stmt.h"

#include <algorithm>

#include "anvil/base/error.h"

namespace anvil::tir {
namespace {

using ir::dtype_name;

void check_stmt(const Stmt& s, std::string_view op, std::string_view operand) {
  if (!s.defined()) value_error(op, ": ", operand, " is undefined");
}
void check_expr(const PrimExpr& e, std::string_view op, std::string_view operand) {
  if (!e.defined()) value_error(op, ": ", operand, " is undefined");
}

// An int literal adopting dtype t (convenience builders); other expressions unchanged.
PrimExpr adopt(const PrimExpr& e, DataType t) {
  if (!e.defined() || e.dtype() == t) return e;
  if (auto* imm = e.as<ir::IntImmNode>(); imm && ir::is_integer(t) && t.lanes() == 1 && !e.dtype().is_bool())
    return ir::int_imm(imm->value(), t);
  if (auto* imm = e.as<ir::IntImmNode>(); imm && t.is_float() && t.lanes() == 1 && !e.dtype().is_bool())
    return ir::float_imm(static_cast<double>(imm->value()), t);
  if (auto* imm = e.as<ir::FloatImmNode>(); imm && t.is_float() && t.lanes() == 1)
    return ir::float_imm(imm->value(), t);
  return e;
}

}  // namespace

std::string_view stmt_kind_name(StmtKind kind) {
  switch (kind) {
#define ANVIL_STMT_KIND(Name) \
  case StmtKind::k##Name:     \
    return #Name;
#include "anvil/tir/stmt_kinds.def"
#undef ANVIL_STMT_KIND
  }
  return "Unknown";
}

std::string_view StmtNode::type_key() const {
  switch (kind_) {
#define ANVIL_STMT_KIND(Name) \
  case StmtKind::k##Name:     \
    return "tir." #Name;
#include "anvil/tir/stmt_kinds.def"
#undef ANVIL_STMT_KIND
  }
  return "tir.Unknown";
}

std::string_view for_kind_name(ForKind kind) {
  switch (kind) {
#define ANVIL_FOR_KIND(Name, text) \
  case ForKind::k##Name:           \
    return text;
#include "anvil/tir/for_kinds.def"
#undef ANVIL_FOR_KIND
  }
  return "unknown";
}

bool is_valid_thread_tag(std::string_view tag) {
  for (std::string_view t :
       {"threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z", "vthread"})
    if (tag == t) return true;
  return false;
}

bool is_valid_storage_scope(std::string_view scope) {
  for (std::string_view s : {"global", "shared", "shared.dyn", "local", "warp"})
    if (scope == s) return true;
  return false;
}

Stmt ForNode::make(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body, std::string thread_tag,
                   Annotations annotations) {
  if (!loop_var.defined()) value_error("For: loop var is undefined");
  const std::string& name = loop_var.name();
  DataType t = loop_var.dtype();
  if (!ir::is_integer(t) || t.lanes() != 1)
    type_error("For ", name, ": loop var must be a scalar integer, got ", dtype_name(t));
  check_expr(min, "For", "min");
  check_expr(extent, "For", "extent");
  check_stmt(body, "For", "body");
  if (min.dtype() != t || extent.dtype() != t)
    type_error("For ", name, ": min (", dtype_name(min.dtype()), ") and extent (", dtype_name(extent.dtype()),
               ") must have the loop var's dtype ", dtype_name(t));
  if (kind == ForKind::kThreadBinding) {
    if (!is_valid_thread_tag(thread_tag))
      value_error("For ", name, ": thread tag '", thread_tag,
                  "' is not one of threadIdx.{x,y,z}, blockIdx.{x,y,z}, vthread");
  } else if (!thread_tag.empty()) {
    value_error("For ", name, ": thread tag '", thread_tag, "' on a ", for_kind_name(kind), " loop");
  }
  for (const auto& [key, value] : annotations)
    if (key.empty() || !value.defined()) value_error("For ", name, ": annotation '", key, "' is empty or undefined");
  auto* node = new ForNode();
  node->loop_var_ = std::move(loop_var);
  node->min_ = std::move(min);
  node->extent_ = std::move(extent);
  node->for_kind_ = kind;
  node->thread_tag_ = std::move(thread_tag);
  node->annotations_ = std::move(annotations);
  node->body_ = std::move(body);
  return Stmt(node);
}

Stmt BufferStoreNode::make(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices) {
  int lanes = ir::access_lanes(buffer, indices, "BufferStore");
  check_expr(value, "BufferStore", "value");
  DataType elem = buffer->dtype();
  DataType want = lanes == 1 ? elem : ir::with_lanes(elem, elem.lanes() * lanes);
  if (value.dtype() != want)
    type_error("BufferStore ", buffer->name(), ": value has dtype ", dtype_name(value.dtype()), ", expected ",
               dtype_name(want));
  return Stmt(new BufferStoreNode(std::move(buffer), std::move(value), std::move(indices)));
}

Stmt AllocateNode::make(Var buffer_var, DataType dtype, std::vector<PrimExpr> extents, std::string scope, Stmt body) {
  if (!buffer_var.defined()) value_error("Allocate: buffer var is undefined");
  const std::string& name = buffer_var.name();
  if (!ir::is_handle(buffer_var.dtype()))
    type_error("Allocate ", name, ": buffer var must be a handle, got ", dtype_name(buffer_var.dtype()));
  if (ir::is_void(dtype) || ir::is_handle(dtype)) type_error("Allocate ", name, ": bad dtype ", dtype_name(dtype));
  if (extents.empty()) value_error("Allocate ", name, ": needs at least one extent");
  for (const auto& e : extents) {
    check_expr(e, "Allocate", "extent");
    if (!ir::is_integer(e.dtype()) || e.dtype().lanes() != 1)
      type_error("Allocate ", name, ": extents must be scalar integers, got ", dtype_name(e.dtype()));
  }
  if (!is_valid_storage_scope(scope))
    value_error("Allocate ", name, ": storage scope '", scope,
                "' is not one of global, shared, shared.dyn, local, warp");
  check_stmt(body, "Allocate", "body");
  auto* node = new AllocateNode();
  node->buffer_var_ = std::move(buffer_var);
  node->dtype_ = dtype;
  node->extents_ = std::move(extents);
  node->scope_ = std::move(scope);
  node->body_ = std::move(body);
  return Stmt(node);
}

std::optional<int64_t> constant_allocation_elements(const AllocateNode& op) {
  int64_t total = 1;
  for (const PrimExpr& e : op.extents()) {
    std::optional<int64_t> c = ir::as_const_int(e);
    if (!c || *c < 0) return std::nullopt;
    if (__builtin_mul_overflow(total, *c, &total)) return std::nullopt;
  }
  return total;
}

std::optional<int64_t> stack_allocation_elements(const AllocateNode& op) {
  std::optional<int64_t> n = constant_allocation_elements(op);
  int64_t elem_bytes = ir::element_of(op.dtype()).bytes();
  if (!n || *n > kMaxStackAllocBytes / elem_bytes) return std::nullopt;
  return std::max<int64_t>(*n, 1);
}

Stmt LetStmtNode::make(Var var, PrimExpr value, Stmt body) {
  if (!var.defined()) value_error("LetStmt: var is undefined");
  check_expr(value, "LetStmt", "value");
  check_stmt(body, "LetStmt", "body");
  if (var.dtype() != value.dtype())
    type_error("LetStmt ", var.name(), ": var has dtype ", dtype_name(var.dtype()), " but the value has ",
               dtype_name(value.dtype()));
  return Stmt(new LetStmtNode(std::move(var), std::move(value), std::move(body)));
}

Stmt IfThenElseNode::make(PrimExpr cond, Stmt then_case, Stmt else_case) {
  check_expr(cond, "IfThenElse", "cond");
  if (cond.dtype() != ir::bool_type())
    type_error("IfThenElse: cond must be a scalar bool, got ", dtype_name(cond.dtype()));
  check_stmt(then_case, "IfThenElse", "then_case");
  return Stmt(new IfThenElseNode(std::move(cond), std::move(then_case), std::move(else_case)));
}

Stmt SeqStmtNode::make(std::vector<Stmt> seq) {
  if (seq.empty()) value_error("SeqStmt: needs at least one statement");
  for (size_t i = 0; i < seq.size(); ++i)
    if (!seq[i].defined()) value_error("SeqStmt: statement ", i, " is undefined");
  return Stmt(new SeqStmtNode(std::move(seq)));
}

Stmt EvaluateNode::make(PrimExpr value) {
  check_expr(value, "Evaluate", "value");
  return Stmt(new EvaluateNode(std::move(value)));
}

Stmt AttrStmtNode::make(std::string key, PrimExpr node, PrimExpr value, Stmt body) {
  if (key.empty()) value_error("AttrStmt: key must be non-empty");
  check_expr(value, "AttrStmt", "value");
  check_stmt(body, "AttrStmt", "body");
  return Stmt(new AttrStmtNode(std::move(key), std::move(node), std::move(value), std::move(body)));
}

std::vector<std::string> assert_message_pieces(const std::string& message) {
  std::vector<std::string> pieces(1);
  for (size_t i = 0; i < message.size(); ++i) {
    if (message[i] == '{' && i + 1 < message.size() && message[i + 1] == '}') {
      pieces.emplace_back();
      ++i;
    } else {
      pieces.back() += message[i];
    }
  }
  return pieces;
}

Stmt AssertStmtNode::make(PrimExpr condition, std::string message, Stmt body, std::vector<PrimExpr> message_args) {
  check_expr(condition, "AssertStmt", "condition");
  if (condition.dtype() != ir::bool_type())
    type_error("AssertStmt: condition must be a scalar bool, got ", dtype_name(condition.dtype()));
  check_stmt(body, "AssertStmt", "body");
  for (size_t i = 0; i < message_args.size(); ++i) {
    check_expr(message_args[i], "AssertStmt", "message argument");
    DataType t = message_args[i].dtype();
    if (!(ir::is_integer(t) || t.is_bool()) || t.lanes() != 1)
      type_error("AssertStmt: message argument ", i, " must be a scalar integer, got ", dtype_name(t));
  }
  size_t holes = assert_message_pieces(message).size() - 1;
  if (holes != message_args.size())
    value_error("AssertStmt: the message has ", holes, " \"{}\" placeholders but ", message_args.size(),
                " message arguments were given: \"", message, "\"");
  auto* node = new AssertStmtNode();
  node->condition_ = std::move(condition);
  node->message_ = std::move(message);
  node->message_args_ = std::move(message_args);
  node->body_ = std::move(body);
  return Stmt(node);
}

// ---- convenience builders -----------------------------------------------------------------

Stmt make_for(Var loop_var, PrimExpr min, PrimExpr extent, Stmt body, ForKind kind) {
  DataType t = loop_var.defined() ? loop_var.dtype() : DataType::int32();
  return ForNode::make(std::move(loop_var), adopt(min, t), adopt(extent, t), kind, std::move(body));
}

Stmt make_thread_for(Var loop_var, PrimExpr min, PrimExpr extent, std::string thread_tag, Stmt body) {
  DataType t = loop_var.defined() ? loop_var.dtype() : DataType::int32();
  return ForNode::make(std::move(loop_var), adopt(min, t), adopt(extent, t), ForKind::kThreadBinding, std::move(body),
                       std::move(thread_tag));
}

Stmt buffer_store(const Buffer& buffer, PrimExpr value, std::vector<PrimExpr> indices) {
  if (buffer.defined() && value.defined() && value.dtype().lanes() == 1) value = adopt(value, buffer->dtype());
  return BufferStoreNode::make(buffer, std::move(value), std::move(indices));
}

Stmt allocate(Var buffer_var, DataType dtype, std::vector<PrimExpr> extents, std::string scope, Stmt body) {
  return AllocateNode::make(std::move(buffer_var), dtype, std::move(extents), std::move(scope), std::move(body));
}

Stmt let_stmt(Var var, PrimExpr value, Stmt body) {
  if (var.defined()) value = adopt(value, var.dtype());
  return LetStmtNode::make(std::move(var), std::move(value), std::move(body));
}

Stmt if_then_else(PrimExpr cond, Stmt then_case, Stmt else_case) {
  return IfThenElseNode::make(std::move(cond), std::move(then_case), std::move(else_case));
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s.defined()) continue;
    if (auto* inner = s.as<SeqStmtNode>())
      flat.insert(flat.end(), inner->seq().begin(), inner->seq().end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.empty()) return evaluate(0);
  if (flat.size() == 1) return flat[0];
  return SeqStmtNode::make(std::move(flat));
}

Stmt evaluate(PrimExpr value) { return EvaluateNode::make(std::move(value)); }

Stmt attr_stmt(std::string key, PrimExpr node, PrimExpr value, Stmt body) {
  return AttrStmtNode::make(std::move(key), std::move(node), std::move(value), std::move(body));
}

Stmt assert_stmt(PrimExpr condition, std::string message, Stmt body, std::vector<PrimExpr> message_args) {
  return AssertStmtNode::make(std::move(condition), std::move(message), std::move(body), std::move(message_args));
}

}  // namespace anvil::tir
