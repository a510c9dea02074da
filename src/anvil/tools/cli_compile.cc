// `anvil compile model.onnx -o model.so`: import, graph passes, kernels, link — one library
// that runs wherever the runtime runs. Progress and stage times go to stderr.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/importer.h"
#include "anvil/pipeline/compile.h"
#include "anvil/pipeline/export_library.h"
#include "anvil/rpc/cli_options.h"
#include "anvil/target/target.h"
#include "anvil/tools/anvil_commands.h"

namespace anvil::tools {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One line per stage; kernel progress rewrites its line on a terminal, else every 10 %.
class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0) {}
  void stage(const std::string& what, double seconds) const {
    if (!quiet_) std::fprintf(stderr, "anvil compile: %-40s %8.2f s\n", what.c_str(), seconds);
  }
  void step(const std::string& stage, int done, int total, double seconds) {
    if (quiet_ || total <= 0) return;
    int decile = done * 10 / total;
    if (done == total) {
      if (tty_) std::fprintf(stderr, "\r");
      stage_line(stage + " " + std::to_string(done) + "/" + std::to_string(total), seconds);
      last_decile_ = -1;
      return;
    }
    if (tty_) {
      std::fprintf(stderr, "\ranvil compile: %s %d/%d", stage.c_str(), done, total);
      std::fflush(stderr);
    } else if (decile != last_decile_) {
      std::fprintf(stderr, "anvil compile: %s %d/%d\n", stage.c_str(), done, total);
    }
    last_decile_ = decile;
  }

 private:
  void stage_line(const std::string& what, double seconds) const { stage(what, seconds); }
  bool quiet_, tty_;
  int last_decile_ = -1;
};

}  // namespace

int compile_main(int argc, char** argv) {
  CLI::App app{"Compile an ONNX model into one shared library that the Anvil runtime loads and runs.", "anvil compile"};
  rpc::cli::setup(app);
  std::string model, output, target_text = "llvm", shapes_text, dump_dir;
  int opt_level = 2;
  bool quiet = false;
  app.add_option("model", model, "the ONNX model (.onnx)")->required();
  app.add_option("-o,--output", output, "the library to write (model.so)")->required();
  app.add_option("--target", target_text, "target string, e.g. \"llvm -mcpu=native\" (default llvm: this host)");
  app.add_option("--input-shapes", shapes_text,
                 "pin input shapes: name:1x3x224x224[,name2:...] or tvmc's name:[1,3,224,224]; symbolic dims stay "
                 "symbolic otherwise");
  app.add_option("--opt-level", opt_level, "0 (no graph optimisation) to 3 (default 2)")->check(CLI::Range(0, 3));
  app.add_option("--dump-ir", dump_dir, "write the IR after every stage into DIR");
  app.add_flag("-q,--quiet", quiet, "no progress output");
  if (auto code = rpc::cli::parse(app, argc, argv)) return *code;

  Progress progress(quiet);
  try {
    frontend::onnx::ImportOptions import_options;
    if (!shapes_text.empty()) import_options.input_shapes = parse_input_shapes(shapes_text);
    Target target = Target::parse(target_text);
    auto t0 = Clock::now();
    graph::IRModule mod = frontend::onnx::from_onnx_file(model, import_options);
    progress.stage("import " + std::filesystem::path(model).filename().string(), seconds_since(t0));
    pipeline::CompileOptions options;
    options.opt_level = opt_level;
    options.dump_ir_dir = dump_dir;
    options.progress = [&](const std::string& stage, int done, int total, double seconds) {
      progress.step(stage, done, total, seconds);
    };
    auto t1 = Clock::now();
    Module lib = pipeline::compile_to_module(mod, target, options);
    progress.stage("compile (passes, kernels)", seconds_since(t1));
    auto t2 = Clock::now();
    pipeline::export_library(lib, output);
    progress.stage("link " + output, seconds_since(t2));
    progress.stage("total", seconds_since(t0));
  } catch (const Error& e) {
    std::cerr << "anvil compile: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace anvil::tools
