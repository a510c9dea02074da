// Python's repr of a float, for text that Python users and TVM's Python tools compare with
// what Python itself prints (the tracker's JSON, the RPC test helpers' str()).
#pragma once

#include <string>

namespace anvil {

// repr(value) as CPython writes it: the shortest digits that read back as the same double,
// positional for decimal exponents in [-4, 16) ("0.1", "1.0", "1000000000000000.0"),
// otherwise d.ddde+XX ("1e+16", "1.5e-05"); "inf", "-inf", "nan".
std::string python_float_repr(double value);

}  // namespace anvil
