// Error messages of typed function calls.
#include "anvil/runtime/function.h"

namespace anvil::detail {

void argument_error(const std::string& fn, size_t index, const Error& cause) {
  throw Error(cause.kind(), str_cat(fn.empty() ? std::string("function") : "function '" + fn + "'", ": argument ",
                                    index, ": ", cause.what()));
}

void arity_error(const std::string& fn, size_t expected, size_t got) {
  type_error(fn.empty() ? std::string("function") : "function '" + fn + "'", " expects ", expected,
             " argument", expected == 1 ? "" : "s", " but got ", got);
}

}  // namespace anvil::detail
