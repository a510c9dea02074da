// Graph IR text printer (format: printer.h).
#include "anvil/graph/printer.h"

#include <map>
#include <set>
#include <sstream>

#include "anvil/base/python_repr.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/float16.h"
#include "anvil/tir/printer.h"

namespace anvil::graph {
namespace {

uint64_t fnv1a(const Tensor& t) {
  uint64_t h = 1469598103934665603ULL;
  const auto* p = static_cast<const unsigned char*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

std::string element(const Tensor& t, int64_t i) {
  DataType d = t.dtype();
  const char* base = static_cast<const char*>(t.data());
  auto at = [&](auto tag) {
    using T = decltype(tag);
    return *reinterpret_cast<const T*>(base + i * static_cast<int64_t>(sizeof(T)));
  };
  if (d == DataType::float32()) return python_float_repr(at(float{}));
  if (d == DataType::float64()) return python_float_repr(at(double{}));
  if (d == DataType::float16()) return python_float_repr(ir::half_bits_to_double(at(uint16_t{})));
  if (d == DataType::int64()) return std::to_string(at(int64_t{}));
  if (d == DataType::int32()) return std::to_string(at(int32_t{}));
  if (d == DataType::int16()) return std::to_string(at(int16_t{}));
  if (d == DataType::int8()) return std::to_string(at(int8_t{}));
  if (d == DataType::uint8()) return std::to_string(at(uint8_t{}));
  if (d == DataType::boolean()) return at(uint8_t{}) ? "True" : "False";
  return "?";
}

class Printer {
 public:
  explicit Printer(const PrintOptions& o) : options_(o) {}

  void function(const Function& f, const std::string& name) {
    os_ << "def @" << name << "(";
    for (size_t i = 0; i < f.params().size(); ++i) {
      const Var& p = f.params()[i];
      os_ << (i ? ", " : "") << "%" << bind_name(p) << ": " << to_string(p.type());
    }
    os_ << ") -> " << to_string(f.result().type()) << " {\n";
    for (const Binding& b : f.bindings()) {
      std::string value = expr(b.value);
      os_ << "  %" << bind_name(b.var) << ": " << to_string(b.var.type()) << " = " << value << "\n";
    }
    os_ << "  return " << expr(f.result()) << "\n}\n";
  }

  void constants() {
    for (size_t i = 0; i < constants_.size(); ++i) {
      const Tensor& t = constants_[i];
      os_ << "const[" << i << "]: " << to_string(Type::tensor(t.shape(), t.dtype())) << " = ";
      int64_t n = t.numel();
      if (options_.max_constant_values >= 0 && n > options_.max_constant_values) {
        std::ostringstream h;
        h << std::hex << fnv1a(t);
        os_ << "<" << n << " values, fnv1a 0x" << h.str() << ">\n";
        continue;
      }
      os_ << (t.ndim() == 0 ? "" : "[");
      for (int64_t k = 0; k < n; ++k) os_ << (k ? ", " : "") << element(t, k);
      os_ << (t.ndim() == 0 ? "" : "]") << "\n";
    }
  }

  std::string expr(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kVar: return "%" + use_name(*e.as<VarNode>());
      case ExprKind::kConstant: return "const[" + std::to_string(constant_index(e.as<ConstantNode>()->data())) + "]";
      case ExprKind::kShapeExpr: {
        std::string s = "shape(";
        const auto& v = e.as<ShapeExprNode>()->values();
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + ir::to_string(v[i]);
        return s + ")";
      }
      case ExprKind::kTuple: {
        std::string s = "(";
        const auto& f = e.as<TupleNode>()->fields();
        for (size_t i = 0; i < f.size(); ++i) s += (i ? ", " : "") + expr(f[i]);
        return s + (f.size() == 1 ? ",)" : ")");
      }
      case ExprKind::kTupleGetItem: {
        const auto* g = e.as<TupleGetItemNode>();
        return expr(g->tuple()) + "." + std::to_string(g->index());
      }
      case ExprKind::kCall: {
        const auto* c = e.as<CallNode>();
        std::string s = c->op() + "(";
        bool first = true;
        for (const Expr& a : c->args()) {
          s += (first ? "" : ", ") + expr(a);
          first = false;
        }
        for (const auto& [k, v] : c->attrs()) {
          s += (first ? "" : ", ") + k + "=" + to_string(v);
          first = false;
        }
        return s + ")";
      }
    }
    return "?";
  }

  std::string str() const { return os_.str(); }

 private:
  std::string bind_name(const Var& v) {
    std::string base = v.name().empty() ? "v" : v.name();
    std::string n = base;
    for (int k = 1; used_.count(n); ++k) n = base + "_" + std::to_string(k);
    used_.insert(n);
    names_[v.get()] = n;
    return n;
  }
  std::string use_name(const VarNode& v) {
    auto it = names_.find(&v);
    if (it != names_.end()) return it->second;
    return v.name() + "<unbound>";  // the verifier reports it; the printer shows it
  }
  size_t constant_index(const Tensor& t) {
    for (size_t i = 0; i < constants_.size(); ++i)
      if (constants_[i].same_as(t)) return i;
    constants_.push_back(t);
    return constants_.size() - 1;
  }

  PrintOptions options_;
  std::ostringstream os_;
  std::map<const ExprNode*, std::string> names_;
  std::set<std::string> used_;
  std::vector<Tensor> constants_;
};

}  // namespace

std::string to_string(const IRModule& mod, const PrintOptions& options) {
  Printer p(options);
  for (const auto& [name, f] : mod.functions) p.function(f, name);  // constants numbered across them
  p.constants();
  std::string out = p.str();
  if (options.print_prim_funcs)
    for (const auto& [name, f] : mod.prim_funcs) out += "\n" + tir::to_string(f) + "\n";
  return out;
}

std::string to_string(const Function& f, const std::string& name, const PrintOptions& options) {
  Printer p(options);
  p.function(f, name);
  p.constants();
  return p.str();
}

std::string to_string(const Expr& e) {
  Printer p(PrintOptions{});
  return p.expr(e);
}

}  // namespace anvil::graph
