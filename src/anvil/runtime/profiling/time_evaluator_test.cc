// time_evaluator: seconds per call of a sleeping function, growth of `number` up to
// min_repeat_ms, repeat counts, the registered global and VM method, and argument errors.
// Bounds are loose on purpose: this checks the algorithm, not the machine's timer quality.
#include "anvil/runtime/profiling/time_evaluator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/vm/exec_builder.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil {
namespace {

std::atomic<int64_t> g_calls{0};

class TimeEvaluatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    // test.time_eval.sleep_us(us): sleeps, counts its calls.
    register_function("test.time_eval.sleep_us", [](int64_t us) {
      ++g_calls;
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    }, true);
    register_packed("test.time_eval.count", [](Args) -> Value { ++g_calls; return Value(); }, true);
  }
  void SetUp() override { g_calls = 0; }
  static Function sleeper() { return Registry::get("test.time_eval.sleep_us"); }
};

TEST_F(TimeEvaluatorTest, SleepingFunctionTakesAboutAMillisecond) {
  TimeEvaluatorOptions o;
  o.number = 3;
  o.repeat = 2;
  std::vector<Value> args{Value(1000)};
  std::vector<double> seconds = time_evaluate(sleeper(), args, Device::cpu(), o);
  ASSERT_EQ(seconds.size(), 2u);
  for (double s : seconds) {
    EXPECT_GE(s, 0.9e-3);
    EXPECT_LT(s, 20e-3);  // a loaded machine oversleeps, but not by 20x
  }
  EXPECT_EQ(g_calls.load(), 1 + 2 * 3);  // warm-up + repeat * number
}

TEST_F(TimeEvaluatorTest, RepeatCountIsRespected) {
  TimeEvaluatorOptions o;
  o.number = 5;
  o.repeat = 7;
  std::vector<double> seconds = time_evaluate(Registry::get("test.time_eval.count"), {}, Device::cpu(), o);
  EXPECT_EQ(seconds.size(), 7u);
  EXPECT_EQ(g_calls.load(), 1 + 7 * 5);
  for (double s : seconds) EXPECT_GE(s, 0.0);
}

TEST_F(TimeEvaluatorTest, MinRepeatMsGrowsNumber) {
  TimeEvaluatorOptions o;
  o.number = 1;
  o.repeat = 2;
  o.min_repeat_ms = 20;
  std::vector<Value> args{Value(1000)};
  auto begin = std::chrono::steady_clock::now();
  std::vector<double> seconds = time_evaluate(sleeper(), args, Device::cpu(), o);
  double elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  ASSERT_EQ(seconds.size(), 2u);
  // One call (~1 ms) is too short: number grows to about 21, so each repeat makes >= 20 calls.
  EXPECT_GE(g_calls.load(), 1 + 1 + 2 * 15);
  EXPECT_GE(elapsed_ms, 2 * 20.0);
  for (double s : seconds) {
    EXPECT_GE(s, 0.9e-3);
    EXPECT_LT(s, 20e-3);
  }
}

TEST_F(TimeEvaluatorTest, CacheFlushAndCooldownRun) {
  TimeEvaluatorOptions o;
  o.number = 2;
  o.repeat = 3;
  o.cache_flush_bytes = 1 << 20;
  o.cooldown_interval_ms = 1;
  o.repeats_to_cooldown = 2;
  std::vector<double> seconds = time_evaluate(Registry::get("test.time_eval.count"), {}, Device::cpu(), o);
  EXPECT_EQ(seconds.size(), 3u);
  EXPECT_EQ(g_calls.load(), 1 + 3 * 2);
}

TEST_F(TimeEvaluatorTest, MadeEvaluatorReturnsAnArrayOfFloats) {
  TimeEvaluatorOptions o;
  o.number = 2;
  o.repeat = 4;
  Function eval = make_time_evaluator(sleeper(), Device::cpu(), o);
  Value result = eval(200);
  ASSERT_EQ(result.kind(), ValueKind::kArray);
  ASSERT_EQ(result.as_array().size(), 4u);
  for (const Value& v : result.as_array()) {
    EXPECT_EQ(v.kind(), ValueKind::kFloat);
    EXPECT_GE(v.as_float(), 0.15e-3);
  }
}

