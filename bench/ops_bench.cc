// Operators against oneDNN: conv2d (float32, NCHW, batch 1) on ResNet-18's convolution layers,
// Anvil's default x86 schedule (ops/cpu/conv2d.h, built through pipeline::build for "llvm")
// against oneDNN's convolution primitive, in the same process, 1 and 2 threads.
//
// Two comparisons per layer:
//  * "kernel": oneDNN's primitive created with format `any` (its preferred blocked layouts);
//    only the primitive's execution is timed, the source/weight/destination reorders are done
//    once outside the timing. Anvil's weights are prepacked once outside the timing
//    ([K/32, C, R, S, 32], pack_conv2d_weight); its data and output stay NCHW, and the padding
//    copy is inside the kernel.
//  * "incl. reorders": from plain NCHW data / OIHW weights to NCHW output: oneDNN times
//    src reorder + weight reorder + primitive + dst reorder (those it needs); Anvil times the
//    kernel variant that packs the OIHW weights itself.
// Threads: omp_set_num_threads (Debian's oneDNN is built on OpenMP) and Anvil's runtime pool
// (ThreadPool::global().resize). Each figure is the median over --repeat repeats, each repeat
// calling the convolution until kMinRepeatSeconds passed. Every layer's Anvil output is checked
// against oneDNN's (max |difference| <= 1e-3, inputs uniform in [-1, 1), fixed seed).
//
// Output: an aligned table, then one JSON line {"bench": "ops", ...}.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <oneapi/dnnl/dnnl.h>

#include "anvil/ops/cpu/conv2d.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/threading/thread_pool.h"
#include "anvil/target/target.h"
#include "bench_util.h"

namespace {

using Clock = std::chrono::steady_clock;
using anvil::ops::Conv2dShape;

constexpr unsigned kSeed = 20261130;
constexpr int kThreads[] = {1, 2};
constexpr double kMinRepeatSeconds = 0.05;
constexpr double kCheckTolerance = 1e-3;

struct Layer {
  const char* name;
  int c, hw, k, r, stride, pad;
};
// ResNet-18's convolutions (batch 1, 224x224 input), one row per distinct shape.
const Layer kLayers[] = {
    {"conv1", 3, 224, 64, 7, 2, 3},       {"layer1 3x3", 64, 56, 64, 3, 1, 1},
    {"layer2 3x3 s2", 64, 56, 128, 3, 2, 1}, {"layer2 1x1 s2", 64, 56, 128, 1, 2, 0},
    {"layer2 3x3", 128, 28, 128, 3, 1, 1}, {"layer3 3x3 s2", 128, 28, 256, 3, 2, 1},
    {"layer3 1x1 s2", 128, 28, 256, 1, 2, 0}, {"layer3 3x3", 256, 14, 256, 3, 1, 1},
    {"layer4 3x3 s2", 256, 14, 512, 3, 2, 1}, {"layer4 1x1 s2", 256, 14, 512, 1, 2, 0},
    {"layer4 3x3", 512, 7, 512, 3, 1, 1},
};

Conv2dShape shape_of(const Layer& l) {
  Conv2dShape s;
  s.in_channels = l.c;
  s.height = s.width = l.hw;
  s.out_channels = l.k;
  s.kernel_h = s.kernel_w = l.r;
  s.stride = l.stride;
  s.pad = l.pad;
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Median seconds per call of fn.
double time_per_call(const std::function<void()>& fn, int repeats) {
  fn();  // warm-up
  auto start = Clock::now();
  fn();
  double once = std::chrono::duration<double>(Clock::now() - start).count();
  int calls = std::max(1, static_cast<int>(kMinRepeatSeconds / std::max(once, 1e-9)));
  std::vector<double> runs;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) fn();
    runs.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / calls);
  }
  return median(runs);
}

void dnnl_check(dnnl_status_t status, const char* what) {
  if (status != dnnl_success) {
    std::fprintf(stderr, "oneDNN: %s failed with status %d\n", what, static_cast<int>(status));
    std::exit(1);
  }
}

// ---- oneDNN --------------------------------------------------------------------------------

// One convolution with user memories in nchw/oihw/nchw and the primitive's own (format any).
struct OneDnnConv {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t conv = nullptr;
  dnnl_memory_t user[3] = {};  // src, weights, dst in plain layouts
  dnnl_memory_t prim[3] = {};  // in the primitive's layouts (== user when they agree)
  dnnl_primitive_t reorder[3] = {};  // user->prim for src, weights; prim->user for dst
  std::string impl;

