// Graph IR parser, lexical layer: blanks, words, numbers, strings, types and dimension
// expressions (parse_cursor.h).
#include "anvil/graph/parse_cursor.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::graph::parse {
namespace {

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool ident_char(char c) { return ident_start(c) || digit(c); }

}  // namespace

std::string Cursor::where(size_t pos) const {
  int line = 1, col = 1;
  for (size_t i = 0; i < pos && i < text_.size(); ++i) {
    if (text_[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return str_cat("line ", line, ":", col);
}

std::string Cursor::excerpt(size_t pos) const {
  if (pos >= text_.size()) return "end of text";
  size_t end = pos;
  while (end < text_.size() && end - pos < 24 && text_[end] != '\n') ++end;
  return str_cat("'", text_.substr(pos, end - pos), "'");
}

void Cursor::fail(std::string_view expected) {
  peek();
  value_error("graph parse: ", where(pos_), ": expected ", expected, ", got ", excerpt(pos_));
}

void Cursor::fail_at(size_t pos, const std::string& message) const {
  value_error("graph parse: ", where(pos), ": ", message);
}

void Cursor::enter() {
  if (++depth_ > kMaxDepth) fail_at(pos_, str_cat("expressions nest deeper than ", kMaxDepth, " levels"));
}

char Cursor::peek() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      return c;
    }
  }
  return 0;
}

bool Cursor::at_end() { return peek() == 0; }

bool Cursor::accept(std::string_view s) {
  peek();
  if (text_.substr(pos_, s.size()) != s) return false;
  pos_ += s.size();
  return true;
}

bool Cursor::accept_word(std::string_view w) {
  peek();
  if (text_.substr(pos_, w.size()) != w) return false;
  if (pos_ + w.size() < text_.size() && ident_char(text_[pos_ + w.size()])) return false;
  pos_ += w.size();
  return true;
}

void Cursor::expect(std::string_view s) {
  if (!accept(s)) fail(str_cat("'", s, "'"));
}

bool Cursor::at_ident() { return ident_start(peek()); }

std::string Cursor::ident(std::string_view what, bool dotted) {
  if (!at_ident()) fail(what);
  size_t start = pos_;
  while (pos_ < text_.size() && (ident_char(text_[pos_]) ||
                                 (dotted && text_[pos_] == '.' && pos_ + 1 < text_.size() && ident_start(text_[pos_ + 1]))))
    ++pos_;
  return std::string(text_.substr(start, pos_ - start));
}

std::string Cursor::name(std::string_view what) {
  size_t start = pos_;  // no blanks between a sigil and its name
  while (pos_ < text_.size() && ident_char(text_[pos_])) ++pos_;
  if (pos_ == start) fail(what);
  return std::string(text_.substr(start, pos_ - start));
}

bool Cursor::at_number() {
  char c = peek();
  std::string_view rest = text_.substr(pos_);
  if (c == '-') rest.remove_prefix(1);
  if (!rest.empty() && digit(rest[0])) return true;
  for (std::string_view w : {"inf", "nan"})
    if (rest.substr(0, 3) == w && (rest.size() == 3 || !ident_char(rest[3]))) return true;
  return false;
}

Number Cursor::number(std::string_view what) {
  if (!at_number()) fail(what);
  size_t start = pos_;
  Number n;
  if (text_[pos_] == '-') ++pos_;
  if (!digit(text_[pos_])) {  // inf / nan
    bool neg = pos_ > start;
    n.integral = false;
    n.f = text_[pos_] == 'i' ? (neg ? -HUGE_VAL : HUGE_VAL) : std::nan("");
    pos_ += 3;
    return n;
  }
  while (pos_ < text_.size() && digit(text_[pos_])) ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '.') {
    n.integral = false;
    ++pos_;
    while (pos_ < text_.size() && digit(text_[pos_])) ++pos_;
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    n.integral = false;
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (pos_ >= text_.size() || !digit(text_[pos_])) fail("an exponent");
    while (pos_ < text_.size() && digit(text_[pos_])) ++pos_;
  }
  std::string s(text_.substr(start, pos_ - start));
  errno = 0;
  if (n.integral) {
    n.i = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE) fail_at(start, str_cat("integer ", s, " does not fit 64 bits"));
    n.f = static_cast<double>(n.i);
  } else {
    n.f = std::strtod(s.c_str(), nullptr);
  }
  return n;
}

