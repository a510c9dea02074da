// Graph IR parser: functions, bindings, expressions, attributes and constants (parser.h).
// The constants follow the functions in the text but are referenced inside them, so a first
// pass over the top level reads the constants and notes where each `def` starts.
#include "anvil/graph/parser.h"

#include <cmath>
#include <cstring>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/parse_cursor.h"
#include "anvil/ir/float16.h"

namespace anvil::graph {
namespace {

using parse::Cursor;
using parse::Number;

class ModuleParser {
 public:
  explicit ModuleParser(std::string_view text) : cur_(text, &symbols_) {}

  IRModule run() {
    while (!cur_.at_end()) {
      size_t start = cur_.pos();
      if (cur_.accept_word("def")) {
        defs_.push_back(start);
        cur_.skip_braces();
      } else if (cur_.accept_word("const")) {
        constant(start);
      } else if (cur_.accept_word("func")) {
        cur_.fail_at(start, "PrimFunc text is not parsed (print the module with print_prim_funcs = false)");
      } else {
        cur_.fail("'def @name(...)' or 'const[i]: ...'");
      }
    }
    IRModule mod;
    for (size_t start : defs_) {
      cur_.seek(start);
      auto [name, f] = function();
      if (!mod.functions.emplace(name, f).second) cur_.fail_at(start, str_cat("function '@", name, "' is defined twice"));
    }
    return mod;
  }

 private:
  // const[i]: Tensor[(dims), dtype] = [v, ...]   (a 0-d constant: one value, no brackets)
  void constant(size_t start) {
    cur_.expect("[");
    int64_t index = cur_.integer("a constant index");
    cur_.expect("]");
    if (index != static_cast<int64_t>(constants_.size()))
      cur_.fail_at(start, str_cat("expected const[", constants_.size(), "] (constants are listed in order), got const[",
                                  index, "]"));
    cur_.expect(":");
    size_t type_at = (cur_.peek(), cur_.pos());
    Type type = cur_.type();
    std::optional<std::vector<int64_t>> shape = type.is_tensor() ? type.static_shape() : std::nullopt;
    if (!shape) cur_.fail_at(type_at, str_cat("a constant's type must be a tensor of static shape, got ", to_string(type)));
    cur_.expect("=");
    if (cur_.peek() == '<')
      cur_.fail_at(cur_.pos(), str_cat("const[", index, "] is elided; its values do not parse back (print with "
                                       "max_constant_values = -1)"));
    int64_t count = 1;  // each value takes at least two characters: refuse before allocating
    for (int64_t d : *shape) count = d == 0 || count <= INT64_MAX / d ? count * d : INT64_MAX;
    if (count > 1 && static_cast<uint64_t>(count) > cur_.remaining() / 2 + 1)
      cur_.fail_at(type_at, str_cat("const[", index, "] declares ", count, " values but the text is shorter"));
    Tensor t;
    try {
      t = Tensor::empty(*shape, type.dtype());
    } catch (const Error& e) {
      cur_.fail_at(type_at, e.what());
    }
    int64_t n = t.numel();
    if (t.ndim() == 0) {
      element(t, 0);
    } else {
      cur_.expect("[");
      for (int64_t k = 0; k < n; ++k) {
        if (k) cur_.expect(",");
        element(t, k);
      }
      if (cur_.peek() == ',') cur_.fail_at(cur_.pos(), str_cat("const[", index, "] has more than ", n, " values"));
      cur_.expect("]");
    }
    constants_.push_back(Constant::make(t));
  }

