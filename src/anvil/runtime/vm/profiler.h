// The VM profiler: times every Call instruction of one run of a VM function and reports, per call
// site, how often the callee ran and for how long — as an aligned table, CSV, JSON or a Chrome
// trace (chrome://tracing, Perfetto). It is what TVM's VirtualMachineProfiler offered
// (`vm.profile(func_name, *args)`), built on the interpreter's instrument hook.
//
// What is timed. One warm-up run, then one instrumented run. Around each Call the profiler syncs
// the devices of the call's tensors (arguments and result) and reads steady_clock, so device work
// is charged to the call that queued it.
//
// Nesting. Only calls of packed functions (kernels, builtins, registered functions) are rows;
// calls of VM functions are frames, not rows: their time is already the sum of the calls inside
// them plus interpreter overhead. A packed call that runs VM code itself (vm.builtin.invoke_closure)
// is charged its exclusive time — its duration minus that of the packed calls nested in it — so
// recursion and closures never count the same microsecond twice, and the "Total" row (the sum
// of the rows) never exceeds the wall time of the run. The Chrome trace shows every call,
// VM functions included, with inclusive durations, nested as they ran.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/runtime/object.h"
#include "anvil/runtime/value.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil::vm {

inline constexpr const char* kProfileReportTypeKey = "vm.ProfileReport";

// One executed Call instruction.
struct CallRecord {
  std::string callee;
  std::string caller;          // the VM function holding the instruction
  int64_t instr = 0;           // index of the instruction within `caller`
  bool is_vm_function = false;
  int depth = 0;               // nesting depth, 0 for calls made by the profiled function
  double start_us = 0;         // since the instrumented run began
  double duration_us = 0;      // inclusive
  double exclusive_us = 0;     // packed calls: minus the packed calls nested in it
  std::string arg_shapes;      // "float32[4, 16], int64[2]" (tensor arguments only)
  std::string devices;         // "cpu:0" ("-" when no tensor is involved)
};

// One row of the report: the packed calls of one call site.
struct ProfileRow {
  std::string name;            // the callee
  std::string call_site;       // "main:3" (function:instruction index)
  int64_t calls = 0;
  double total_us = 0;         // sum of exclusive times
  double mean_us = 0;
  double percent = 0;          // of the report's total
  std::string devices;
  std::string arg_shapes;      // "(varies)" when calls at the site saw different shapes
};

class ProfileReportNode final : public Object {
 public:
  std::string_view type_key() const override { return kProfileReportTypeKey; }

  // Columns: Name, Call Site, Calls, Total (us), Mean (us), Percent, Device, Argument Shapes;
  // rows by total time, then a Total row, then the wall time of the run.
  std::string table() const;
  // The same columns, one line per row, RFC 4180 quoting; no Total row.
  std::string csv() const;
  // {"traceEvents": [{"name", "cat", "ph": "X", "ts", "dur", "pid", "tid", "args"}, ...]}; µs.
  std::string chrome_trace() const;
  // {"function", "wall_us", "total_us", "num_calls", "rows": [{"name", "call_site", "calls",
  //  "total_us", "mean_us", "percent", "device", "argument_shapes"}, ...]}
  std::string json() const;

  double total_us() const;  // sum of the rows

  std::string function;             // the profiled VM function
  double wall_us = 0;               // the instrumented run, end to end
  std::vector<CallRecord> records;  // every call, in the order they started
  std::vector<ProfileRow> rows;     // by total time, descending
};

// Profiles `vm->invoke(func_name, args)`. With no `args` for a VM function that takes some, the
// inputs stored by set_input are used (invoke_stateful), as in TVM. Replaces any instrument the
// VM had (the VM offers no way to read it back) and leaves none installed afterwards. Errors of
// the run propagate; ValueError for an unknown function.
Ref<ProfileReportNode> profile(VirtualMachineNode* vm, const std::string& func_name, Args args);

// The report inside `value`; TypeError otherwise.
ProfileReportNode* report_from_value(const Value& value);

// Registers "vm.method.profile"(vm, func_name, args...) -> report (reached as
// vm["profile"](func_name, args...)) and "vm.profile_report.{table,csv,chrome_trace,json}"(report)
// -> str. Called by register_vm_functions().
void register_vm_profiling();

}  // namespace anvil::vm
