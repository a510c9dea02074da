// Statements of the loop-level tensor IR: loops, stores, allocations, lets, conditionals,
// sequences, evaluations, attributes and assertions. Immutable nodes built through checking factories
// (XNode::make, strict about dtypes) or the convenience builders at the end of this file (which
// let int literals adopt the loop variable's dtype). Failures throw anvil::Error: TypeError for
// a dtype mismatch, ValueError for a bad value, each naming the statement and the operand.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/buffer.h"
#include "anvil/ir/expr.h"

namespace anvil::tir {

using ir::Buffer;
using ir::DataType;
using ir::PrimExpr;
using ir::Var;

enum class StmtKind : uint8_t {
#define ANVIL_STMT_KIND(Name) k##Name,
#include "anvil/tir/stmt_kinds.def"
#undef ANVIL_STMT_KIND
};
std::string_view stmt_kind_name(StmtKind kind);

class StmtNode : public ir::Node {
 public:
  StmtKind kind() const { return kind_; }
  std::string_view type_key() const override;  // "tir.For", ...

 protected:
  explicit StmtNode(StmtKind kind) : kind_(kind) {}

 private:
  StmtKind kind_;
};

class Stmt : public ir::NodeRef<StmtNode> {
 public:
  Stmt() = default;
  explicit Stmt(const StmtNode* node) : NodeRef(node) {}
  StmtKind kind() const { return get()->kind(); }
  template <typename T>
  const T* as() const {
    return defined() && get()->kind() == T::kKind ? static_cast<const T*>(get()) : nullptr;
  }
};

enum class ForKind : uint8_t {
#define ANVIL_FOR_KIND(Name, text) k##Name,
#include "anvil/tir/for_kinds.def"
#undef ANVIL_FOR_KIND
};
std::string_view for_kind_name(ForKind kind);  // "serial", "parallel", ...

// Thread tags a ThreadBinding loop may carry: threadIdx.{x,y,z}, blockIdx.{x,y,z}, vthread.
bool is_valid_thread_tag(std::string_view tag);

// Loop annotations, ordered by key (deterministic printing and hashing).
using Annotations = std::map<std::string, PrimExpr>;

// for loop_var in [min, min + extent): body. loop_var is a scalar integer Var defined by the loop
// for its body; min and extent have its dtype. kind ThreadBinding needs a valid thread_tag
// (other kinds an empty one).
class ForNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kFor;
  static Stmt make(Var loop_var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body, std::string thread_tag = "",
                   Annotations annotations = {});
  const Var& loop_var() const { return loop_var_; }
  const PrimExpr& min() const { return min_; }
  const PrimExpr& extent() const { return extent_; }
  ForKind for_kind() const { return for_kind_; }
  const std::string& thread_tag() const { return thread_tag_; }
  const Annotations& annotations() const { return annotations_; }
  const Stmt& body() const { return body_; }

 private:
  ForNode() : StmtNode(kKind) {}
  Var loop_var_;
  PrimExpr min_, extent_;
  ForKind for_kind_ = ForKind::kSerial;
  std::string thread_tag_;
  Annotations annotations_;
  Stmt body_;
};

// buffer[indices] = value. value.dtype must be the buffer dtype times the access lanes (vector
// indices, e.g. a Ramp, store a whole vector).
class BufferStoreNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kBufferStore;
  static Stmt make(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices);
  const Buffer& buffer() const { return buffer_; }
  const PrimExpr& value() const { return value_; }
  const std::vector<PrimExpr>& indices() const { return indices_; }

 private:
  BufferStoreNode(Buffer b, PrimExpr v, std::vector<PrimExpr> i)
      : StmtNode(kKind), buffer_(std::move(b)), value_(std::move(v)), indices_(std::move(i)) {}
  Buffer buffer_;
  PrimExpr value_;
  std::vector<PrimExpr> indices_;
};

// Allocates prod(extents) elements of dtype in scope ("global", "shared", "shared.dyn", "local",
// "warp") and defines buffer_var (a handle Var) for body; freed after body.
class AllocateNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  static Stmt make(Var buffer_var, DataType dtype, std::vector<PrimExpr> extents, std::string scope, Stmt body);
  const Var& buffer_var() const { return buffer_var_; }
  DataType dtype() const { return dtype_; }
  const std::vector<PrimExpr>& extents() const { return extents_; }
  const std::string& scope() const { return scope_; }
  const Stmt& body() const { return body_; }

 private:
  AllocateNode() : StmtNode(kKind) {}
  Var buffer_var_;
  DataType dtype_;
  std::vector<PrimExpr> extents_;
  std::string scope_;
  Stmt body_;
};

// Whether scope is a storage scope Allocate and Buffer accept.
bool is_valid_storage_scope(std::string_view scope);

// prod(extents) when every extent of op is a constant integer, none is negative and the product
// fits int64_t; nullopt otherwise (the size is known only at run time, or is invalid there).
std::optional<int64_t> constant_allocation_elements(const AllocateNode& op);

// The CPU code generators (C, LLVM) put an allocation on the stack when its size is constant and
// at most this many bytes; every other allocation comes from the runtime's workspace_alloc.
inline constexpr int64_t kMaxStackAllocBytes = 64 * 1024;

// Length in elements of the stack array for op (at least 1, so a zero-sized allocation still has
// an address) when constant_allocation_elements(op) times the element size is at most
// kMaxStackAllocBytes; nullopt when op must go through workspace_alloc.
std::optional<int64_t> stack_allocation_elements(const AllocateNode& op);

