// float32 GEMM (C = A·B, row-major, M = N = K) side by side: oneDNN's dnnl_sgemm, OpenBLAS's
// cblas_sgemm and the machine's measured FMA peak, for 1 and 2 threads, with Anvil's kernel
// (ops::matmul_x86 built through pipeline::build for the host, JIT) as the "anvil" row.
//
// The implementations take turns in one process, cell by cell (size x threads): every round of
// a cell runs each once (>= 0.1 s), with a pause between them so that the idle worker threads
// of the one before have gone to sleep. Ratios are taken per round, between runs a second apart
// (the clock of a shared machine drifts by tens of per cent between minutes), and the median
// over rounds is reported. The process re-executes itself without OPENBLAS_CORETYPE /
// OPENBLAS_L2_SIZE (the machines set them for the tests; OpenBLAS reads them when it loads; here
// it picks its kernel itself, and the table says which). Each implementation is checked at size
// 256 against a double-precision reference.
//
// Output: an aligned table, then one JSON line {"bench": "gemm", ...}.
#include <immintrin.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include "anvil/ops/cpu/matmul.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/threading/thread_pool.h"
#include "bench_util.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSizes[] = {256, 512, 1024, 2048};
constexpr int kThreads[] = {1, 2};
constexpr int kCheckSize = 256;
constexpr unsigned kSeed = 20261130;
constexpr double kMinRepeatSeconds = 0.1;  // each repeat runs the GEMM until this much time passed
// Variables the machines set for older OpenBLAS; the bench re-executes itself without them.
constexpr const char* kOpenBlasEnv[] = {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"};

// ---- implementations ----------------------------------------------------------------------

struct GemmImpl {
  const char* name;        // column name and --only key
  void (*set_threads)(int threads);
  // C[M,N] = A[M,K] · B[K,N], row-major, contiguous.
  void (*sgemm)(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);
  std::string (*info)();   // what ran (version, kernel), one line
};

void onednn_threads(int threads) { omp_set_num_threads(threads); }
void onednn_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  dnnl_status_t status = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  if (status != dnnl_success) {
    std::fprintf(stderr, "dnnl_sgemm failed with status %d\n", static_cast<int>(status));
    std::exit(1);
  }
}
std::string onednn_info() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " (OpenMP, omp_set_num_threads)";
}

void openblas_threads(int threads) { openblas_set_num_threads(threads); }
void openblas_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(k), b, static_cast<int>(n), 0.0f, c, static_cast<int>(n));
}
std::string openblas_info() {
  return std::string("OpenBLAS core ") + openblas_get_corename() + " (" + openblas_get_config() + ")";
}

// Anvil: ops::matmul_x86 (packed B, register tiles, parallel row blocks) built once per size
// for the host ("llvm") with pipeline::build and JIT-compiled; threads: the runtime pool's size.
void anvil_threads(int threads) { anvil::runtime::ThreadPool::global().resize(threads); }
void anvil_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, anvil::Function> kernels;
  auto key = std::make_tuple(m, n, k);
  auto it = kernels.find(key);
  if (it == kernels.end()) {
    anvil::register_runtime_functions();
    anvil::Target target = anvil::Target::parse("llvm");
    anvil::ops::MatmulX86 mm = anvil::ops::matmul_x86(m, n, k, target);
    anvil::Module mod = anvil::pipeline::build(mm.schedule, {mm.A, mm.B, mm.C}, target, "matmul");
    it = kernels.emplace(key, mod["matmul"]).first;
  }
  auto wrap = [](const float* p, int64_t rows, int64_t cols) {
    int64_t shape[] = {rows, cols};
    return anvil::Tensor::wrap(const_cast<float*>(p), shape, anvil::DataType::float32(), anvil::Device::cpu(),
                               nullptr);
  };
  it->second(wrap(a, m, k), wrap(b, k, n), wrap(c, m, n));
}
std::string anvil_info() {
  anvil::Target target = anvil::Target::parse("llvm");
  return "ops::matmul_x86 on llvm (" + anvil::ops::matmul_x86_params(1024, 1024, 1024, target).str() +
         "; pool threads via ThreadPool::resize)";
}

