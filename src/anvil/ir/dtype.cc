// IR data type helpers.
#include "anvil/ir/dtype.h"

namespace anvil::ir {

std::string dtype_name(DataType t) { return is_void(t) ? "void" : t.to_string(); }

bool int_fits(DataType t, int64_t value) {
  if (t.is_bool()) return value == 0 || value == 1;
  int bits = t.bits();
  if (t.is_int()) {
    if (bits >= 64) return true;
    int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
    return value >= lo && value <= hi;
  }
  if (t.is_uint()) {
    if (value < 0) return false;
    return bits >= 63 || value <= (int64_t{1} << bits) - 1;
  }
  return false;
}

}  // namespace anvil::ir