// let var = value in body (var.dtype == value.dtype); defines var for body.
class LetStmtNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kLetStmt;
  static Stmt make(Var var, PrimExpr value, Stmt body);
  const Var& var() const { return var_; }
  const PrimExpr& value() const { return value_; }
  const Stmt& body() const { return body_; }

 private:
  LetStmtNode(Var var, PrimExpr value, Stmt body)
      : StmtNode(kKind), var_(std::move(var)), value_(std::move(value)), body_(std::move(body)) {}
  Var var_;
  PrimExpr value_;
  Stmt body_;
};

// if cond (scalar bool): then_case else else_case (else_case may be undefined).
class IfThenElseNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  static Stmt make(PrimExpr cond, Stmt then_case, Stmt else_case = Stmt());
  const PrimExpr& cond() const { return cond_; }
  const Stmt& then_case() const { return then_; }
  const Stmt& else_case() const { return else_; }

 private:
  IfThenElseNode(PrimExpr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond_(std::move(c)), then_(std::move(t)), else_(std::move(e)) {}
  PrimExpr cond_;
  Stmt then_, else_;
};

// Statements run in order. make() keeps the list as given (at least one statement); seq()
// below flattens nested sequences and unwraps a single statement.
class SeqStmtNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kSeqStmt;
  static Stmt make(std::vector<Stmt> seq);
  const std::vector<Stmt>& seq() const { return seq_; }
  size_t size() const { return seq_.size(); }

 private:
  explicit SeqStmtNode(std::vector<Stmt> s) : StmtNode(kKind), seq_(std::move(s)) {}
  std::vector<Stmt> seq_;
};

// Evaluates value for its effect (or as a no-op: evaluate(0)).
class EvaluateNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kEvaluate;
  static Stmt make(PrimExpr value);
  const PrimExpr& value() const { return value_; }

 private:
  explicit EvaluateNode(PrimExpr v) : StmtNode(kKind), value_(std::move(v)) {}
  PrimExpr value_;
};

// Attribute key on body: pragmas ("pragma_unroll_explicit"), storage alignment, ... node is what
// the attribute is about (e.g. a buffer var) and may be undefined; value is any expression.
class AttrStmtNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kAttrStmt;
  static Stmt make(std::string key, PrimExpr node, PrimExpr value, Stmt body);
  const std::string& key() const { return key_; }
  const PrimExpr& node() const { return node_; }
  const PrimExpr& value() const { return value_; }
  const Stmt& body() const { return body_; }

 private:
  AttrStmtNode(std::string k, PrimExpr n, PrimExpr v, Stmt b)
      : StmtNode(kKind), key_(std::move(k)), node_(std::move(n)), value_(std::move(v)), body_(std::move(b)) {}
  std::string key_;
  PrimExpr node_, value_;
  Stmt body_;
};

// assert(condition, message, args...) then body: when the scalar bool condition is false at run
// time the kernel fails with a ValueError carrying message (TVM's AssertStmt), else body runs.
// message is literal text in which each "{}" is replaced by the value of the next of
// message_args (scalar integers, printed as decimal int64; as many as there are "{}"), so a
// message can show run-time values: "f: argument 'n' is {} but A.shape[0] is {}".
class AssertStmtNode : public StmtNode {
 public:
  static constexpr StmtKind kKind = StmtKind::kAssertStmt;
  static Stmt make(PrimExpr condition, std::string message, Stmt body, std::vector<PrimExpr> message_args = {});
  const PrimExpr& condition() const { return condition_; }
  const std::string& message() const { return message_; }
  const std::vector<PrimExpr>& message_args() const { return message_args_; }
  const Stmt& body() const { return body_; }

 private:
  AssertStmtNode() : StmtNode(kKind) {}
  PrimExpr condition_;
  std::string message_;
  std::vector<PrimExpr> message_args_;
  Stmt body_;
};

// The pieces of an assert message around its "{}" placeholders: message_args().size() + 1
// strings (the text before the first "{}", between them, after the last).
std::vector<std::string> assert_message_pieces(const std::string& message);

// Well-known attribute keys.
namespace attr {
inline constexpr std::string_view kStorageAlignment = "storage_alignment";  // node: buffer var
inline constexpr std::string_view kPragmaPrefix = "pragma_";
}  // namespace attr

// ---- convenience builders -----------------------------------------------------------------
// Like the factories, but int literals for min/extent/indices/values adopt the dtype they meet.

Stmt make_for(Var loop_var, PrimExpr min, PrimExpr extent, Stmt body, ForKind kind = ForKind::kSerial);
Stmt make_thread_for(Var loop_var, PrimExpr min, PrimExpr extent, std::string thread_tag, Stmt body);
Stmt buffer_store(const Buffer& buffer, PrimExpr value, std::vector<PrimExpr> indices);
Stmt allocate(Var buffer_var, DataType dtype, std::vector<PrimExpr> extents, std::string scope, Stmt body);
Stmt let_stmt(Var var, PrimExpr value, Stmt body);
Stmt if_then_else(PrimExpr cond, Stmt then_case, Stmt else_case = Stmt());
// Flattens nested SeqStmts, drops undefined entries; one statement is returned as is; none
// gives evaluate(0).
Stmt seq(std::vector<Stmt> stmts);
Stmt evaluate(PrimExpr value);
Stmt attr_stmt(std::string key, PrimExpr node, PrimExpr value, Stmt body);
Stmt assert_stmt(PrimExpr condition, std::string message, Stmt body, std::vector<PrimExpr> message_args = {});

}  // namespace anvil::tir