// The libraries, then Anvil. min_ratio_vs_best_library compares "anvil" with the best library
// of each row at the sizes in kRatioSizes.
constexpr const char* kAnvilImpl = "anvil";
const GemmImpl kImpls[] = {
    {"onednn", onednn_threads, onednn_sgemm, onednn_info},
    {"openblas", openblas_threads, openblas_sgemm, openblas_info},
    {kAnvilImpl, anvil_threads, anvil_sgemm, anvil_info},
};
constexpr int kRatioSizes[] = {1024, 2048};  // the sizes the target (>= 0.8x) is set for

// ---- FMA peak -------------------------------------------------------------------------------

// Independent FMA chains: enough accumulators to cover latency × FMA ports (4 cycles × 2 ports
// = 8 needed on current cores; 16 zmm / 12 ymm used), each a named variable so that they stay in
// registers. Returns a value so nothing is dead.
#define ANVIL_FMA_CHAINS_16(OP) OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) \
  OP(8) OP(9) OP(10) OP(11) OP(12) OP(13) OP(14) OP(15)
#define ANVIL_FMA_CHAINS_12(OP) OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)

__attribute__((target("avx512f"))) float fma_chains_avx512(int64_t iters) {
#define ANVIL_INIT(j) __m512 acc##j = _mm512_set1_ps(static_cast<float>(j));
#define ANVIL_FMA(j) acc##j = _mm512_fmadd_ps(acc##j, m, add);
#define ANVIL_SUM(j) sum = _mm512_add_ps(sum, acc##j);
  ANVIL_FMA_CHAINS_16(ANVIL_INIT)
  const __m512 m = _mm512_set1_ps(0.9999999f), add = _mm512_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i) {
    ANVIL_FMA_CHAINS_16(ANVIL_FMA)
  }
  __m512 sum = _mm512_setzero_ps();
  ANVIL_FMA_CHAINS_16(ANVIL_SUM)
#undef ANVIL_INIT
#undef ANVIL_FMA
#undef ANVIL_SUM
  float out[16];
  _mm512_storeu_ps(out, sum);
  return out[0] + out[15];
}
constexpr int64_t kFlopsPerIterAvx512 = 16 * 16 * 2;

__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t iters) {
#define ANVIL_INIT(j) __m256 acc##j = _mm256_set1_ps(static_cast<float>(j));
#define ANVIL_FMA(j) acc##j = _mm256_fmadd_ps(acc##j, m, add);
#define ANVIL_SUM(j) sum = _mm256_add_ps(sum, acc##j);
  ANVIL_FMA_CHAINS_12(ANVIL_INIT)
  const __m256 m = _mm256_set1_ps(0.9999999f), add = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i) {
    ANVIL_FMA_CHAINS_12(ANVIL_FMA)
  }
  __m256 sum = _mm256_setzero_ps();
  ANVIL_FMA_CHAINS_12(ANVIL_SUM)
#undef ANVIL_INIT
#undef ANVIL_FMA
#undef ANVIL_SUM
  float out[8];
  _mm256_storeu_ps(out, sum);
  return out[0] + out[7];
}
constexpr int64_t kFlopsPerIterAvx2 = 12 * 8 * 2;

struct PeakKernel {
  const char* isa;
  float (*run)(int64_t);
  int64_t flops_per_iter;
};

PeakKernel peak_kernel() {
  if (__builtin_cpu_supports("avx512f")) return {"avx512f: 16 zmm FMA chains", fma_chains_avx512, kFlopsPerIterAvx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2+fma: 12 ymm FMA chains", fma_chains_avx2, kFlopsPerIterAvx2};
  return {nullptr, nullptr, 0};
}

std::atomic<float> g_sink{0};

// GFLOP/s of `threads` threads each running the chains for `iters` iterations.
double peak_once(const PeakKernel& kernel, int threads, int64_t iters) {
  auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] { g_sink.store(kernel.run(iters), std::memory_order_relaxed); });
  for (auto& th : pool) th.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(kernel.flops_per_iter) * iters * threads / seconds * 1e-9;
}