  OneDnnConv(dnnl_engine_t eng, dnnl_stream_t str, const Conv2dShape& s) : engine(eng), stream(str) {
    dnnl_dims_t src_dims = {s.batch, s.in_channels, s.height, s.width};
    dnnl_dims_t w_dims = {s.out_channels, s.in_channels, s.kernel_h, s.kernel_w};
    dnnl_dims_t dst_dims = {s.batch, s.out_channels, s.out_height(), s.out_width()};
    dnnl_dims_t strides = {s.stride, s.stride}, pad_l = {s.pad, s.pad};
    // Right padding so that the output size is exact: (H + pl + pr - R) / st + 1 = OH.
    dnnl_dims_t pad_r = {(s.out_height() - 1) * s.stride + s.kernel_h - s.height - s.pad,
                         (s.out_width() - 1) * s.stride + s.kernel_w - s.width - s.pad};
    dnnl_memory_desc_t user_md[3], any_md[3];
    dnnl_check(dnnl_memory_desc_init_by_tag(&user_md[0], 4, src_dims, dnnl_f32, dnnl_nchw), "src md");
    dnnl_check(dnnl_memory_desc_init_by_tag(&user_md[1], 4, w_dims, dnnl_f32, dnnl_oihw), "weights md");
    dnnl_check(dnnl_memory_desc_init_by_tag(&user_md[2], 4, dst_dims, dnnl_f32, dnnl_nchw), "dst md");
    dnnl_check(dnnl_memory_desc_init_by_tag(&any_md[0], 4, src_dims, dnnl_f32, dnnl_format_tag_any), "src any");
    dnnl_check(dnnl_memory_desc_init_by_tag(&any_md[1], 4, w_dims, dnnl_f32, dnnl_format_tag_any), "weights any");
    dnnl_check(dnnl_memory_desc_init_by_tag(&any_md[2], 4, dst_dims, dnnl_f32, dnnl_format_tag_any), "dst any");
    dnnl_convolution_desc_t cd;
    dnnl_check(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_auto, &any_md[0],
                                                  &any_md[1], nullptr, &any_md[2], strides, pad_l, pad_r),
               "convolution desc");
    dnnl_check(dnnl_primitive_desc_create(&pd, &cd, nullptr, engine, nullptr), "convolution primitive desc");
    const char* name = nullptr;
    dnnl_check(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name), "impl query");
    impl = name ? name : "?";
    dnnl_check(dnnl_primitive_create(&conv, pd), "convolution primitive");
    const dnnl_query_t queries[3] = {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md};
    for (int i = 0; i < 3; ++i) {
      dnnl_check(dnnl_memory_create(&user[i], &user_md[i], engine, DNNL_MEMORY_ALLOCATE), "user memory");
      const dnnl_memory_desc_t* md = dnnl_primitive_desc_query_md(pd, queries[i], 0);
      if (dnnl_memory_desc_equal(md, &user_md[i])) {
        prim[i] = user[i];
        continue;
      }
      dnnl_check(dnnl_memory_create(&prim[i], md, engine, DNNL_MEMORY_ALLOCATE), "primitive memory");
      dnnl_primitive_desc_t rpd;
      if (i < 2)
        dnnl_check(dnnl_reorder_primitive_desc_create(&rpd, &user_md[i], engine, md, engine, nullptr), "reorder desc");
      else
        dnnl_check(dnnl_reorder_primitive_desc_create(&rpd, md, engine, &user_md[i], engine, nullptr), "reorder desc");
      dnnl_check(dnnl_primitive_create(&reorder[i], rpd), "reorder");
      dnnl_primitive_desc_destroy(rpd);
    }
  }
  ~OneDnnConv() {
    for (int i = 0; i < 3; ++i) {
      if (reorder[i]) dnnl_primitive_destroy(reorder[i]);
      if (prim[i] != user[i]) dnnl_memory_destroy(prim[i]);
      dnnl_memory_destroy(user[i]);
    }
    dnnl_primitive_destroy(conv);
    dnnl_primitive_desc_destroy(pd);
  }
  float* user_data(int i) {
    void* p = nullptr;
    dnnl_check(dnnl_memory_get_data_handle(user[i], &p), "data handle");
    return static_cast<float*>(p);
  }
  void run_reorder(int i) {
    if (!reorder[i]) return;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, i < 2 ? user[i] : prim[i]}, {DNNL_ARG_TO, i < 2 ? prim[i] : user[i]}};
    dnnl_check(dnnl_primitive_execute(reorder[i], stream, 2, args), "reorder execute");
  }
  void run_conv() {
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, prim[0]}, {DNNL_ARG_WEIGHTS, prim[1]}, {DNNL_ARG_DST, prim[2]}};
    dnnl_check(dnnl_primitive_execute(conv, stream, 3, args), "convolution execute");
  }
  void wait() { dnnl_check(dnnl_stream_wait(stream), "stream wait"); }
  // Plain in, plain out: the reorders the primitive needs around it.
  void run_with_reorders() {
    run_reorder(0);
    run_reorder(1);
    run_conv();
    run_reorder(2);
    wait();
  }
  void run_primitive() {
    run_conv();
    wait();
  }
};

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

