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
// Variables print by name; two distinct variables with one name get suffixes (i, i_1) so
// the text never conflates them. Same for buffers.
#pragma once

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
  // The unique printed name of a variable / buffer (assigned on first sight).
  const std::string& var_name(const VarNode* v);
  const std::string& buffer_name(const BufferNode* b);
  // "Buffer(float32, [n, 4], ...)".
  std::string buffer_decl(const Buffer& b);

 protected:
  // Text of e and its precedence (higher binds tighter; kAtom for atoms).
  std::string text(const PrimExpr& e, int* prec);
  // Text of e wrapped in parentheses when its precedence is below min_prec.
  std::string operand(const PrimExpr& e, int min_prec);
  static constexpr int kAtom = 100;

 private:
  std::string unique(const std::string& base);
  std::unordered_map<const VarNode*, std::string> vars_;
  std::unordered_map<const BufferNode*, std::string> buffers_;
  std::unordered_set<std::string> used_var_names_, used_buffer_names_;
  bool naming_buffer_ = false;
};

// Formatting helpers shared with tir's printer.
std::string format_float(double value, DataType dtype);
std::string quote_string(const std::string& s);

}  // namespace anvil::ir