// ---- measuring ------------------------------------------------------------------------------

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], AlignedFree>;
Buffer make_buffer(size_t count) {
  size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  return Buffer(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

void fill_random(float* data, size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < count; ++i) data[i] = dist(gen);
}

// Largest |C - ref| / (K·u·Σ_k |A_ik·B_kj|) over all elements, u = 2^-24: the classical bound for
// any summation order is 1 (γ_K ≈ K·u), so a correct sgemm stays below it.
double check_error(int64_t n, const float* a, const float* b, const float* c) {
  double worst = 0;
  const double unit = std::ldexp(1.0, -24) * static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, abs_sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        double p = static_cast<double>(a[i * n + k]) * b[k * n + j];
        ref += p;
        abs_sum += std::fabs(p);
      }
      worst = std::max(worst, std::fabs(c[i * n + j] - ref) / (unit * abs_sum + 1e-300));
    }
  }
  return worst;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// FMA peak of `threads` threads: iterations scaled so that one measurement lasts about
// kMinRepeatSeconds.
double measure_peak(const PeakKernel& kernel, int threads) {
  int64_t iters = 1 << 20;
  peak_once(kernel, threads, iters);  // warm up (and let the clock settle)
  auto start = Clock::now();
  peak_once(kernel, threads, iters);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  iters = std::max<int64_t>(iters, static_cast<int64_t>(iters * kMinRepeatSeconds / seconds));
  return peak_once(kernel, threads, iters);
}

// Idle worker threads of the library that ran last spin for a while before they sleep
// (OpenBLAS's for up to about 0.1 s); a pause lets them go to sleep before the next one runs.
void let_idle_threads_sleep() { std::this_thread::sleep_for(std::chrono::milliseconds(150)); }