// ---- Anvil ---------------------------------------------------------------------------------

struct AnvilConv {
  anvil::Module prepacked, packing;  // weights [K/kb, C, R, S, kb] / OIHW packed in the kernel
  anvil::Function prepacked_fn, packing_fn;
  anvil::Tensor data, weight_oihw, weight_packed, out;
  double compile_seconds = 0;

  AnvilConv(const Conv2dShape& s, anvil::ops::Conv2dSchedule config) {
    auto start = Clock::now();
    anvil::Target target = anvil::Target::parse("llvm");
    anvil::ops::Conv2d a = anvil::ops::conv2d_nchw(s, config);
    prepacked = anvil::pipeline::build(anvil::ops::schedule_conv2d_nchw_x86(a, s, config), a.args(), target, "conv2d");
    config.pack_weight_in_kernel = true;
    anvil::ops::Conv2d b = anvil::ops::conv2d_nchw(s, config);
    packing = anvil::pipeline::build(anvil::ops::schedule_conv2d_nchw_x86(b, s, config), b.args(), target, "conv2d");
    compile_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    prepacked_fn = prepacked["conv2d"];
    packing_fn = packing["conv2d"];
    data = anvil::Tensor::empty({s.batch, s.in_channels, s.height, s.width}, anvil::DataType::float32());
    weight_oihw = anvil::Tensor::empty({s.out_channels, s.in_channels, s.kernel_h, s.kernel_w}, anvil::DataType::float32());
    weight_packed = anvil::Tensor::empty({s.out_channels / config.oc_block, s.in_channels, s.kernel_h, s.kernel_w,
                                          config.oc_block}, anvil::DataType::float32());
    out = anvil::Tensor::empty({s.batch, s.out_channels, s.out_height(), s.out_width()}, anvil::DataType::float32());
  }
};

float* f32(anvil::Tensor& t) { return static_cast<float*>(t.data()); }

void print_help(const char* argv0) {
  std::printf(
      "usage: %s [--repeat N]\n"
      "conv2d float32 NCHW, batch 1, on ResNet-18's convolution layers: Anvil's default x86 schedule\n"
      "against oneDNN's convolution primitive (format any), 1 and 2 threads, in one process.\n"
      "'kernel' columns time the convolution alone (oneDNN's layout reorders and Anvil's weight\n"
      "packing done once outside the timing); 'incl. reorders' columns start from NCHW data and OIHW\n"
      "weights and end with NCHW output. Every layer's outputs are compared. Prints a table, then\n"
      "one JSON line.\n"
      "  --repeat N     repeats per cell, each >= %.2f s; the median is reported (default 5)\n"
      "  --oc-block N   Anvil's output channels per vector tile (default 32; must divide every layer's)\n"
      "  --ow-block N   Anvil's output columns per register tile (default: largest divisor of the\n"
      "                 output width <= 8)\n"
      "  --rows-per-task N  output rows per task of Anvil's parallel loop (default 0: automatic,\n"
      "                 at most 16 tasks; 1: one row per iteration, the loop cut into one chunk per thread)\n",
      argv0, kMinRepeatSeconds);
}

