// Interpreter overhead of the VM: nanoseconds per Call instruction for a chain of trivial calls
// (a no-op packed function, then the vm.builtin.copy builtin), per instruction of a counting
// loop, and per invocation of an empty function — against the baseline of calling the same
// no-op Function from a plain C++ loop. The VM's own cost per call is the difference.
// Prints a table and, as its last line, one line of JSON (bench/vm_bench.py adds the figures
// seen from Python and prints the combined line).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/vm/exec_builder.h"
#include "anvil/runtime/vm/vm.h"

namespace {

using anvil::bench::cpu_model;
using anvil::bench::json_escape;

using namespace anvil;
using vm::Arg;

struct Options {
  int repeats = 11;
  int chain = 1000;        // calls per chain
  int invocations = 200;   // chain invocations per repeat
};

struct Stats {
  double median = 0, min = 0, max = 0;
};

void print_help(const char* program) {
  std::printf(
      "usage: %s [--repeats N] [--chain N] [--invocations N]\n"
      "Measures the VM's interpreter overhead in nanoseconds per call.\n"
      "  --repeats N      timed repeats per case; the table reports their median (default 11)\n"
      "  --chain N        trivial calls in the chain function (default 1000)\n"
      "  --invocations N  chain invocations per repeat (default 200)\n"
      "  --help           this text\n"
      "The last line of output is one JSON object with the headline figures.\n",
      program);
}

Options parse_options(int argc, char** argv) {
  Options o;
  anvil::bench::parse_int_flags(
      argc, argv, {{"--repeats", &o.repeats}, {"--chain", &o.chain}, {"--invocations", &o.invocations}}, print_help);
  return o;
}

// Runs `body` (which performs `units` units of work) once to warm up, then `repeats` times;
// nanoseconds per unit.
Stats measure(int repeats, double units, const std::function<void()>& body) {
  body();
  std::vector<double> per_unit;
  for (int r = 0; r < repeats; ++r) {
    auto begin = std::chrono::steady_clock::now();
    body();
    auto elapsed = std::chrono::steady_clock::now() - begin;
    per_unit.push_back(std::chrono::duration<double, std::nano>(elapsed).count() / units);
  }
  std::sort(per_unit.begin(), per_unit.end());
  return {per_unit[per_unit.size() / 2], per_unit.front(), per_unit.back()};
}

// chain(x): `n` calls of `callee`(x) into %1, then ret %1.
void emit_chain(vm::ExecBuilder& b, const std::string& name, const std::string& callee, int n) {
  b.begin_function(name, {"x"});
  for (int i = 0; i < n; ++i) b.emit_call(callee, {Arg::reg(0)}, 1);
  b.emit_ret(1);
  b.end_function();
}

// loop(n): for (i = 0; i < n; ++i) nop(i) — per iteration lt, if, nop, add, goto.
void emit_loop(vm::ExecBuilder& b) {
  b.begin_function("loop", {"n"});
  b.emit_call("vm.builtin.copy", {Arg::imm(0)}, 1);
  int64_t head = b.emit_call("vm.builtin.lt", {Arg::reg(1), Arg::reg(0)}, 2);
  int64_t branch = b.emit_if(2, 2);
  b.emit_call("bench.vm.nop", {Arg::reg(1)}, 3);
  b.emit_call("vm.builtin.add", {Arg::reg(1), Arg::imm(1)}, 1);
  int64_t back = b.emit_goto(-1);
  b.patch_jump(back, head - back);
  b.patch_jump(branch, b.next_instr() - branch);
  b.emit_ret(1);
  b.end_function();
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  register_runtime_functions();
  // The no-op: no argument checks, no result, so only calling it costs anything.
  register_packed("bench.vm.nop", [](Args) -> Value { return Value(); }, true);

  vm::ExecBuilder b;
  emit_chain(b, "main", "bench.vm.nop", o.chain);
  emit_chain(b, "copies", "vm.builtin.copy", o.chain);
  emit_loop(b);
  b.begin_function("empty", {"x"});
  b.emit_ret(0);
  b.end_function();
  vm::VirtualMachine machine = vm::VirtualMachine::create(b.get().as_module());
  vm::VirtualMachineNode* node = machine.get();

  Tensor x = Tensor::empty({1}, DataType::float32());
  std::vector<Value> args{Value(x)};
  Function nop = Registry::get("bench.vm.nop");
  const double calls = static_cast<double>(o.chain) * o.invocations;
  const int64_t loop_iterations = o.chain;
  const double loop_instructions = (5.0 * loop_iterations + 4) * o.invocations;  // + init, last lt/if, ret

  struct Row {
    const char* name;
    const char* unit;
    Stats stats;
  };
  std::vector<Row> rows;
  rows.push_back({"direct C++ loop, no-op Function (baseline)", "ns/call", measure(o.repeats, calls, [&] {
                    for (int k = 0; k < o.invocations; ++k)
                      for (int i = 0; i < o.chain; ++i) nop.call(args);
                  })});
  rows.push_back({"VM chain of no-op calls", "ns/call", measure(o.repeats, calls, [&] {
                    for (int k = 0; k < o.invocations; ++k) node->invoke("main", args);
                  })});
  rows.push_back({"VM chain of vm.builtin.copy", "ns/call", measure(o.repeats, calls, [&] {
                    for (int k = 0; k < o.invocations; ++k) node->invoke("copies", args);
                  })});
  std::vector<Value> loop_args{Value(loop_iterations)};
  rows.push_back({"VM counting loop (lt/if/nop/add/goto)", "ns/instr", measure(o.repeats, loop_instructions, [&] {
                    for (int k = 0; k < o.invocations; ++k) node->invoke("loop", loop_args);
                  })});
  const int empty_invocations = o.invocations * o.chain;
  rows.push_back({"VM invoke of an empty function", "ns/invoke", measure(o.repeats, empty_invocations, [&] {
                    for (int k = 0; k < empty_invocations; ++k) node->invoke("empty", args);
                  })});

  std::string machine_name = cpu_model();
  std::printf("VM interpreter overhead\n");
  std::printf("machine: %s\n", machine_name.c_str());
  std::printf("%d repeats x %d invocations of a %d-call chain per case (one tensor argument per call)\n\n",
              o.repeats, o.invocations, o.chain);
  std::printf("%-44s %-10s %10s %10s %10s\n", "case", "unit", "median", "min", "max");
  for (const Row& r : rows)
    std::printf("%-44s %-10s %10.1f %10.1f %10.1f\n", r.name, r.unit, r.stats.median, r.stats.min, r.stats.max);
  double overhead = rows[1].stats.median - rows[0].stats.median;
  std::printf("\nVM overhead per call (chain - baseline): %.1f ns\n\n", overhead);
  std::printf(
      "{\"bench\": \"vm\", \"machine\": \"%s\", \"repeats\": %d, \"chain_length\": %d, \"invocations\": %d, "
      "\"ns_per_call_cpp\": %.1f, \"ns_per_call_cpp_min\": %.1f, \"ns_per_call_baseline\": %.1f, "
      "\"vm_overhead_ns_per_call\": %.1f, \"ns_per_builtin_copy\": %.1f, \"ns_per_instruction_loop\": %.1f, "
      "\"ns_per_invoke_empty\": %.1f}\n",
      json_escape(machine_name).c_str(), o.repeats, o.chain, o.invocations, rows[1].stats.median, rows[1].stats.min,
      rows[0].stats.median, overhead, rows[2].stats.median, rows[3].stats.median, rows[4].stats.median);
  return 0;
}
