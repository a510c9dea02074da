// time_evaluator: measures how long a Function takes, following Apache TVM's algorithm
// (src/runtime/timer.cc, WrapTimeEvaluator) so that numbers are comparable with TVM's:
//   one warm-up call; then `repeat` measurements, each timing `number` back-to-back calls between
//   two device syncs. When a measurement is shorter than min_repeat_ms, `number` grows to
//   max(min_repeat_ms / (t / number) + 1, 1.618 * number) and the measurement is redone; the grown
//   `number` carries over to later repeats. Optionally flushes the caches before each measurement.
//
// Differences from TVM: the result of the returned Function is an array of floats (seconds per
// call, one per repeat) instead of a blob of packed doubles, and there is no f_preproc hook.
#pragma once

#include <string>
#include <vector>

#include "anvil/runtime/device.h"
#include "anvil/runtime/function.h"

namespace anvil {

struct TimeEvaluatorOptions {
  int number = 10;                        // calls per measurement (may grow, see above)
  int repeat = 1;                         // measurements reported
  int min_repeat_ms = 0;                  // a measurement shorter than this is redone with more calls
  int limit_zero_time_iterations = 100;   // give up growing after this many measurements of 0 ns
  int cooldown_interval_ms = 0;           // sleep after every repeats_to_cooldown repeats
  int repeats_to_cooldown = 1;
  int cache_flush_bytes = 0;              // > 0: copy this many bytes before each measurement

  // ValueError naming the option when one is out of range (number/repeat/repeats_to_cooldown
  // below 1, the others negative).
  void validate(const std::string& what) const;
};

// Seconds per call of f(args) for each repeat. `dev` is synced before and after each timed
// block, so asynchronous device work is included. Errors of `f` propagate unchanged.
std::vector<double> time_evaluate(const Function& f, Args args, Device dev, const TimeEvaluatorOptions& options);

// A Function that calls time_evaluate(f, its arguments, dev, options) and returns an array of
// floats. Options are validated here (ValueError), not at the first call.
Function make_time_evaluator(Function f, Device dev, TimeEvaluatorOptions options);

// Registers
//   "runtime.time_evaluator"(module, func_name, device, number, repeat, min_repeat_ms,
//                            limit_zero_time_iterations, cooldown_interval_ms,
//                            repeats_to_cooldown, cache_flush_bytes) -> Function
//   "vm.method.time_evaluator"(vm, func_name, device, ...)   (the same; reached as
//                            vm["time_evaluator"](func_name, device, ...))
// The options after `device` are optional and default as in TimeEvaluatorOptions. The function
// is looked up once, when the evaluator is made (ValueError when the module lacks it).
// Called by register_runtime_functions().
void register_time_evaluator();

}  // namespace anvil
