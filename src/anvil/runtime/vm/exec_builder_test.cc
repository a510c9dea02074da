// ExecBuilder: programs are checked when built — arity, registers, jumps, constants.
#include "anvil/runtime/vm/exec_builder.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"

namespace anvil::vm {
namespace {

void expect_build_error(const std::function<void()>& build, const std::string& fragment) {
  try {
    build();
    FAIL() << "expected an error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ArgEncoding, RoundTripsEveryKindAndSign) {
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, kMaxImmediate, -kMaxImmediate, kVoidRegister, kVMRegister}) {
    for (ArgKind k : {ArgKind::kRegister, ArgKind::kImmediate, ArgKind::kConstant, ArgKind::kFunction}) {
      Arg a = Arg::decode(Arg{k, v}.encode());
      EXPECT_EQ(a.kind, k);
      EXPECT_EQ(a.value, v);
    }
  }
}

TEST(ExecBuilder, BuildsAndPrintsAProgram) {
  ExecBuilder b;
  b.begin_function("main", {"x", "y"});
  int64_t c = b.add_constant(Value("hello"));
  EXPECT_EQ(b.add_constant(Value("hello")), c);  // strings are shared
  b.emit_call("test.concat", {Arg::reg(0), Arg::constant(c), Arg::imm(7)}, 2);
  b.emit_ret(2);
  b.end_function();
  Executable exe = b.get();
  EXPECT_EQ(exe->func_table.size(), 2u);
  EXPECT_EQ(exe->func_table[0].register_file_size, 3);
  std::string text = exe->as_text();
  EXPECT_NE(text.find("@main(x, y)"), std::string::npos) << text;
  EXPECT_NE(text.find("call @test.concat in: %0, c[0], i7 dst: %2"), std::string::npos) << text;
  EXPECT_NE(text.find("ret %2"), std::string::npos) << text;
  EXPECT_NE(exe->stats().find("1 VM functions"), std::string::npos);
}

TEST(ExecBuilder, CatchesArityErrorsAtEmit) {
  ExecBuilder b;
  b.declare_function("helper", {"a", "b"});
  b.begin_function("main", {"x"});
  expect_build_error([&] { b.emit_call("helper", {Arg::reg(0)}, 1); }, "call to 'helper' with 1 arguments, but it takes 2");
}

TEST(ExecBuilder, CatchesUndefinedRegisters) {
  ExecBuilder b;
  b.begin_function("main", {"x"});
  b.emit_call("f", {Arg::reg(0), Arg::reg(5)}, 1);
  b.emit_ret(1);
  expect_build_error([&] { b.end_function(); }, "register %5 is read but never written");
}

TEST(ExecBuilder, CatchesBadJumps) {
  {
    ExecBuilder b;
    b.begin_function("main", {"x"});
    b.emit_goto(5);
    b.end_function();
    expect_build_error([&] { b.get(); }, "goto offset 5 leaves the function");
  }
  {
    ExecBuilder b;
    b.begin_function("main", {"x"});
    b.emit_if(0, 1);
    b.emit_ret(0);
    b.end_function();
    expect_build_error([&] { b.get(); }, "if false-offset 1");
  }
  {
    ExecBuilder b;
    b.begin_function("main", {"x"});
    b.emit_call("f", {Arg::reg(0)}, 1);
    b.end_function();
    expect_build_error([&] { b.get(); }, "does not end with ret or goto");
  }
}

TEST(ExecBuilder, CatchesMisuse) {
  ExecBuilder b;
  expect_build_error([&] { b.emit_ret(0); }, "outside a function");
  b.begin_function("main", {"x"});
  expect_build_error([&] { b.begin_function("other", {}); }, "still open");
  expect_build_error([&] { b.emit_call("f", {Arg::constant(3)}, 1); }, "constant index 3");
  expect_build_error([&] { b.emit_call("f", {Arg::imm(kMaxImmediate + 1)}, 1); }, "does not fit in 56 bits");
  EXPECT_EQ(b.int_arg(kMaxImmediate + 1).kind, ArgKind::kConstant);
  expect_build_error([&] { b.emit_call("f", {}, kVMRegister); }, "cannot be written");
  b.emit_ret(0);
  b.end_function();
  b.declare_function("never", {});
  expect_build_error([&] { b.get(); }, "never given a body");
}

TEST(ExecBuilder, PatchesForwardJumps) {
  ExecBuilder b;
  b.begin_function("main", {"c"});
  int64_t branch = b.emit_if(0, 99);
  b.emit_ret(0);
  b.patch_jump(branch, b.next_instr() - branch);
  b.emit_ret(0);
  b.end_function();
  Executable exe = b.get();
  EXPECT_EQ(exe->instruction(branch)[2], 2);
}

}  // namespace
}  // namespace anvil::vm