int64_t Cursor::integer(std::string_view what) {
  size_t start = (peek(), pos_);
  Number n = number(what);
  if (!n.integral) {
    pos_ = start;
    fail(what);
  }
  return n.i;
}

int64_t Cursor::index(std::string_view what) {
  size_t start = pos_;  // directly after the '.'
  int64_t v = 0;
  while (pos_ < text_.size() && digit(text_[pos_]) && v < (int64_t{1} << 40)) v = v * 10 + (text_[pos_++] - '0');
  if (pos_ == start) fail(what);
  if (v > INT32_MAX) fail_at(start, str_cat("tuple index ", v, " is too large"));
  return v;
}

void Cursor::skip_braces() {
  while (pos_ < text_.size() && text_[pos_] != '{') {  // the header: no braces, strings or comments
    if (text_[pos_] == '"' || text_[pos_] == '#') fail("'{'");
    ++pos_;
  }
  expect("{");
  size_t open = pos_ - 1;
  int depth = 1;
  while (depth > 0) {
    if (pos_ >= text_.size()) fail_at(open, "this '{' is never closed");
    char c = text_[pos_];
    if (c == '"') {
      string_literal();
      continue;
    }
    if (c == '#') {
      peek();
      continue;
    }
    ++pos_;
    if (c == '{') ++depth;
    else if (c == '}') --depth;
  }
}

std::string Cursor::string_literal() {
  if (peek() != '"') fail("a string");
  size_t start = pos_++;
  std::string out;
  while (true) {
    if (pos_ >= text_.size() || text_[pos_] == '\n') fail_at(start, "unterminated string");
    char c = text_[pos_++];
    if (c == '"') return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos_ >= text_.size()) fail_at(start, "unterminated string");
    char e = text_[pos_++];
    if (e == 'n') out += '\n';
    else if (e == 't') out += '\t';
    else if (e == '"' || e == '\\') out += e;
    else fail_at(pos_ - 2, str_cat("unknown escape '\\", std::string(1, e), "' in a string"));
  }
}

DataType Cursor::dtype() {
  size_t start = (peek(), pos_);
  std::string word = ident("a dtype");
  try {
    return DataType::parse(word);
  } catch (const Error&) {
    fail_at(start, str_cat("expected a dtype (float32, int64, bool, ...), got '", word, "'"));
  }
}

Type Cursor::type() {
  enter();
  Type t = type_inner();
  leave();
  return t;
}

Type Cursor::type_inner() {
  size_t start = (peek(), pos_);
  if (accept_word("Object")) return Type::object();
  if (accept_word("Shape")) {
    expect("[");
    if (accept("(")) {  // Shape[(n, 4)]: known values
      std::vector<PrimExpr> values = dim_list();
      expect("]");
      try {
        return Type::shape(std::move(values));
      } catch (const Error& e) {
        fail_at(start, e.what());
      }
    }
    int ndim = accept("?") ? -1 : static_cast<int>(integer("a rank, '?' or '(values)'"));
    expect("]");
    return Type::shape(ndim);
  }
  if (accept_word("Tuple")) {
    expect("[");
    std::vector<Type> fields;
    if (!accept("]")) {
      do fields.push_back(type());
      while (accept(","));
      expect("]");
    }
    return Type::tuple(std::move(fields));
  }
  if (!accept_word("Tensor")) fail("a type (Tensor[...], Tuple[...], Shape[...], Object)");
  expect("[");
  if (accept("?")) {
    expect(",");
    DataType t = dtype();
    expect("]");
    return Type::tensor_any_rank(t);
  }
  expect("(");
  std::vector<PrimExpr> dims = dim_list();
  expect(",");
  DataType t = dtype();
  expect("]");
  try {
    return Type::tensor(std::move(dims), t);
  } catch (const Error& e) {
    fail_at(start, e.what());
  }
}

// The dims after "(" up to and with the ")": "n, 4)", "3,)", ")".
std::vector<PrimExpr> Cursor::dim_list() {
  std::vector<PrimExpr> dims;
  while (!accept(")")) {
    dims.push_back(dim());
    if (!accept(",")) {
      expect(")");
      break;
    }
  }
  return dims;
}

