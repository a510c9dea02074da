// The interpreter: straight-line code, loops, recursion, closures, kernels from a library,
// the stateful interface, saved functions, errors and the instrument hook.
#include "anvil/runtime/vm/vm.h"

#include <gtest/gtest.h>

#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/test_util.h"
#include "anvil/runtime/vm/exec_builder.h"

namespace anvil::vm {
namespace {

class VMTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    register_function("test.vm.add", [](int64_t a, int64_t b) { return a + b; }, true);
    register_function("test.vm.mul", [](int64_t a, int64_t b) { return a * b; }, true);
    register_function("test.vm.lt", [](int64_t a, int64_t b) { return a < b; }, true);
    register_function("test.vm.le", [](int64_t a, int64_t b) { return a <= b; }, true);
  }
  static VirtualMachine make_vm(const Executable& exe) { return VirtualMachine::create(exe.as_module()); }
};

TEST_F(VMTest, StraightLineCalls) {
  ExecBuilder b;
  b.begin_function("main", {"x", "y"});
  b.emit_call("test.vm.add", {Arg::reg(0), Arg::reg(1)}, 2);
  b.emit_call("test.vm.mul", {Arg::reg(2), Arg::imm(10)}, 3);
  b.emit_call("test.vm.add", {Arg::reg(3), Arg::constant(b.add_constant(Value(int64_t{1} << 60)))}, 4);
  b.emit_ret(4);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  EXPECT_EQ(vm["main"](3, 4).as_int(), 70 + (int64_t{1} << 60));
}

// sum(n) = 0 + 1 + ... + (n - 1), as a loop:  i = 0; s = 0; while (i < n) { s += i; i += 1 }
Executable loop_program() {
  ExecBuilder b;
  b.begin_function("sum", {"n"});
  b.emit_call("test.vm.add", {Arg::imm(0), Arg::imm(0)}, 1);  // i
  b.emit_call("test.vm.add", {Arg::imm(0), Arg::imm(0)}, 2);  // s
  int64_t head = b.emit_call("test.vm.lt", {Arg::reg(1), Arg::reg(0)}, 3);
  int64_t branch = b.emit_if(3, 0);
  b.emit_call("test.vm.add", {Arg::reg(2), Arg::reg(1)}, 2);
  b.emit_call("test.vm.add", {Arg::reg(1), Arg::imm(1)}, 1);
  int64_t back = b.emit_goto(0);
  b.patch_jump(back, head - back);
  b.patch_jump(branch, b.next_instr() - branch);
  b.emit_ret(2);
  b.end_function();
  return b.get();
}

TEST_F(VMTest, LoopsThroughIfAndGoto) {
  VirtualMachine vm = make_vm(loop_program());
  for (int64_t n : {0, 1, 5, 1000}) EXPECT_EQ(vm["sum"](n).as_int(), n * (n - 1) / 2) << n;
}

TEST_F(VMTest, RecursionThroughVMFunctions) {
  // fact(n) = n <= 1 ? 1 : n * fact(n - 1)
  ExecBuilder b;
  b.declare_function("fact", {"n"});
  b.begin_function("fact", {"n"});
  b.emit_call("test.vm.le", {Arg::reg(0), Arg::imm(1)}, 1);
  int64_t branch = b.emit_if(1, 0);
  b.emit_call("test.vm.add", {Arg::imm(1), Arg::imm(0)}, 2);
  b.emit_ret(2);
  b.patch_jump(branch, b.next_instr() - branch);
  b.emit_call("test.vm.add", {Arg::reg(0), Arg::imm(-1)}, 3);
  b.emit_call("fact", {Arg::reg(3)}, 4);
  b.emit_call("test.vm.mul", {Arg::reg(0), Arg::reg(4)}, 5);
  b.emit_ret(5);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  EXPECT_EQ(vm["fact"](1).as_int(), 1);
  EXPECT_EQ(vm["fact"](10).as_int(), 3628800);
  EXPECT_EQ(vm["fact"](20).as_int(), 2432902008176640000);
}

TEST_F(VMTest, ClosuresCapturedAndInvoked) {
  // main returns the function value f[add3]; the host invokes it through invoke_closure.
  ExecBuilder b;
  int64_t add3 = b.declare_function("add3", {"a", "b", "c"});
  b.begin_function("add3", {"a", "b", "c"});
  b.emit_call("test.vm.add", {Arg::reg(0), Arg::reg(1)}, 3);
  b.emit_call("test.vm.add", {Arg::reg(3), Arg::reg(2)}, 4);
  b.emit_ret(4);
  b.end_function();
  b.begin_function("get", {});
  b.emit_call("testing.echo", {Arg::func(add3)}, 0);
  b.emit_ret(0);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  Value closure = vm["get"]();
  EXPECT_EQ(vm["invoke_closure"](closure, 1, 2, 3).as_int(), 6);
  // A closure with captured trailing arguments.
  auto bound = make_object<ClosureNode>();
  bound->name = "add3_bound";
  bound->func_index = add3;
  bound->captured = {Value(100)};
  EXPECT_EQ(vm->invoke_closure(Value::object(bound), std::vector<Value>{Value(1), Value(2)}).as_int(), 103);
}