struct Row {
  double anvil = 0, onednn = 0, anvil_incl = 0, onednn_incl = 0;  // GFLOP/s
};

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5, oc_block = 32, ow_block = 0, rows_per_task = 0;
  anvil::bench::parse_int_flags(
      argc, argv,
      {{"--repeat", &repeats}, {"--oc-block", &oc_block}, {"--ow-block", &ow_block}, {"--rows-per-task", &rows_per_task}},
      print_help);
  anvil::ops::Conv2dSchedule config;
  config.oc_block = oc_block;
  config.ow_block = ow_block;
  config.rows_per_task = rows_per_task;

  std::string cpu = anvil::bench::cpu_model();
  std::printf("conv2d float32 NCHW, batch 1, ResNet-18 layers; median of %d repeats (each >= %.2f s)\n", repeats,
              kMinRepeatSeconds);
  std::printf("CPU: %s, %u logical CPUs, AVX-512 %s; oneDNN %s (OpenMP)\n", cpu.c_str(),
              std::thread::hardware_concurrency(), __builtin_cpu_supports("avx512f") ? "present" : "absent",
              onednn_version().c_str());
  std::printf("kernel: convolution only (oneDNN: primitive execution with format-any layouts, reorders\n"
              "  excluded; Anvil: weights prepacked [K/32,C,R,S,32], NCHW data and output, padding inside).\n"
              "incl. reorders: NCHW/OIHW in, NCHW out (oneDNN: + src/weight/dst reorders it needs;\n"
              "  Anvil: + weight packing inside the kernel).\n");
  double load_before = anvil::bench::load_average();

  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_check(dnnl_engine_create(&engine, dnnl_cpu, 0), "engine");
  dnnl_check(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "stream");

  const size_t num_layers = std::size(kLayers);
  std::vector<std::unique_ptr<AnvilConv>> anvil_convs;
  double compile_total = 0;
  for (const Layer& l : kLayers) {
    anvil_convs.push_back(std::make_unique<AnvilConv>(shape_of(l), config));
    compile_total += anvil_convs.back()->compile_seconds;
  }
  std::printf("Anvil schedule: oc_block %d, ow_block %s, rows per task %s; compile time (22 kernels): %.2f s\n\n",
              config.oc_block, ow_block > 0 ? std::to_string(ow_block).c_str() : "auto",
              rows_per_task > 0 ? std::to_string(rows_per_task).c_str() : "auto", compile_total);

  bool check_ok = true;
  double worst_diff = 0;
  std::vector<std::vector<Row>> rows(std::size(kThreads), std::vector<Row>(num_layers));
  std::vector<std::string> impls(num_layers);
  for (size_t t = 0; t < std::size(kThreads); ++t) {
    int threads = kThreads[t];
    omp_set_num_threads(threads);
    anvil::runtime::ThreadPool::global().resize(threads);
    for (size_t i = 0; i < num_layers; ++i) {
      Conv2dShape s = shape_of(kLayers[i]);
      AnvilConv& a = *anvil_convs[i];
      OneDnnConv d(engine, stream, s);  // created after the thread count is set
      impls[i] = d.impl;
      std::mt19937 rng(kSeed + static_cast<unsigned>(i));
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      size_t n_data = static_cast<size_t>(s.batch) * s.in_channels * s.height * s.width;
      size_t n_w = static_cast<size_t>(s.out_channels) * s.in_channels * s.kernel_h * s.kernel_w;
      size_t n_out = static_cast<size_t>(s.batch) * s.out_channels * s.out_height() * s.out_width();
      for (size_t j = 0; j < n_data; ++j) f32(a.data)[j] = d.user_data(0)[j] = dist(rng);
      for (size_t j = 0; j < n_w; ++j) f32(a.weight_oihw)[j] = d.user_data(1)[j] = dist(rng);
      std::vector<float> packed = anvil::ops::pack_conv2d_weight(s, f32(a.weight_oihw), config.oc_block);
      std::memcpy(f32(a.weight_packed), packed.data(), packed.size() * sizeof(float));

      // Check: Anvil (both variants) against oneDNN on this layer.
      d.run_with_reorders();
      for (anvil::Function* fn : {&a.prepacked_fn, &a.packing_fn}) {
        std::fill(f32(a.out), f32(a.out) + n_out, NAN);
        if (fn == &a.prepacked_fn)
          (*fn)(a.data, a.weight_packed, a.out);
        else
          (*fn)(a.data, a.weight_oihw, a.out);
        double diff = 0;
        for (size_t j = 0; j < n_out; ++j) {
          double e = std::fabs(static_cast<double>(f32(a.out)[j]) - d.user_data(2)[j]);
          diff = std::isnan(e) ? INFINITY : std::max(diff, e);
        }
        worst_diff = std::max(worst_diff, diff);
        if (!(diff <= kCheckTolerance)) {
          check_ok = false;
          std::fprintf(stderr, "CHECK FAILED: %s, %d threads: max |anvil - onednn| = %g\n", kLayers[i].name, threads, diff);
        }
      }

      double flops = s.flops() * 1e-9;
      Row& row = rows[t][i];
      row.anvil = flops / time_per_call([&] { a.prepacked_fn(a.data, a.weight_packed, a.out); }, repeats);
      row.onednn = flops / time_per_call([&] { d.run_primitive(); }, repeats);
      row.anvil_incl = flops / time_per_call([&] { a.packing_fn(a.data, a.weight_oihw, a.out); }, repeats);
      row.onednn_incl = flops / time_per_call([&] { d.run_with_reorders(); }, repeats);
    }
  }
  double load_after = anvil::bench::load_average();

  std::printf("%-14s %-28s %6s %3s | %9s %9s %6s | %9s %9s %6s\n", "layer", "shape (C x H x W -> K)", "GFLOP", "thr",
              "anvil", "onednn", "ratio", "anvil", "onednn", "ratio");
  std::printf("%-14s %-28s %6s %3s | %-26s | %-26s\n", "", "", "", "", "kernel (GFLOP/s)", "incl. reorders (GFLOP/s)");
  std::vector<double> log_sum(std::size(kThreads), 0), log_sum_incl(std::size(kThreads), 0);
  for (size_t t = 0; t < std::size(kThreads); ++t) {
    for (size_t i = 0; i < num_layers; ++i) {
      Conv2dShape s = shape_of(kLayers[i]);
      const Row& r = rows[t][i];
      std::printf("%-14s %-28s %6.3f %3d | %9.1f %9.1f %6.2f | %9.1f %9.1f %6.2f\n", kLayers[i].name,
                  s.to_string().c_str(), s.flops() * 1e-9, kThreads[t], r.anvil, r.onednn, r.anvil / r.onednn,
                  r.anvil_incl, r.onednn_incl, r.anvil_incl / r.onednn_incl);
      log_sum[t] += std::log(r.anvil / r.onednn);
      log_sum_incl[t] += std::log(r.anvil_incl / r.onednn_incl);
    }
  }
  std::vector<double> geo(std::size(kThreads)), geo_incl(std::size(kThreads));
  for (size_t t = 0; t < std::size(kThreads); ++t) {
    geo[t] = std::exp(log_sum[t] / num_layers);
    geo_incl[t] = std::exp(log_sum_incl[t] / num_layers);
    std::printf("geometric mean ratio anvil/onednn, %d thread(s): kernel %.3f, incl. reorders %.3f\n", kThreads[t],
                geo[t], geo_incl[t]);
  }
  std::printf("oneDNN implementations:");
  for (size_t i = 0; i < num_layers; ++i) std::printf(" %s=%s%s", kLayers[i].name, impls[i].c_str(), i + 1 < num_layers ? "," : "\n");
  std::printf("check (every layer, both Anvil variants vs oneDNN): %s, max |difference| %.2g (tolerance %.0e)\n",
              check_ok ? "ok" : "FAILED", worst_diff, kCheckTolerance);
  std::printf("load average (1 min): %.2f before, %.2f after\n", load_before, load_after);
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(engine);

  char json[1024];
  std::snprintf(json, sizeof json,
                "{\"bench\": \"ops\", \"op\": \"conv2d\", \"model\": \"resnet18\", \"cpu\": \"%s\", \"onednn\": \"%s\", "
                "\"geomean_ratio_1t\": %.3f, \"geomean_ratio_2t\": %.3f, \"geomean_ratio_incl_reorders_1t\": %.3f, "
                "\"geomean_ratio_incl_reorders_2t\": %.3f, \"oc_block\": %d, \"ow_block\": %d, \"rows_per_task\": %d, \"check\": \"%s\", \"load_before\": %.2f, \"load_after\": %.2f}",
                anvil::bench::json_escape(cpu).c_str(), onednn_version().c_str(), geo[0], geo[1], geo_incl[0], geo_incl[1],
                config.oc_block, ow_block, rows_per_task, check_ok ? "ok" : "failed", load_before, load_after);
  std::printf("%s\n", json);
  return check_ok ? 0 : 1;
}
