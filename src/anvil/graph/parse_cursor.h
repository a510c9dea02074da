// The lexical layer of the graph IR parser (parser.h): a cursor over the text that reads
// identifiers, numbers and strings, and the parts of the grammar below expressions — types and
// the tensor-IR dimension expressions inside them. Internal to graph/parser.cc.
//
// Every failure is a ValueError "graph parse: line L:C: expected <what>, got '<text>'".
// Symbolic dimension names are resolved through `symbols`: the same name is the same
// ir::size_var everywhere the cursor's owner shares that table (one table per module).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "anvil/graph/type.h"

namespace anvil::graph::parse {

// A number as written: integral (no '.', exponent, inf or nan) or not.
struct Number {
  bool integral = true;
  int64_t i = 0;
  double f = 0;
};

class Cursor {
 public:
  Cursor(std::string_view text, std::map<std::string, ir::Var>* symbols) : text_(text), symbols_(symbols) {}

  size_t pos() const { return pos_; }
  void seek(size_t pos) { pos_ = pos; }
  bool at_end();
  // Skips blanks and `#` comments, then: the next character (0 at the end).
  char peek();
  // The next characters are `s` (after blanks); consumed when they are.
  bool accept(std::string_view s);
  // A word `w` (not followed by an identifier character).
  bool accept_word(std::string_view w);
  void expect(std::string_view s);
  // [A-Za-z_][A-Za-z0-9_]*; with dots: a.b.c (operator names such as nn.conv2d).
  std::string ident(std::string_view what, bool dotted = false);
  // [A-Za-z0-9_]+ (the names after % and @; a printed name may start with a digit).
  std::string name(std::string_view what);
  bool at_ident();
  bool at_number();
  // -?digits[.digits][e[+-]digits], inf, nan, -inf.
  Number number(std::string_view what);
  int64_t integer(std::string_view what);
  // [0-9]+ only (a tuple index: `%t.0.1` is two projections, not a float).
  int64_t index(std::string_view what);
  // Skips to just after the `}` matching the next `{` (strings and comments skipped whole).
  void skip_braces();
  std::string string_literal();
  DataType dtype();
  Type type();
  PrimExpr dim();
  std::vector<PrimExpr> dim_list();

  // Characters left after the cursor (a bound on how many values the rest can hold).
  size_t remaining() const { return text_.size() - pos_; }
  // Nesting (parentheses, tuples, calls, types): ValueError past kMaxDepth, so hostile text
  // cannot exhaust the stack. enter() before descending, leave() after.
  static constexpr int kMaxDepth = 256;
  void enter();
  void leave() { --depth_; }

  // "line L:C" of a position; the failure helpers throw ValueError.
  std::string where(size_t pos) const;
  [[noreturn]] void fail(std::string_view expected);
  [[noreturn]] void fail_at(size_t pos, const std::string& message) const;
  // A short excerpt of the text at pos, for "got '...'".
  std::string excerpt(size_t pos) const;

 private:
  Type type_inner();
  PrimExpr dim_or();
  PrimExpr dim_and();
  PrimExpr dim_not();
  PrimExpr dim_compare();
  PrimExpr dim_sum();
  PrimExpr dim_product();
  PrimExpr dim_unary();
  PrimExpr dim_atom();

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::map<std::string, ir::Var>* symbols_;
};

}  // namespace anvil::graph::parse