TEST_F(TimeEvaluatorTest, ErrorsOfTheTimedFunctionPropagate) {
  Function eval = make_time_evaluator(sleeper(), Device::cpu(), {});
  EXPECT_THROW(eval("not an int"), Error);
  EXPECT_THROW(eval(), Error);
}

TEST_F(TimeEvaluatorTest, BadOptionsAreValueErrors) {
  auto expect_value_error = [&](TimeEvaluatorOptions o, const char* name) {
    try {
      make_time_evaluator(sleeper(), Device::cpu(), o);
      ADD_FAILURE() << "no error for bad " << name;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  TimeEvaluatorOptions o;
  o.number = 0;
  expect_value_error(o, "number");
  o = {};
  o.repeat = 0;
  expect_value_error(o, "repeat");
  o = {};
  o.min_repeat_ms = -1;
  expect_value_error(o, "min_repeat_ms");
  o = {};
  o.repeats_to_cooldown = 0;
  expect_value_error(o, "repeats_to_cooldown");
  o = {};
  o.cache_flush_bytes = -4;
  expect_value_error(o, "cache_flush_bytes");
  EXPECT_THROW(make_time_evaluator(Function(), Device::cpu(), {}), Error);
}

// A VM whose "main"(us) calls the sleeper once.
vm::VirtualMachine sleeping_vm() {
  vm::ExecBuilder b;
  b.begin_function("main", {"us"});
  b.emit_call("test.time_eval.sleep_us", {vm::Arg::reg(0)}, 1);
  b.emit_ret(1);
  b.end_function();
  return vm::VirtualMachine::create(b.get().as_module());
}

TEST_F(TimeEvaluatorTest, GlobalTimesAModuleFunction) {
  vm::VirtualMachine vm = sleeping_vm();
  Function make = Registry::get("runtime.time_evaluator");
  Function eval = make(vm.as_module(), "main", Device::cpu(), 2, 3).as_function();
  Value result = eval(500);
  ASSERT_EQ(result.as_array().size(), 3u);
  EXPECT_GE(result.as_array()[0].as_float(), 0.45e-3);
  EXPECT_EQ(g_calls.load(), 1 + 3 * 2);
}

TEST_F(TimeEvaluatorTest, VMMethodTimesInvokeStatefulAndSavedFunctions) {
  vm::VirtualMachine vm = sleeping_vm();
  // The TVM pattern: set_input, then time "invoke_stateful" with the function name.
  vm["set_input"]("main", 300);
  Function eval = vm["time_evaluator"]("invoke_stateful", Device::cpu(), 4, 2, 0).as_function();
  ASSERT_EQ(eval("main").as_array().size(), 2u);
  EXPECT_EQ(g_calls.load(), 1 + 2 * 4);
  // And save_function, then time the saved name with no arguments.
  g_calls = 0;
  vm["save_function"]("main", "main_saved", 300);
  Value seconds = vm["time_evaluator"]("main_saved", Device::cpu(), 1, 5).as_function()();
  EXPECT_EQ(seconds.as_array().size(), 5u);
  EXPECT_GE(seconds.as_array()[0].as_float(), 0.25e-3);
  EXPECT_EQ(g_calls.load(), 1 + 5);
}

TEST_F(TimeEvaluatorTest, GlobalRejectsBadArguments) {
  vm::VirtualMachine vm = sleeping_vm();
  Function make = Registry::get("runtime.time_evaluator");
  auto kind_of = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::kInternal;  // "no error" marker
  };
  EXPECT_EQ(kind_of([&] { make(vm.as_module(), "nope", Device::cpu()); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { make(vm.as_module(), 3, Device::cpu()); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { make(vm.as_module(), "main"); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { make(1, "main", Device::cpu()); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { make(vm.as_module(), "main", Device::cpu(), 0); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { make(vm.as_module(), "main", Device::cpu(), 1, -2); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { make(vm.as_module(), "main", Device::cpu(), "ten"); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { vm["time_evaluator"]("main", Device::cpu(), 1, 1, 0, 100, 0, 1, 0, 99); }),
            ErrorKind::kType);  // 11 arguments with the VM
}

}  // namespace
}  // namespace anvil
