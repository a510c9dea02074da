// Cost of one AnvilParallelLaunch: the fixed overhead a parallel kernel pays on top of its work.
// Times back-to-back launches of an empty task on the global pool with 1 thread, with N
// threads, and with N threads whose tasks each pass one barrier. Prints a table and, as its
// last line, one line of JSON with the headline figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/threading/thread_pool.h"

namespace {

using anvil::bench::cpu_model;
using anvil::bench::json_escape;

using anvil::runtime::ThreadPool;

struct Options {
  int threads = 2;
  int repeats = 11;
  int launches = 20000;
};

struct Stats {
  double median = 0, min = 0, max = 0;  // ns per launch
};

int32_t empty_task(int32_t, AnvilParallelEnv*, void*) { return 0; }

int32_t barrier_task(int32_t task_id, AnvilParallelEnv* env, void*) {
  return AnvilParallelBarrier(task_id, env);
}

void print_help(const char* program) {
  std::printf(
      "usage: %s [--threads N] [--repeats N] [--launches N]\n"
      "Measures nanoseconds per AnvilParallelLaunch of an empty task.\n"
      "  --threads N   pool threads for the parallel cases, caller included (default 2)\n"
      "  --repeats N   timed repeats per case; the table reports their median (default 11)\n"
      "  --launches N  back-to-back launches per repeat (default 20000)\n"
      "  --help        this text\n"
      "ANVIL_THREAD_POOL_SPIN_COUNT tunes how long idle workers spin before sleeping.\n"
      "The last line of output is one JSON object with the headline figures.\n",
      program);
}

Options parse_options(int argc, char** argv) {
  Options options;
  anvil::bench::parse_int_flags(
      argc, argv,
      {{"--threads", &options.threads}, {"--repeats", &options.repeats}, {"--launches", &options.launches}},
      print_help);
  return options;
}

// Times `launches` launches `repeats` times on a pool of `threads` threads.
Stats measure(const Options& options, int threads, AnvilParallelLambda task) {
  ThreadPool::global().resize(threads);
  for (int i = 0; i < options.launches / 10 + 100; ++i) {  // warm up: threads up, caches hot
    if (AnvilParallelLaunch(task, nullptr, 0) != 0) {
      std::fprintf(stderr, "AnvilParallelLaunch failed during warm-up\n");
      std::exit(1);
    }
  }
  std::vector<double> per_launch;
  for (int r = 0; r < options.repeats; ++r) {
    int failures = 0;
    auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < options.launches; ++i) {
      failures += AnvilParallelLaunch(task, nullptr, 0) != 0;
    }
    auto elapsed = std::chrono::steady_clock::now() - begin;
    if (failures != 0) {
      std::fprintf(stderr, "%d launches failed\n", failures);
      std::exit(1);
    }
    per_launch.push_back(std::chrono::duration<double, std::nano>(elapsed).count() /
                         options.launches);
  }
  std::sort(per_launch.begin(), per_launch.end());
  return {per_launch[per_launch.size() / 2], per_launch.front(), per_launch.back()};
}

#ifdef _OPENMP
// The peer: an empty `omp parallel` region (optionally with a barrier), the launch a typical
// OpenMP-compiled kernel pays. Measured after Anvil's cases so libgomp's spinning workers
// cannot steal the second core from Anvil's pool.
Stats measure_openmp(const Options& options, int threads, bool with_barrier) {
  std::vector<double> per_launch;
  for (int r = 0; r <= options.repeats; ++r) {  // round 0 is the warm-up
    auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < options.launches; ++i) {
#pragma omp parallel num_threads(threads)
      {
        if (with_barrier) {
#pragma omp barrier
        }
      }
    }
    auto elapsed = std::chrono::steady_clock::now() - begin;
    if (r > 0) per_launch.push_back(std::chrono::duration<double, std::nano>(elapsed).count() / options.launches);
  }
  std::sort(per_launch.begin(), per_launch.end());
  return {per_launch[per_launch.size() / 2], per_launch.front(), per_launch.back()};
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  std::string machine = cpu_model();
  const char* spin = std::getenv("ANVIL_THREAD_POOL_SPIN_COUNT");

  std::printf("thread pool launch overhead\n");
  std::printf("machine: %s, %d physical cores\n", machine.c_str(),
              ThreadPool::physical_core_count());
  std::printf("%d repeats x %d launches per case; idle spin: %d rounds (%s)\n\n", options.repeats,
              options.launches, ThreadPool::global().spin_count(),
              spin ? "ANVIL_THREAD_POOL_SPIN_COUNT" : "calibrated");

  struct Row {
    const char* name;
    int threads;
    Stats stats;
  };
  std::vector<Row> rows = {
      {"empty task", 1, measure(options, 1, empty_task)},
      {"empty task", options.threads, measure(options, options.threads, empty_task)},
      {"task + barrier", options.threads, measure(options, options.threads, barrier_task)},
  };
  double openmp_ratio = 0;
#ifdef _OPENMP
  rows.push_back({"openmp empty", options.threads, measure_openmp(options, options.threads, false)});
  rows.push_back({"openmp barrier", options.threads, measure_openmp(options, options.threads, true)});
  openmp_ratio = rows[3].stats.median / rows[1].stats.median;
#endif
  std::printf("%-16s %7s %12s %12s %12s\n", "case", "threads", "median ns", "min ns", "max ns");
  for (const Row& row : rows) {
    std::printf("%-16s %7d %12.1f %12.1f %12.1f\n", row.name, row.threads, row.stats.median,
                row.stats.min, row.stats.max);
  }
  if (openmp_ratio > 0)
    std::printf("\nAnvil launch vs OpenMP (libgomp) parallel region, %d threads: %.2fx faster\n", options.threads,
                openmp_ratio);
  std::printf("\n");
  const Stats& headline = rows[1].stats;
  std::printf(
      "{\"bench\": \"thread_pool\", \"machine\": \"%s\", \"threads\": %d, \"repeats\": %d, "
      "\"launches_per_repeat\": %d, \"ns_per_launch_median\": %.1f, \"ns_per_launch_min\": %.1f, "
      "\"ns_per_launch_max\": %.1f, \"ns_per_launch_1thread_median\": %.1f, "
      "\"ns_per_launch_barrier_median\": %.1f, \"openmp_ns_per_region_median\": %.1f, "
      "\"speedup_vs_openmp\": %.2f}\n",
      json_escape(machine).c_str(), options.threads, options.repeats, options.launches,
      headline.median, headline.min, headline.max, rows[0].stats.median, rows[2].stats.median,
      rows.size() > 3 ? rows[3].stats.median : 0.0, openmp_ratio);
  return 0;
}