// One repeat: `calls` GEMMs back to back, in GFLOP/s.
double time_calls(const GemmImpl& impl, int n, int calls, const float* a, const float* b, float* c) {
  auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) impl.sgemm(n, n, n, a, b, c);
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return 2.0 * n * n * n * calls / seconds * 1e-9;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Re-executes this binary without kOpenBlasEnv (OpenBLAS reads them when it is loaded, before
// main), with `--clean-env` so the child knows. Returns the child's exit status.
int rerun_without_openblas_env(int argc, char** argv) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    bool drop = false;
    for (const char* name : kOpenBlasEnv)
      if (std::strncmp(*e, name, std::strlen(name)) == 0 && (*e)[std::strlen(name)] == '=') drop = true;
    if (!drop) env_strings.push_back(*e);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_strings(argv, argv + argc);
  arg_strings.push_back("--clean-env");
  std::vector<char*> args;
  for (auto& s : arg_strings) args.push_back(s.data());
  args.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execve("/proc/self/exe", args.data(), envp.data());
    std::perror("execve /proc/self/exe");
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---- --small-m: batch-1/8 dense layers (issue 12) ------------------------------------------

// C[M,N] = A[M,K] * B[K,N] for M in {1, 8}, N, K in {384, 1536, 4096}, 1 thread: oneDNN
// dnnl_sgemm and OpenBLAS cblas_sgemm on B as it is, Anvil's few-rows (GEMV-like) schedule on B
// packed into its [N/nr, K, nr] panels beforehand, as prepack_weights does at compile time for a
// constant weight (the packing is outside the timing, as a weight is packed once). Each round
// times every implementation once (calls until >= 0.05 s) in turns; ratios are per round, the
// table gives medians. Checked first against a double reference (1e-4 of sum |a*b|).
int run_small_m(int repeats) {
  constexpr int kSmallM[] = {1, 8};
  constexpr int kSmallNK[] = {384, 1536, 4096};
  constexpr double kSmallSeconds = 0.05;
  omp_set_num_threads(1);
  openblas_set_num_threads(1);
  anvil::register_runtime_functions();
  anvil::runtime::ThreadPool::global().resize(1);
  anvil::Target target = anvil::Target::parse("llvm");
  std::printf("small-M GEMM, 1 thread, median of %d rounds; anvil on prepacked panels (few-rows schedule)\n", repeats);
  std::printf("%3s %5s %5s %12s %12s %12s %10s %10s\n", "M", "N", "K", "onednn us", "openblas us", "anvil us",
              "onednn/an", "oblas/an");
  std::ostringstream json;
  json << "{\"bench\": \"gemm_small_m\", \"threads\": 1, \"rows\": [";
  bool first = true, all_ok = true;
  double min_ratio = 1e30;
  std::mt19937 gen(kSeed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int m : kSmallM)
    for (int n : kSmallNK)
      for (int k : kSmallNK) {
        std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n);
        for (float& v : a) v = dist(gen);
        for (float& v : b) v = dist(gen);
        anvil::ops::MatmulX86Params p = anvil::ops::matmul_x86_params(m, n, k, target);
        p.kc = 0, p.nc = 0, p.mr = p.mc = m;
        const int64_t panels = (n + p.nr - 1) / p.nr;
        anvil::te::Tensor A = anvil::te::placeholder({m, k}, anvil::DataType::float32(), "A");
        anvil::te::Tensor PB =
            anvil::te::placeholder({static_cast<int>(panels), k, p.nr}, anvil::DataType::float32(), "PB");
        anvil::ops::MatmulX86 mm = anvil::ops::matmul_x86_compute_on_panels(A, PB, n, p, "C");
        anvil::te::Schedule s = anvil::te::create_schedule({mm.C});
        anvil::ops::schedule_matmul_x86_few_rows(
            s, mm, anvil::ops::few_rows_panel_group(m, panels, p.nr, p.vector_lanes));
        anvil::Function f = anvil::pipeline::build(s, {A, PB, mm.C}, target, "gemv")["gemv"];
        std::vector<float> pb(size_t(panels) * k * p.nr);
        for (int64_t jp = 0; jp < panels; ++jp)
          for (int64_t kk = 0; kk < k; ++kk)
            for (int64_t l = 0; l < p.nr; ++l)
              pb[(jp * k + kk) * p.nr + l] = b[kk * n + std::min<int64_t>(jp * p.nr + l, n - 1)];
        auto wrap = [](float* ptr, std::vector<int64_t> shape) {
          return anvil::Tensor::wrap(ptr, shape, anvil::DataType::float32(), anvil::Device::cpu(), nullptr);
        };
        anvil::Tensor ta = wrap(a.data(), {m, k}), tpb = wrap(pb.data(), {panels, k, p.nr}), tc = wrap(c.data(), {m, n});
        auto run_anvil = [&] { f(ta, tpb, tc); };
        auto run_onednn = [&] { onednn_sgemm(m, n, k, a.data(), b.data(), c.data()); };
        auto run_openblas = [&] { openblas_sgemm(m, n, k, a.data(), b.data(), c.data()); };
        auto check = [&](const char* what) {
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
              double ref = 0, mag = 0;
              for (int kk = 0; kk < k; ++kk) {
                double prod = double(a[size_t(i) * k + kk]) * b[size_t(kk) * n + j];
                ref += prod, mag += std::fabs(prod);
              }
              if (!(std::fabs(c[size_t(i) * n + j] - ref) <= 1e-4 * (1 + mag))) {
                std::printf("%s WRONG at M=%d N=%d K=%d C[%d,%d] = %g, want %g\n", what, m, n, k, i, j,
                            c[size_t(i) * n + j], ref);
                all_ok = false;
                return;
              }
            }
        };
        run_anvil(), check("anvil");
        run_onednn(), check("onednn");
        auto per_call_us = [&](const std::function<void()>& fn) {
          fn();
          int64_t calls = 0;
          auto start = Clock::now();
          double elapsed = 0;
          do {
            fn();
            ++calls;
            elapsed = std::chrono::duration<double>(Clock::now() - start).count();
          } while (elapsed < kSmallSeconds);
          return elapsed / calls * 1e6;
        };
        std::vector<double> ta_us, td_us, to_us, rd, ro;
        for (int r = 0; r < repeats; ++r) {
          double x = per_call_us(run_anvil), d = per_call_us(run_onednn), o = per_call_us(run_openblas);
          ta_us.push_back(x), td_us.push_back(d), to_us.push_back(o), rd.push_back(d / x), ro.push_back(o / x);
        }
        double ratio_d = median(rd), ratio_o = median(ro);
        min_ratio = std::min(min_ratio, std::min(ratio_d, ratio_o));
        std::printf("%3d %5d %5d %12.1f %12.1f %12.1f %10.2f %10.2f\n", m, n, k, median(td_us), median(to_us),
                    median(ta_us), ratio_d, ratio_o);
        std::fflush(stdout);
        json << (first ? "" : ", ") << "{\"m\": " << m << ", \"n\": " << n << ", \"k\": " << k
             << ", \"onednn_us\": " << median(td_us) << ", \"openblas_us\": " << median(to_us)
             << ", \"anvil_us\": " << median(ta_us) << ", \"onednn_over_anvil\": " << ratio_d
             << ", \"openblas_over_anvil\": " << ratio_o << "}";
        first = false;
      }
  std::printf("ratios: library time / anvil time per round (> 1: anvil faster); min %.2f\n", min_ratio);
  json << "], \"min_library_over_anvil\": " << min_ratio << ", \"correct\": " << (all_ok ? "true" : "false") << "}";
  std::printf("%s\n", json.str().c_str());
  return all_ok ? 0 : 1;
}

