// time_evaluator: TVM's timing loop (warm-up, growing `number` up to min_repeat_ms, device syncs,
// optional cache flush, cool-down) and its registration as "runtime.time_evaluator" and as the
// VM method "time_evaluator".
#include "anvil/runtime/profiling/time_evaluator.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <thread>

#include "anvil/base/error.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/registry.h"

namespace anvil {
namespace {

// Copies src into dst so that the timed code starts with cold caches (TVM copies one int32
// array into another). The empty asm keeps the compiler from dropping the unread copy.
void flush_cache(std::vector<int32_t>& dst, const std::vector<int32_t>& src) {
  std::memcpy(dst.data(), src.data(), src.size() * sizeof(int32_t));
  asm volatile("" : : "r"(dst.data()) : "memory");
}

// The option at args[index], or `fallback` when the caller passed fewer arguments.
int int_option(const char* fn, Args args, size_t index, const char* name, int fallback) {
  if (index >= args.size()) return fallback;
  int64_t v;
  try {
    v = args[index].as_int();
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat(fn, ": argument '", name, "': ", e.what()));
  }
  if (v < INT_MIN || v > INT_MAX) value_error(fn, ": argument '", name, "' = ", v, " does not fit in an int");
  return static_cast<int>(v);
}

// Body shared by "runtime.time_evaluator" and "vm.method.time_evaluator":
// (module, func_name, device, number, repeat, min_repeat_ms, limit_zero_time_iterations,
//  cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes) -> Function
Value make_from_args(const char* fn, Args args) {
  constexpr const char* kSignature =
      "module, func_name, device, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100, "
      "cooldown_interval_ms=0, repeats_to_cooldown=1, cache_flush_bytes=0";
  if (args.size() < 3 || args.size() > 10)
    type_error(fn, ": expected 3 to 10 arguments (", kSignature, ") but got ", args.size());
  auto arg = [&](size_t i, const char* name, auto convert) {
    try {
      return convert(args[i]);
    } catch (const Error& e) {
      throw Error(e.kind(), str_cat(fn, ": argument '", name, "': ", e.what()));
    }
  };
  Module module = arg(0, "module", [](const Value& v) { return v.as_module(); });
  std::string name = arg(1, "func_name", [](const Value& v) { return v.as_string(); });
  Device dev = arg(2, "device", [](const Value& v) { return v.as_device(); });
  TimeEvaluatorOptions o;
  o.number = int_option(fn, args, 3, "number", o.number);
  o.repeat = int_option(fn, args, 4, "repeat", o.repeat);
  o.min_repeat_ms = int_option(fn, args, 5, "min_repeat_ms", o.min_repeat_ms);
  o.limit_zero_time_iterations = int_option(fn, args, 6, "limit_zero_time_iterations", o.limit_zero_time_iterations);
  o.cooldown_interval_ms = int_option(fn, args, 7, "cooldown_interval_ms", o.cooldown_interval_ms);
  o.repeats_to_cooldown = int_option(fn, args, 8, "repeats_to_cooldown", o.repeats_to_cooldown);
  o.cache_flush_bytes = int_option(fn, args, 9, "cache_flush_bytes", o.cache_flush_bytes);
  o.validate(fn);
  std::optional<Function> f = module.find_function(name, true);
  if (!f) value_error(fn, ": the module (kind '", module.kind(), "') has no function named '", name, "'");
  return Value(make_time_evaluator(*f, dev, o));
}

}  // namespace

void TimeEvaluatorOptions::validate(const std::string& what) const {
  auto at_least = [&](const char* name, int value, int minimum) {
    if (value < minimum) value_error(what, ": ", name, " must be >= ", minimum, " but is ", value);
  };
  at_least("number", number, 1);
  at_least("repeat", repeat, 1);
  at_least("min_repeat_ms", min_repeat_ms, 0);
  at_least("limit_zero_time_iterations", limit_zero_time_iterations, 0);
  at_least("cooldown_interval_ms", cooldown_interval_ms, 0);
  at_least("repeats_to_cooldown", repeats_to_cooldown, 1);
  at_least("cache_flush_bytes", cache_flush_bytes, 0);
}

std::vector<double> time_evaluate(const Function& f, Args args, Device dev, const TimeEvaluatorOptions& options) {
  options.validate("time_evaluate");
  if (!f.defined()) value_error("time_evaluate: the function is undefined");
  DeviceAPI* api = DeviceAPI::get(dev);
  f.call(args);  // warm-up: first-call costs (lazy loading, allocator growth) are not timed

  std::vector<int32_t> flush_src, flush_dst;
  if (options.cache_flush_bytes > 0) {
    size_t n = std::max<size_t>(1, static_cast<size_t>(options.cache_flush_bytes) / sizeof(int32_t));
    flush_src.assign(n, 1);
    flush_dst.assign(n, 0);
  }
  api->sync(dev, nullptr);

  using Clock = std::chrono::steady_clock;
  int64_t number = options.number;  // grows, and stays grown for later repeats (as in TVM)
  std::vector<double> results;
  results.reserve(static_cast<size_t>(options.repeat));
  for (int r = 0; r < options.repeat; ++r) {
    double duration_ms = 0.0;
    int zero_times = 0;
    do {
      if (duration_ms > 0.0) {
        constexpr double kGoldenRatio = 1.618;
        double grown = std::max(options.min_repeat_ms / (duration_ms / static_cast<double>(number)) + 1,
                                static_cast<double>(number) * kGoldenRatio);
        number = static_cast<int64_t>(std::min(grown, static_cast<double>(INT_MAX)));
      }
      if (!flush_src.empty()) flush_cache(flush_dst, flush_src);
      api->sync(dev, nullptr);
      auto begin = Clock::now();
      for (int64_t i = 0; i < number; ++i) f.call(args);
      api->sync(dev, nullptr);
      duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
      if (duration_ms == 0.0) ++zero_times;
    } while (duration_ms < options.min_repeat_ms && zero_times < options.limit_zero_time_iterations);
    results.push_back(duration_ms / 1e3 / static_cast<double>(number));
    // TVM cools down after repeat 0, k, 2k, ... (k = repeats_to_cooldown).
    if (options.cooldown_interval_ms > 0 && r % options.repeats_to_cooldown == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(options.cooldown_interval_ms));
  }
  return results;
}

Function make_time_evaluator(Function f, Device dev, TimeEvaluatorOptions options) {
  options.validate("time_evaluator");
  if (!f.defined()) value_error("time_evaluator: the function is undefined");
  DeviceAPI::get(dev);  // a device this build cannot reach fails now, not at the first call
  std::string name = "time_evaluator(" + f.name() + ")";
  return Function::from_packed(
      [f, dev, options](Args args) -> Value {
        std::vector<double> seconds = time_evaluate(f, args, dev, options);
        std::vector<Value> out(seconds.begin(), seconds.end());
        return Value(std::move(out));
      },
      std::move(name));
}

void register_time_evaluator() {
  register_packed("runtime.time_evaluator", [](Args args) { return make_from_args("runtime.time_evaluator", args); });
  // The module argument is the VM itself (vm.cc passes it first), so the body is the same.
  register_packed("vm.method.time_evaluator", [](Args args) { return make_from_args("time_evaluator", args); });
}

}  // namespace anvil
