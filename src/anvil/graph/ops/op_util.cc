// Shared type-inference helpers.
#include "anvil/graph/ops/op_util.h"

#include <algorithm>

#include "anvil/base/error.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"

namespace anvil::graph::ops {
namespace {

bool is_one(const PrimExpr& d) {
  std::optional<int64_t> c = ir::as_const_int(d);
  return c && *c == 1;
}

std::string shape_str(const std::vector<PrimExpr>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + ir::to_string(s[i]);
  return out + ")";
}

}  // namespace

const Type& tensor_arg(const CallNode& call, size_t i, bool require_rank) {
  if (i >= call.args().size()) type_error("argument ", i, " is missing");
  const Type& t = call.args()[i].type();
  if (!t.is_tensor()) type_error("argument ", i, " is ", to_string(t), ", expected a tensor");
  if (require_rank && !t.has_rank()) type_error("argument ", i, " is ", to_string(t), ", expected a tensor of known rank");
  return t;
}

const std::vector<PrimExpr>& shape_arg(const CallNode& call, size_t i) {
  if (i >= call.args().size()) type_error("argument ", i, " is missing");
  const auto* s = call.args()[i].as<ShapeExprNode>();
  if (s != nullptr) return s->values();
  // A Shape-typed value whose type knows its values (a run-time tensor_to_shape's fresh Vars).
  if (const std::vector<PrimExpr>* v = call.args()[i].type().shape_values()) return *v;
  type_error("argument ", i, " is ", to_string(call.args()[i].type()), ", expected a shape value of known values");
}

std::vector<PrimExpr> broadcast_shapes(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<PrimExpr> out(n);
  for (size_t k = 0; k < n; ++k) {
    // k counts from the right.
    const PrimExpr* da = k < a.size() ? &a[a.size() - 1 - k] : nullptr;
    const PrimExpr* db = k < b.size() ? &b[b.size() - 1 - k] : nullptr;
    PrimExpr r;
    if (da == nullptr) r = *db;
    else if (db == nullptr) r = *da;
    else if (is_one(*da)) r = *db;
    else if (is_one(*db)) r = *da;
    else if (ir::structural_equal(*da, *db)) r = *da;
    else {
      std::optional<int64_t> ca = ir::as_const_int(*da), cb = ir::as_const_int(*db);
      if (ca && cb) value_error("shapes ", shape_str(a), " and ", shape_str(b), " do not broadcast");
      r = ca ? *da : (cb ? *db : *da);  // a constant pins the symbolic one
    }
    out[n - 1 - k] = r;
  }
  return out;
}

int normalize_axis(int64_t axis, int ndim) {
  if (axis < -ndim || axis >= ndim) index_error("axis ", axis, " is out of range for rank ", ndim);
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int ndim) {
  std::vector<int> out;
  for (int64_t a : axes) {
    int x = normalize_axis(a, ndim);
    if (std::find(out.begin(), out.end(), x) != out.end()) value_error("axis ", a, " is repeated");
    out.push_back(x);
  }
  return out;
}

void check_same_dtype(const CallNode& call, size_t i, size_t j) {
  DataType a = tensor_arg(call, i, false).dtype(), b = tensor_arg(call, j, false).dtype();
  if (a != b) type_error("arguments ", i, " and ", j, " have dtypes ", a, " and ", b, ", expected the same");
}

}  // namespace anvil::graph::ops
