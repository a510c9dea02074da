// Readable text form of statements and PrimFuncs (expressions as in "anvil/ir/printer.h"),
// indented by two spaces per block:
//
//   func matmul(A: Buffer(float32, [n, k]), B: Buffer(float32, [k, m]), C: Buffer(float32, [n, m])):
//     for i in range(0, n) parallel:
//       for j in range(0, m):
//         C[i, j] = 0.0f
//         for kk in range(0, k):
//           C[i, j] = C[i, j] + A[i, kk] * B[kk, j]
//
// Names as in "anvil/ir/printer.h": loops and lets of sibling scopes reuse a name; the end of a
// loop that starts at `lo` with extent `hi - lo` prints as `range(lo, hi)`.
// Statement forms: `for v in range(start, stop) [parallel|vectorized|unrolled|thread("threadIdx.x")]
// [{key: value}]:`, `A[i] = v`, `T = allocate(float32, [64], "local")` (scope to the end of the
// block), `x: int32 = v` (LetStmt, same), `if c:` / `elif c:` / `else:`, `evaluate(e)`,
// `with attr(node, "key", value):`. The function header names the global_symbol (or "main"),
// lists params (buffer params as their buffer, a handle param named differently from its buffer as
// `h: A = Buffer(...)`), `-> dtype` unless void, then other attributes as `attr key = value`.
#pragma once

#include <ostream>
#include <string>

#include "anvil/ir/printer.h"
#include "anvil/tir/prim_func.h"
#include "anvil/tir/stmt.h"

namespace anvil::tir {

std::string to_string(const Stmt& s);
std::string to_string(const PrimFunc& f);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);
using ir::to_string;
using ir::operator<<;

// The printer class (one name table per instance), for tools that print several pieces together.
class StmtPrinter : public ir::ExprPrinter {
 public:
  std::string print_stmt(const Stmt& s, int indent = 0);
  std::string print_func(const PrimFunc& f);

 private:
  void stmt(const Stmt& s, int indent, std::string* out);
  void block(const Stmt& s, int indent, std::string* out);  // body of a ':' line
  void line(int indent, const std::string& text, std::string* out);
  std::string loop_stop(const PrimExpr& min, const PrimExpr& extent);
};

}  // namespace anvil::tir