// Dimensions: + - over * // %, unary minus, parentheses, min/max/truncdiv calls, dtype casts
// (int64(7) is an int64 immediate), integers and symbolic names; left-associative like the
// tensor IR's printer, so printed trees read back with the same shape.
PrimExpr Cursor::dim() {
  enter();
  PrimExpr e = dim_or();
  leave();
  return e;
}

// Conditions (from symbolic clamping, select(c, a, b)): or < and < not < comparisons < + -.
PrimExpr Cursor::dim_or() {
  PrimExpr a = dim_and();
  while (accept_word("or")) a = ir::logical_or(a, dim_and());
  return a;
}

PrimExpr Cursor::dim_and() {
  PrimExpr a = dim_not();
  while (accept_word("and")) a = ir::logical_and(a, dim_not());
  return a;
}

PrimExpr Cursor::dim_not() {
  if (!accept_word("not")) return dim_compare();
  enter();
  PrimExpr e = ir::logical_not(dim_not());
  leave();
  return e;
}

PrimExpr Cursor::dim_compare() {
  PrimExpr a = dim_sum();
  if (accept("==")) return ir::eq(a, dim_sum());
  if (accept("!=")) return ir::ne(a, dim_sum());
  if (accept("<=")) return ir::le(a, dim_sum());
  if (accept(">=")) return ir::ge(a, dim_sum());
  if (accept("<")) return ir::lt(a, dim_sum());
  if (accept(">")) return ir::gt(a, dim_sum());
  return a;
}

PrimExpr Cursor::dim_sum() {
  PrimExpr a = dim_product();
  while (true) {
    if (accept("+")) a = ir::add(a, dim_product());
    else if (accept("-")) a = ir::sub(a, dim_product());
    else return a;
  }
}

PrimExpr Cursor::dim_product() {
  PrimExpr a = dim_unary();
  while (true) {
    if (accept("*")) a = ir::mul(a, dim_unary());
    else if (accept("//")) a = ir::floordiv(a, dim_unary());
    else if (accept("%")) a = ir::floormod(a, dim_unary());
    else return a;
  }
}

PrimExpr Cursor::dim_unary() {
  if (peek() == '-' && !at_number()) {
    ++pos_;
    enter();
    PrimExpr e = -dim_unary();
    leave();
    return e;
  }
  return dim_atom();
}

PrimExpr Cursor::dim_atom() {
  size_t start = (peek(), pos_);
  if (at_number()) {
    Number n = number("a dimension");
    if (!n.integral) fail_at(start, "expected an integer dimension");
    if (n.i < INT32_MIN || n.i > INT32_MAX) fail_at(start, str_cat("dimension ", n.i, " does not fit int32"));
    return ir::int_imm(n.i);
  }
  if (accept("(")) {
    PrimExpr e = dim();
    expect(")");
    return e;
  }
  std::string word = ident("a dimension (an integer, a name or an expression)");
  if (word == "True" || word == "False") return ir::bool_imm(word == "True");
  if (word == "select" && accept("(")) {
    PrimExpr c = dim();
    expect(",");
    PrimExpr t = dim();
    expect(",");
    PrimExpr f = dim();
    expect(")");
    return ir::select(c, t, f);
  }
  if (!accept("(")) {
    auto it = symbols_->find(word);
    if (it == symbols_->end()) it = symbols_->emplace(word, ir::size_var(word)).first;
    return it->second;
  }
  if (word == "min" || word == "max" || word == "truncdiv") {
    PrimExpr a = dim();
    expect(",");
    PrimExpr b = dim();
    expect(")");
    if (word == "min") return ir::min(a, b);
    if (word == "max") return ir::max(a, b);
    return ir::div(a, b);
  }
  DataType t;
  try {
    t = DataType::parse(word);
  } catch (const Error&) {
    fail_at(start, str_cat("expected min, max, truncdiv, select or a dtype cast in a dimension, got '", word, "('"));
  }
  if (!t.is_int() && !t.is_uint()) fail_at(start, str_cat("a dimension cast to ", word, ", expected an integer type"));
  if (at_number()) {
    size_t at = pos_;
    Number n = number("an integer");
    if (accept(")")) {
      if (!n.integral) fail_at(at, "expected an integer");
      return ir::int_imm(n.i, t);
    }
    pos_ = at;
  }
  PrimExpr e = dim();
  expect(")");
  return ir::cast(t, e);
}

}  // namespace anvil::graph::parse