  void element(const Tensor& t, int64_t k) {
    DataType d = t.dtype();
    char* base = static_cast<char*>(t.data());
    auto put = [&](auto v) { std::memcpy(base + k * static_cast<int64_t>(sizeof(v)), &v, sizeof(v)); };
    size_t at = (cur_.peek(), cur_.pos());
    if (d == DataType::boolean()) {
      if (cur_.accept_word("True")) return put(uint8_t{1});
      if (cur_.accept_word("False")) return put(uint8_t{0});
      cur_.fail("True or False");
    }
    if (d == DataType::float32() || d == DataType::float64() || d == DataType::float16()) {
      double v = cur_.number("a number").f;
      if (d == DataType::float32()) return put(static_cast<float>(v));
      if (d == DataType::float64()) return put(v);
      return put(ir::double_to_half_bits(v));
    }
    struct IntKind {
      DataType dtype;
      int64_t lo, hi;
    };
    for (IntKind ik : {IntKind{DataType::int64(), INT64_MIN, INT64_MAX}, IntKind{DataType::int32(), INT32_MIN, INT32_MAX},
                       IntKind{DataType::int16(), INT16_MIN, INT16_MAX}, IntKind{DataType::int8(), INT8_MIN, INT8_MAX},
                       IntKind{DataType::uint8(), 0, UINT8_MAX}}) {
      if (d != ik.dtype) continue;
      int64_t v = cur_.integer("an integer");
      if (v < ik.lo || v > ik.hi) cur_.fail_at(at, str_cat(v, " does not fit ", d));
      if (d == DataType::int64()) return put(v);
      if (d == DataType::int32()) return put(static_cast<int32_t>(v));
      if (d == DataType::int16()) return put(static_cast<int16_t>(v));
      if (d == DataType::int8()) return put(static_cast<int8_t>(v));
      return put(static_cast<uint8_t>(v));
    }
    cur_.fail_at(at, str_cat("constants of dtype ", d, " are not supported by the parser"));
  }

  std::pair<std::string, Function> function() {
    scope_.clear();
    cur_.accept_word("def");
    cur_.expect("@");
    std::string name = cur_.name("a function name");
    cur_.expect("(");
    std::vector<Var> params;
    if (!cur_.accept(")")) {
      do {
        size_t at = (cur_.peek(), cur_.pos());
        cur_.expect("%");
        std::string pname = cur_.name("a parameter name");
        cur_.expect(":");
        params.push_back(define(at, pname, cur_.type()));
      } while (cur_.accept(","));
      cur_.expect(")");
    }
    cur_.expect("->");
    size_t ret_at = (cur_.peek(), cur_.pos());
    Type ret = cur_.type();
    cur_.expect("{");
    std::vector<Binding> bindings;
    while (cur_.peek() == '%') {
      size_t at = cur_.pos();
      cur_.expect("%");
      std::string vname = cur_.name("a variable name");
      cur_.expect(":");
      Type type = cur_.type();
      cur_.expect("=");
      Expr value = expr(&type);
      if (!type_equal(type, value.type()))
        cur_.fail_at(at, str_cat("%", vname, " is declared ", to_string(type), " but its value has type ",
                                 to_string(value.type())));
      bindings.push_back({define(at, vname, type), value});
    }
    if (!cur_.accept_word("return")) cur_.fail("a binding '%name: Type = ...' or 'return'");
    Expr result = expr(nullptr);
    cur_.expect("}");
    if (!type_equal(ret, result.type()))
      cur_.fail_at(ret_at, str_cat("@", name, " is declared to return ", to_string(ret), " but returns ",
                                   to_string(result.type())));
    return {name, Function::make(std::move(params), std::move(bindings), result)};
  }

  Var define(size_t at, const std::string& name, Type type) {
    Var v = Var::make(name, std::move(type));
    if (!scope_.emplace(name, v).second) cur_.fail_at(at, str_cat("%", name, " is bound twice"));
    return v;
  }

  // A call_tir or call_fused binding has no inference: it takes `binding_type`, the binding's printed type.
  Expr expr(const Type* binding_type) {
    cur_.enter();
    Expr e = primary(binding_type);
    cur_.leave();
    while (cur_.accept(".")) {
      size_t at = cur_.pos();
      int64_t i = cur_.index("a tuple index");
      try {
        e = TupleGetItem::make(e, static_cast<int>(i));
      } catch (const Error& err) {
        cur_.fail_at(at, err.what());
      }
    }
    return e;
  }

  Expr primary(const Type* binding_type) {
    size_t start = (cur_.peek(), cur_.pos());
    if (cur_.accept("%")) {
      std::string name = cur_.name("a variable name");
      auto it = scope_.find(name);
      if (it == scope_.end()) cur_.fail_at(start, str_cat("%", name, " is not a parameter or an earlier binding"));
      return it->second;
    }
    if (cur_.accept("(")) {
      std::vector<Expr> fields;
      if (cur_.accept(")")) return Tuple::make({});
      fields.push_back(expr(nullptr));
      if (!cur_.accept(",")) cur_.fail("',' (a 1-tuple is written (x,))");
      while (!cur_.accept(")")) {
        fields.push_back(expr(nullptr));
        if (!cur_.accept(",")) {
          cur_.expect(")");
          break;
        }
      }
      return Tuple::make(std::move(fields));
    }
    if (!cur_.at_ident()) cur_.fail("an expression (%var, const[i], shape(...), a tuple or a call)");
    std::string op = cur_.ident("an operator name", /*dotted=*/true);
    if (op == "const") {
      cur_.expect("[");
      int64_t i = cur_.integer("a constant index");
      cur_.expect("]");
      if (i < 0 || i >= static_cast<int64_t>(constants_.size()))
        cur_.fail_at(start, str_cat("const[", i, "] is not listed (the text has ", constants_.size(), " constants)"));
      return constants_[static_cast<size_t>(i)];
    }
    if (op == "shape") {
      cur_.expect("(");
      std::vector<PrimExpr> dims;
      while (!cur_.accept(")")) {
        dims.push_back(cur_.dim());
        if (!cur_.accept(",")) {
          cur_.expect(")");
          break;
        }
      }
      try {
        return ShapeExpr::make(std::move(dims));
      } catch (const Error& e) {
        cur_.fail_at(start, e.what());
      }
    }
    return call(start, op, binding_type);
  }