void print_help(const char* argv0) {
  std::printf(
      "usage: %s [--repeat N] [--small-m]\n"
      "float32 GEMM (M = N = K in {256, 512, 1024, 2048}), 1 and 2 threads: oneDNN dnnl_sgemm and\n"
      "OpenBLAS cblas_sgemm side by side with Anvil's ops::matmul_x86 (JIT) and the machine's FMA\n"
      "peak measured in the same run. The implementations take turns, cell by cell, so that they\n"
      "run a second apart; the run re-executes itself without OPENBLAS_CORETYPE and\n"
      "OPENBLAS_L2_SIZE (OpenBLAS then picks its kernel itself). Results are checked at 256\n"
      "against a double reference. Prints a table, then one JSON line whose\n"
      "min_ratio_vs_best_library is the smallest anvil / best-library ratio at 1024 and 2048.\n"
      "  --repeat N   rounds per cell: each runs every implementation once (>= %.1f s); the table\n"
      "               gives medians over rounds, anvil/best the median of the per-round ratios\n"
      "               (default 5)\n"
      "  --small-m    instead: M in {1, 8} x N, K in {384, 1536, 4096}, 1 thread, Anvil's few-rows\n"
      "               schedule on prepacked B panels vs dnnl_sgemm / cblas_sgemm (issue 12)\n",
      argv0, kMinRepeatSeconds);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  bool clean_env = false, small_m = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      print_help(argv[0]);
      return 0;
    } else if (arg == "--repeat") {
      repeats = anvil::bench::positive_int("--repeat", i + 1 < argc ? argv[i + 1] : nullptr);
      ++i;
    } else if (arg == "--clean-env") {
      clean_env = true;
    } else if (arg == "--small-m") {
      small_m = true;
    } else {
      std::fprintf(stderr, "unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  if (!clean_env) {
    std::printf("GEMM float32, row-major C = A*B, M = N = K; median of %d rounds (one repeat >= %.1f s per\n"
                "implementation, cell and round; the implementations take turns)\n",
                repeats, kMinRepeatSeconds);
    for (const char* name : kOpenBlasEnv) {
      const char* value = std::getenv(name);
      std::printf("%s=%s in this environment (removed for this run)\n", name, value ? value : "(unset)");
    }
    return rerun_without_openblas_env(argc, argv);
  }

  if (small_m) return run_small_m(repeats);
  std::string cpu = anvil::bench::cpu_model();
  bool avx512 = __builtin_cpu_supports("avx512f");
  std::printf("CPU: %s, %u logical CPUs, AVX-512 %s\n", cpu.c_str(), std::thread::hardware_concurrency(),
              avx512 ? "present" : "absent");
  PeakKernel kernel = peak_kernel();
  std::string isa = kernel.run ? kernel.isa : "none";
  std::printf("FMA peak kernel: %s\n", isa.c_str());
  std::vector<std::string> names;
  for (const auto& impl : kImpls) {
    names.push_back(impl.name);
    std::printf("%-9s %s\n", (std::string(impl.name) + ":").c_str(), impl.info().c_str());
  }
  std::fflush(stdout);

  double load_before = anvil::bench::load_average();
  bool failed = false;
  std::map<int, std::vector<double>> peak_runs;
  // runs[impl][{size, threads}] = GFLOP/s, one per round
  std::map<std::string, std::map<std::pair<int, int>, std::vector<double>>> runs;
  std::string checks;
  const size_t num_impls = std::size(kImpls);
  for (int threads : kThreads) {
    for (const auto& impl : kImpls) impl.set_threads(threads);
    if (kernel.run) peak_runs[threads].push_back(measure_peak(kernel, threads));
    for (int n : kSizes) {
      std::fprintf(stderr, "%d threads, size %d\n", threads, n);
      size_t count = static_cast<size_t>(n) * n;
      Buffer a = make_buffer(count), b = make_buffer(count), c = make_buffer(count);
      fill_random(a.get(), count, kSeed);
      fill_random(b.get(), count, kSeed + 1);
      // Warm up (JIT for oneDNN and Anvil), check at kCheckSize, and size the repeats.
      std::vector<int> calls(num_impls);
      for (size_t i = 0; i < num_impls; ++i) {
        const GemmImpl& impl = kImpls[i];
        std::fill(c.get(), c.get() + count, 0.0f);
        impl.sgemm(n, n, n, a.get(), b.get(), c.get());
        if (n == kCheckSize) {
          double err = check_error(n, a.get(), b.get(), c.get());
          char buf[160];
          std::snprintf(buf, sizeof buf, "%s%s %dT: %.4f %s", checks.empty() ? "" : "; ", impl.name, threads, err,
                        err <= 1.0 ? "ok" : "FAIL");
          checks += buf;
          failed |= !(err <= 1.0);
        }
        auto start = Clock::now();
        impl.sgemm(n, n, n, a.get(), b.get(), c.get());
        double once = std::chrono::duration<double>(Clock::now() - start).count();
        calls[i] = std::max(1, static_cast<int>(kMinRepeatSeconds / std::max(once, 1e-9)));
        let_idle_threads_sleep();
      }
      for (int round = 0; round < repeats; ++round) {
        for (size_t k = 0; k < num_impls; ++k) {
          size_t i = (k + static_cast<size_t>(round)) % num_impls;  // a different one goes first each round
          runs[kImpls[i].name][{n, threads}].push_back(time_calls(kImpls[i], n, calls[i], a.get(), b.get(), c.get()));
          let_idle_threads_sleep();
        }
      }
    }
    if (kernel.run) peak_runs[threads].push_back(measure_peak(kernel, threads));
  }
  std::printf("check at %d (max |C-ref| / (K*2^-24*sum|a*b|), must be <= 1): %s\n\n", kCheckSize, checks.c_str());

  std::map<int, double> peak;
  for (auto& [threads, v] : peak_runs) peak[threads] = median(v);
  std::printf("%6s %3s %9s", "size", "thr", "peak");
  for (const auto& name : names) std::printf(" %16s", (name + " GF/s (%pk)").c_str());
  std::printf(" %10s %10s\n", "best lib", "anvil/best");
  double min_ratio = INFINITY;
  std::string rows_json;
  for (int threads : kThreads) {
    for (int n : kSizes) {
      double pk = peak.count(threads) ? peak[threads] : NAN;
      std::printf("%6d %3d %9.1f", n, threads, pk);
      double best = 0;
      std::string best_name = "-";
      std::string row = "{\"size\": " + std::to_string(n) + ", \"threads\": " + std::to_string(threads) +
                        ", \"peak\": " + json_number(pk);
      for (const auto& name : names) {
        double g = median(runs[name][{n, threads}]);
        char cell[64];
        std::snprintf(cell, sizeof cell, "%.1f (%.0f%%)", g, 100.0 * g / pk);
        std::printf(" %16s", cell);
        row += ", \"" + name + "\": " + json_number(g);
        if (name != kAnvilImpl && g > best) {
          best = g;
          best_name = name;
        }
      }
      // Per round: anvil / the faster library of that round.
      std::vector<double> round_ratios;
      const auto& anvil_runs = runs[kAnvilImpl][{n, threads}];
      for (size_t r = 0; r < anvil_runs.size(); ++r) {
        double best_of_round = 0;
        for (const auto& name : names)
          if (name != kAnvilImpl) best_of_round = std::max(best_of_round, runs[name][{n, threads}][r]);
        round_ratios.push_back(anvil_runs[r] / best_of_round);
      }
      double ratio = median(round_ratios);
      if (std::find(std::begin(kRatioSizes), std::end(kRatioSizes), n) != std::end(kRatioSizes))
        min_ratio = std::min(min_ratio, ratio);
      std::printf(" %10s %9.2fx\n", best_name.c_str(), ratio);
      row += ", \"anvil_vs_best\": " + json_number(ratio) + ", \"best_library\": \"" + best_name + "\"}";
      rows_json += (rows_json.empty() ? "" : ", ") + row;
    }
  }
  double load_after = anvil::bench::load_average();
  std::printf("\n%%pk = share of the FMA peak (median of the measurements before and after the cells of a thread\n"
              "count); anvil/best = median over rounds of anvil / the faster library of the same round.\n");
  std::printf("load average (1 min) before / after: %.2f / %.2f%s\n", load_before, load_after,
              std::max(load_before, load_after) > 1.5 ? "  (the machine was busy: figures are low)" : "");
  if (failed) std::printf("FAILED: a result check did not pass\n");

  std::string json = "{\"bench\": \"gemm\", \"cpu\": \"" + anvil::bench::json_escape(cpu) + "\", \"avx512\": " +
                     (avx512 ? "true" : "false") + ", \"peak_kernel\": \"" + anvil::bench::json_escape(isa) +
                     "\", \"peak_gflops\": {\"1\": " + json_number(peak.count(1) ? peak[1] : NAN) +
                     ", \"2\": " + json_number(peak.count(2) ? peak[2] : NAN) + "}, \"openblas\": \"" +
                     anvil::bench::json_escape(kImpls[1].info()) + "\", \"onednn\": \"" +
                     anvil::bench::json_escape(kImpls[0].info()) + "\", \"repeat\": " + std::to_string(repeats) +
                     ", \"loadavg\": [" + json_number(load_before) + ", " + json_number(load_after) + "]" +
                     ", \"checks_ok\": " + (failed ? "false" : "true") + ", \"rows\": [" + rows_json +
                     "], \"min_ratio_vs_best_library\": " + json_number(min_ratio) + "}";
  std::printf("%s\n", json.c_str());
  return failed ? 1 : 0;
}
