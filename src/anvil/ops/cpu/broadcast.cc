// Broadcast indexing, dtype conversion and the generic elementwise stage.
#include "anvil/ops/cpu/broadcast.h"

#include "anvil/ir/expr_ops.h"

namespace anvil::ops {

std::vector<ir::PrimExpr> broadcast_index(const te::Tensor& in, const std::vector<ir::Var>& idx) {
  int r = in.ndim(), n = static_cast<int>(idx.size());
  std::vector<ir::PrimExpr> out;
  for (int d = 0; d < r; ++d) {
    std::optional<int64_t> c = ir::as_const_int(in.shape()[d]);
    int od = n - r + d;  // the output axis this input axis aligns with
    if ((c && *c == 1) || od < 0) out.push_back(ir::int_imm(0));
    else out.push_back(idx[od]);
  }
  return out;
}

bool is_half(ir::DataType t) { return t.is_float() && t.bits() == 16; }

ir::DataType compute_dtype(ir::DataType t) { return is_half(t) ? ir::DataType::float32() : t; }

ir::PrimExpr convert(ir::DataType to, const ir::PrimExpr& x) {
  ir::DataType from = x.dtype();
  if (from == to) return x;
  if (to.is_bool()) return ir::ne(x, ir::make_zero(from));
  if (from.is_bool()) return ir::select(x, ir::make_const(to, 1), ir::make_zero(to));
  // Half floats convert through float32 only: the JIT resolves the float32 <-> half helpers, not
  // the others compiler-rt has (__truncdfhf2 for float64 -> float16 was missing at link).
  ir::DataType f32 = ir::DataType::float32();
  if ((is_half(from) && to != f32) || (is_half(to) && from != f32)) return ir::cast(to, ir::cast(f32, x));
  return ir::cast(to, x);
}

te::Tensor elementwise(const std::vector<te::Tensor>& inputs, const std::vector<ir::PrimExpr>& out_shape,
                       ir::DataType out_dtype, const ScalarFn& f, const std::string& name) {
  return te::compute(
      out_shape,
      [&](const std::vector<ir::Var>& idx) {
        std::vector<ir::PrimExpr> values;
        for (const te::Tensor& in : inputs) {
          ir::PrimExpr v = in(broadcast_index(in, idx));
          values.push_back(convert(compute_dtype(in.dtype()), v));
        }
        return convert(out_dtype, f(values));
      },
      name);
}

}  // namespace anvil::ops
