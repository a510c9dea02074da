// Well-formedness checks.
#include "anvil/tir/verify.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::tir {
namespace {

using ir::buffer_load;
using ir::decl_buffer;

TEST(Verify, WellFormedFunctionHasNoErrors) {
  Var n = ir::size_var("n"), i("i"), x("x", DataType::float32());
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  Var t("T", ir::handle_type());
  Buffer T = Buffer::make(t, DataType::float32(), {1}, {}, {}, "T", 64, "local");
  Stmt body = seq({make_for(i, 0, n, let_stmt(x, buffer_load(A, {i}), buffer_store(A, x + 1, {i}))),
                   make_for(i, 0, n, allocate(t, DataType::float32(), {1}, "local", buffer_store(T, 0, {0})))});
  EXPECT_TRUE(well_formed_errors(make_prim_func("ok", {A}, body)).empty());
}

TEST(Verify, UseOutsideScopeAndRedefinitionAreReported) {
  Var n = ir::size_var("n"), i("i"), j("j");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  Buffer Stray = decl_buffer({4}, DataType::float32(), "Stray");
  Stmt body = seq({make_for(i, 0, n, make_for(i, 0, 2, buffer_store(A, 0, {i}))),  // i redefined
                   buffer_store(A, 1, {j}),                                        // j never defined
                   buffer_store(Stray, 1, {0})});                                  // Stray's memory unknown
  PrimFunc f = make_prim_func("bad", {A}, body);
  std::vector<std::string> errors = well_formed_errors(f);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_NE(errors[0].find("'i' is defined again"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("'j' is used outside"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("buffer Stray"), std::string::npos) << errors[2];
  try {
    check_well_formed(f, "test_pass");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find("after test_pass"), std::string::npos);
  }
}

}  // namespace
}  // namespace anvil::tir
