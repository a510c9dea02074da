// Allocator cost: ns per alloc+free pair of 1 MiB blocks (and a few other sizes) through the
// naive allocator (straight to the CPU DeviceAPI) and the pooled allocator, side by side in one
// run. Median of several repeats. Ends with one JSON line (DESIGN.md convention 9).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "anvil/runtime/memory/allocator.h"
#include "anvil/runtime/register.h"

namespace {

// Median ns per alloc+free pair; each pair touches the block once, as a kernel would.
double measure(anvil::Allocator* alloc, size_t bytes, int iters, int repeats) {
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      anvil::MemoryBlock b = alloc->alloc(bytes, anvil::kAllocAlignment);
      static_cast<volatile char*>(b.data)[0] = 1;
      alloc->free(b);
    }
    samples.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
                      iters);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 20000, repeats = 9;
  anvil::bench::parse_int_flags(argc, argv, {{"--iters", &iters}, {"--repeats", &repeats}}, [](const char* program) {
    std::printf("usage: %s [--iters N] [--repeats N]\nAlloc+free cost, naive vs pooled, CPU.\n", program);
  });
  anvil::register_runtime_functions();
  anvil::Allocator* naive = anvil::get_allocator(anvil::Device::cpu(), anvil::AllocatorKind::kNaive);
  anvil::Allocator* pooled = anvil::get_allocator(anvil::Device::cpu(), anvil::AllocatorKind::kPooled);
  std::printf("allocator cost per alloc+free pair, CPU (%s), median of %d x %d\n", anvil::bench::cpu_model().c_str(), repeats,
              iters);
  std::printf("%-12s %14s %14s %10s\n", "block", "naive ns", "pooled ns", "speedup");
  double naive_1m = 0, pooled_1m = 0;
  for (size_t bytes : {size_t{4} << 10, size_t{64} << 10, size_t{1} << 20, size_t{16} << 20}) {
    int n = bytes >= (size_t{16} << 20) ? iters / 10 : iters;
    double tn = measure(naive, bytes, n, repeats);
    double tp = measure(pooled, bytes, n, repeats);
    if (bytes == (size_t{1} << 20)) naive_1m = tn, pooled_1m = tp;
    std::printf("%-12s %14.1f %14.1f %9.1fx\n",
                (bytes >= (1 << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB").c_str(),
                tn, tp, tn / tp);
  }
  std::printf("{\"bench\": \"allocator\", \"block_bytes\": 1048576, \"naive_ns\": %.1f, \"pooled_ns\": %.1f, "
              "\"pooled_speedup\": %.2f}\n",
              naive_1m, pooled_1m, naive_1m / pooled_1m);
  return 0;
}