  Expr call(size_t start, const std::string& op, const Type* binding_type) {
    if (op != kCallTIR && find_op(op) == nullptr) cur_.fail_at(start, str_cat("unknown graph operator '", op, "'"));
    cur_.expect("(");
    std::vector<Expr> args;
    Attrs attrs;
    if (!cur_.accept(")")) {
      do {
        size_t at = (cur_.peek(), cur_.pos());
        if (cur_.at_ident()) {
          std::string key = cur_.ident("an attribute name");
          if (cur_.peek() == '=' && !cur_.accept("==") && cur_.accept("=")) {
            if (!attrs.emplace(key, attr_value()).second) cur_.fail_at(at, str_cat("attribute '", key, "' is given twice"));
            continue;
          }
          cur_.seek(at);
        }
        if (!attrs.empty()) cur_.fail("an attribute 'name=value' (arguments come before attributes)");
        args.push_back(expr(nullptr));
      } while (cur_.accept(","));
      cur_.expect(")");
    }
    if (call_keeps_type(op)) {
      if (binding_type == nullptr)
        cur_.fail_at(start, str_cat("a ", op, " must be the whole value of a binding (its type is the binding's)"));
      return Call::make(op, std::move(args), std::move(attrs), *binding_type);
    }
    Type type;
    try {
      type = infer_call_type(op, args, attrs);
    } catch (const Error& e) {
      throw Error(e.kind(), str_cat("graph parse: ", cur_.where(start), ": ", e.what()));
    }
    return Call::make(op, std::move(args), std::move(attrs), std::move(type));
  }

  // 3, -1.5, "nearest", [1, 2], [0.5, 1.0], ["a"], float32. An empty list is a list of ints.
  AttrValue attr_value() {
    char c = cur_.peek();
    if (c == '"') return AttrValue(cur_.string_literal());
    if (cur_.at_number()) {
      Number n = cur_.number("a number");
      return n.integral ? AttrValue(n.i) : AttrValue(n.f);
    }
    if (cur_.accept("[")) {
      if (cur_.accept("]")) return AttrValue::ints({});
      if (cur_.peek() == '"') {
        AttrValue::Strings s;
        do s.push_back(cur_.string_literal());
        while (cur_.accept(","));
        cur_.expect("]");
        return AttrValue::strings(std::move(s));
      }
      std::vector<Number> nums;
      bool integral = true;
      do {
        nums.push_back(cur_.number("a number"));
        integral = integral && nums.back().integral;
      } while (cur_.accept(","));
      cur_.expect("]");
      if (integral) {
        AttrValue::Ints v;
        for (const Number& x : nums) v.push_back(x.i);
        return AttrValue::ints(std::move(v));
      }
      AttrValue::Floats v;
      for (const Number& x : nums) v.push_back(x.f);
      return AttrValue::floats(std::move(v));
    }
    if (cur_.at_ident()) return AttrValue(cur_.dtype());
    cur_.fail("an attribute value (a number, a string, a list or a dtype)");
  }

  std::map<std::string, ir::Var> symbols_;  // declared before cur_, which points at it
  Cursor cur_;
  std::vector<Expr> constants_;
  std::vector<size_t> defs_;
  std::map<std::string, Var> scope_;
};

}  // namespace

IRModule parse_module(std::string_view text) { return ModuleParser(text).run(); }

Function parse_function(std::string_view text) {
  IRModule mod = parse_module(text);
  if (mod.functions.size() != 1)
    value_error("graph parse: expected exactly one function, got ", mod.functions.size());
  return mod.functions.begin()->second;
}

}  // namespace anvil::graph
