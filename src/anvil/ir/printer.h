// Readable text form of expressions (our own TVMScript-like syntax), used by --dump-ir, error
// messages and golden tests. Parentheses appear only where precedence needs them; the tree
// shape is still recoverable (a - (b - c), (a + b) * c).
//
//   literals   7 (int32), int64(7), True/False, 1.5f (float32), 1.5 (float64), float16(1.5), "s"
//   operators  a + b, a - b, a * b, a / b (float), truncdiv(a, b) (integer Div), a // b
//              (floordiv), a % b (floormod), min(a, b), max(a, b), ==, !=, <, <=, >, >=, and,
//              or, not a
//   others     select(c, t, f), float32(x) (cast), ramp(base, stride, lanes),
//              broadcast(v, lanes), exp(x) (intrinsics), A[i, j] (loads),
//              let x = v in body
// Precedence, loosest first: let, or, and, not, comparisons, + -, * / // %, unary -, atoms.
// Variables and buffers print by the names they were given. A suffix (i, i_1) appears only on a
// real clash: two distinct variables of one name visible at the same place (an inner loop var
// named like an enclosing one, or two free variables of one name); loops and lets in sibling
// scopes keep their names. Buffers that are views of one allocation (same data var, same name,
// such as a parameter and its flattened form) print as one name; distinct buffers sharing a name
// get suffixes.
#pragma once

#include <initializer_list>
#include <ostream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "anvil/ir/buffer.h"
#include "anvil/ir/expr.h"

namespace anvil::ir {

std::string to_string(const PrimExpr& e);
std::ostream& operator<<(std::ostream& os, const PrimExpr& e);
// A buffer's declaration: Buffer(float32, [n, 4], strides=[...], offset=..., scope="shared").
std::string to_string(const Buffer& b);
std::ostream& operator<<(std::ostream& os, const Buffer& b);

// The printer, for tir's statement printer to extend; one instance keeps one name table.
class ExprPrinter {
 public:
  virtual ~ExprPrinter() = default;
  std::string print(const PrimExpr& e);
  // The printed name of a variable used here (a free variable keeps its name from then on) and
  // of a buffer (assigned on first sight).
  std::string var_name(const VarNode* v);
  const std::string& buffer_name(const BufferNode* b);
  // A binding site (loop or let variable): v's name is taken until the matching unbind_var, so
  // it clashes only with the names visible now; sibling scopes reuse a name.
  std::string bind_var(const VarNode* v);
  void unbind_var(const VarNode* v);
  // "Buffer(float32, [n, 4], ...)".
  std::string buffer_decl(const Buffer& b);

 protected:
  // Text of e and its precedence (higher binds tighter; kAtom for atoms).
  std::string text(const PrimExpr& e, int* prec);
  // Text of e wrapped in parentheses when its precedence is below min_prec.
  std::string operand(const PrimExpr& e, int min_prec);
  // name(a, b, ...), the arguments printed in order.
  std::string call_text(const std::string& name, std::initializer_list<PrimExpr> args);
  static constexpr int kAtom = 100;

 private:
  // base, else base_1, base_2, ...: the first not in `taken`.
  template <typename Taken>
  static std::string unique(const std::string& base, const Taken& taken);
  bool holds(const std::string& name, const VarNode* v) const;
  std::unordered_map<const VarNode*, std::string> vars_;  // the name each variable printed as
  std::unordered_map<std::string, const VarNode*> holder_;  // names visible now -> their variable
  std::unordered_map<const VarNode*, int> bind_depth_;      // enclosing binding sites of a variable
  std::unordered_set<const VarNode*> free_;                 // used outside any binding site
  std::unordered_map<const BufferNode*, std::string> buffers_;
  std::unordered_set<std::string> used_buffer_names_;
  // (data var, given name) -> printed name: views of one allocation share it.
  std::unordered_map<const VarNode*, std::unordered_map<std::string, std::string>> buffer_views_;
};

// Formatting helpers shared with tir's printer.
std::string format_float(double value, DataType dtype);
std::string quote_string(const std::string& s);

}  // namespace anvil::ir