TEST_F(VMTest, CallsKernelsFromAnImportedLibrary) {
  Module lib = Module::load_from_file(ANVIL_TEST_KERNELS);
  ExecBuilder b;
  b.begin_function("main", {"a", "b", "out"});
  b.emit_call("vector_add", {Arg::reg(0), Arg::reg(1), Arg::reg(2)});
  b.emit_call("vector_add", {Arg::reg(2), Arg::reg(2), Arg::reg(2)});  // out = 2 * (a + b)
  b.emit_ret(2);
  b.end_function();
  Executable exe = b.get();
  exe.as_module().import_module(lib);
  VirtualMachine vm = make_vm(exe);
  Tensor a = testing::random_float_tensor({4096}), c = testing::random_float_tensor({4096});
  Tensor out = Tensor::empty({4096}, DataType::float32());
  Tensor result = vm["main"](a, c, out).as_tensor();
  EXPECT_TRUE(result.same_as(out));
  for (int i = 0; i < 4096; ++i) {
    float expect = 2 * (static_cast<float*>(a.data())[i] + static_cast<float*>(c.data())[i]);
    ASSERT_FLOAT_EQ(static_cast<float*>(out.data())[i], expect);
  }
}

TEST_F(VMTest, StatefulInterfaceAndSavedFunctions) {
  VirtualMachine vm = make_vm(loop_program());
  vm["set_input"]("sum", 10);
  EXPECT_EQ(vm["invoke_stateful"]("sum").as_int(), 45);
  EXPECT_EQ(vm["get_output"]("sum").as_int(), 45);
  EXPECT_THROW(vm["get_output"]("nope"), Error);
  vm["save_function"]("sum", "sum_of_100", 100);
  EXPECT_EQ(vm["sum_of_100"]().as_int(), 4950);
  EXPECT_EQ(vm["get_function_arity"]("sum").as_int(), 1);
  EXPECT_EQ(vm["get_function_param_name"]("sum", 0).as_string(), "n");
}

TEST_F(VMTest, ErrorsNameTheFunctionAndTheCallSite) {
  VirtualMachine vm = make_vm(loop_program());
  try {
    vm["sum"](1, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_NE(std::string(e.what()).find("vm function 'sum' takes 1 argument (n) but got 2"), std::string::npos)
        << e.what();
  }
  try {
    vm["sum"]("ten");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    std::string msg = e.what();
    EXPECT_NE(msg.find("expected int but got string"), std::string::npos) << msg;
    EXPECT_NE(msg.find("in vm function 'sum', instruction 2: call @test.vm.lt"), std::string::npos) << msg;
  }
  ExecBuilder b;
  b.begin_function("main", {});
  b.emit_call("no.such.function", {}, 0);
  b.emit_ret(0);
  b.end_function();
  try {
    make_vm(b.get());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot find function 'no.such.function'"), std::string::npos);
  }
}

TEST_F(VMTest, InstrumentSeesEveryCall) {
  VirtualMachine vm = make_vm(loop_program());
  int before = 0, after = 0;
  vm->set_instrument([&](const CallEvent& e) {
    (e.before ? before : after)++;
    if (!e.before) {
      EXPECT_NE(e.result, nullptr);
    }
    EXPECT_EQ(e.caller->name, "sum");
  });
  EXPECT_EQ(vm["sum"](3).as_int(), 3);
  EXPECT_EQ(before, after);
  EXPECT_EQ(before, 2 + 4 + 3 * 2);  // init, 4 compares, 3 iterations of 2 adds
}

TEST_F(VMTest, RunawayRecursionIsStopped) {
  ExecBuilder b;
  b.declare_function("forever", {"n"});
  b.begin_function("forever", {"n"});
  b.emit_call("forever", {Arg::reg(0)}, 1);
  b.emit_ret(1);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  EXPECT_THROW(vm["forever"](1), Error);
  EXPECT_EQ(vm["get_function_arity"]("forever").as_int(), 1);  // the VM still works afterwards
}

TEST_F(VMTest, MemoryConfigParsing) {
  EXPECT_EQ(MemoryConfig::parse("naive").default_kind, AllocatorKind::kNaive);
  MemoryConfig c = MemoryConfig::parse("cpu:naive,vulkan:pooled");
  EXPECT_EQ(c.per_device_type.at(kDLCPU), AllocatorKind::kNaive);
  EXPECT_EQ(c.per_device_type.at(kDLVulkan), AllocatorKind::kPooled);
  EXPECT_THROW(MemoryConfig::parse("cpu:arena"), Error);
  EXPECT_THROW(MemoryConfig::parse("gpu0"), Error);
}

}  // namespace
}  // namespace anvil::vm
