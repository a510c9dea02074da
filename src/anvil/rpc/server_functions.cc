// The tvm.rpc.server.* globals of a session (see server_functions.h): confined file operations,
// module loading and linking, module helpers, the remote time evaluator and the system library.
#include "anvil/rpc/server_functions.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "anvil/rpc/log.h"
#include "anvil/rpc/protocol.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/profiling/time_evaluator.h"
#include "anvil/runtime/registry.h"

extern char** environ;

namespace anvil::rpc {
namespace fs = std::filesystem;

fs::path resolve_in_workdir(const fs::path& work_dir, const std::string& name) {
  if (name.empty()) value_error("path: an empty file name names nothing in the session directory");
  std::error_code ec;
  fs::path root = fs::canonical(work_dir, ec);
  if (ec) io_error("path: the session directory ", work_dir, " is gone: ", ec.message());
  fs::path given(name);
  fs::path joined = given.is_absolute() ? given : root / given;
  for (const fs::path& part : given) {
    if (part == "..") value_error("path '", name, "': '..' is not allowed; paths stay inside the session directory");
  }
  // weakly_canonical resolves the symbolic links of the part that exists.
  fs::path resolved = fs::weakly_canonical(joined, ec);
  if (ec) value_error("path '", name, "' cannot be resolved: ", ec.message());
  auto [root_end, unused] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
  (void)unused;
  if (root_end != root.end()) value_error("path '", name, "' leads outside the session directory");
  return resolved;
}

void link_shared_library(const fs::path& output, const std::vector<fs::path>& inputs) {
  const char* cxx = std::getenv("CXX");
  std::vector<std::string> argv = {cxx != nullptr && *cxx != '\0' ? cxx : "c++", "-shared", "-fPIC", "-o", output.string()};
  for (const fs::path& in : inputs) argv.push_back(in.string());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  pid_t pid = 0;
  if (int err = posix_spawnp(&pid, raw[0], nullptr, nullptr, raw.data(), environ); err != 0) {
    io_error("link: cannot run '", argv[0], "': ", std::strerror(err));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    io_error("link: '", argv[0], " -shared -o ", output.filename().string(), "' failed with status ", status);
  }
}

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) io_error("Cannot open ", path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const fs::path& path, const std::string& data) {
  fs::create_directories(path.parent_path());
  // O_NOFOLLOW: a link planted at the target between resolution and open is not followed.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) io_error("upload: cannot open ", path.string(), ": ", std::strerror(errno));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      io_error("upload: writing ", path.string(), " failed: ", std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

// X.so as is; X.o and X.tar linked into X.o.so / X.tar.so next to them (as TVM's servers do).
fs::path linked_library(const fs::path& work_dir, const std::string& name) {
  fs::path path = resolve_in_workdir(work_dir, name);
  std::string ext = path.extension().string();
  if (ext == ".so" || ext == ".dylib") return path;
  fs::path output = path;
  output += ".so";
  if (ext == ".o") {
    link_shared_library(output, {path});
    return output;
  }
  if (ext == ".tar") {
    fs::path dir = path;
    dir += ".d";
    fs::create_directories(dir);
    std::vector<std::string> argv = {"tar", "-xf", path.string(), "-C", dir.string()};
    std::vector<char*> raw;
    for (std::string& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawnp(&pid, "tar", nullptr, nullptr, raw.data(), environ) != 0) io_error("cannot run tar");
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) io_error("tar -xf ", name, " failed with status ", status);
    std::vector<fs::path> objects;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file() && !entry.is_symlink() && entry.path().extension() == ".o") objects.push_back(entry.path());
    }
    if (objects.empty()) value_error("load_module: ", name, " holds no object files to link");
    std::sort(objects.begin(), objects.end());
    link_shared_library(output, objects);
    return output;
  }
  value_error("Do not know how to link ", name);
}

// TVM's system library: the functions compiled into the server binary itself. Anvil servers have
// none of their own; functions registered as "system_lib.<name>" appear here.
class SystemLibModule final : public ModuleNode {
 public:
  std::string kind() const override { return "system_lib"; }
  std::optional<Function> get_local_function(const std::string& name) override {
    return Registry::find("system_lib." + name);
  }
};

int option(Args args, size_t i, const char* name) {
  int64_t v = args[i].as_int();
  if (v < INT32_MIN || v > INT32_MAX) value_error("RPCTimeEvaluator: ", name, " = ", v, " does not fit in an int");
  return static_cast<int>(v);
}

// runtime.RPCTimeEvaluator(module|None, name, dev_type, dev_id, number, repeat, min_repeat_ms,
//   limit_zero_time_iterations, cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes,
//   f_preproc_name) -> Function returning Bytes of `repeat` doubles (seconds per call).
Value rpc_time_evaluator(Args args) {
  if (args.size() != 12) type_error("runtime.RPCTimeEvaluator expects 12 arguments but got ", args.size());
  std::string name = args[1].as_string();
  std::optional<Function> f;
  if (args[0].is_null()) {
    f = Registry::find(name);
  } else {
    f = args[0].as_module().find_function(name, true);
  }
  if (!f) value_error("RPCTimeEvaluator: no function named '", name, "'");
  int64_t dev_type = args[2].as_int();
  if (dev_type < 0 || dev_type > kMaxDeviceType) value_error("RPCTimeEvaluator: device type ", dev_type, " is invalid");
  Device dev{static_cast<DLDeviceType>(dev_type), static_cast<int32_t>(args[3].as_int())};
  TimeEvaluatorOptions o;
  o.number = option(args, 4, "number");
  o.repeat = option(args, 5, "repeat");
  o.min_repeat_ms = option(args, 6, "min_repeat_ms");
  o.limit_zero_time_iterations = option(args, 7, "limit_zero_time_iterations");
  o.cooldown_interval_ms = option(args, 8, "cooldown_interval_ms");
  o.repeats_to_cooldown = option(args, 9, "repeats_to_cooldown");
  o.cache_flush_bytes = option(args, 10, "cache_flush_bytes");
  std::string preproc = args[11].is_null() ? "" : args[11].as_string();
  if (preproc == "cache_flush_cpu_non_first_arg") {
    // TVM flushes the argument buffers from the cache before each repeat; the runtime's timer
    // flushes by streaming a buffer larger than the last-level cache instead.
    o.cache_flush_bytes = std::max(o.cache_flush_bytes, 64 << 20);
  } else if (!preproc.empty()) {
    not_implemented_error("RPCTimeEvaluator: f_preproc '", preproc, "' is not supported");
  }
  o.validate("RPCTimeEvaluator");
  Function target = *f;
  return Value(Function::from_packed(
      [target, dev, o](Args call_args) -> Value {
        std::vector<double> seconds = time_evaluate(target, call_args, dev, o);
        return Value::bytes(std::string(reinterpret_cast<const char*>(seconds.data()), seconds.size() * sizeof(double)));
      },
      "rpc_time_evaluator." + name));
}

}  // namespace

SessionFunctions server_functions(const fs::path& work_dir, uint64_t max_packet_bytes) {
  SessionFunctions out;
  auto typed = [&out](const std::string& name, auto fn) { out[name] = Function::from_typed(std::move(fn), name); };
  auto packed = [&out](const std::string& name, PackedBody fn) { out[name] = Function::from_packed(std::move(fn), name); };
  typed("tvm.rpc.server.workpath",
        [work_dir](const std::string& name) { return resolve_in_workdir(work_dir, name).string(); });
  packed("tvm.rpc.server.upload", [work_dir](Args args) -> Value {
    if (args.size() != 2) type_error("tvm.rpc.server.upload expects (name, data) but got ", args.size(), " arguments");
    fs::path path = resolve_in_workdir(work_dir, args[0].as_string());
    write_file(path, args[1].as_bytes());
    log_info("upload ", path.filename().string(), " (", args[1].as_bytes().size(), " bytes)");
    return Value();
  });
  typed("tvm.rpc.server.download", [work_dir](const std::string& name) {
    return Value::bytes(read_file(resolve_in_workdir(work_dir, name)));
  });
  typed("tvm.rpc.server.remove", [work_dir](const std::string& name) {
    if (name.empty()) return;  // MetaSchedule calls remove("") (spec §3.2)
    std::error_code ec;
    fs::remove(resolve_in_workdir(work_dir, name), ec);  // failures are ignored, as in TVM
  });
  typed("tvm.rpc.server.listdir", [work_dir](const std::string& dir) {
    // Entries "<dir>/<name>" joined by ',' with a trailing comma, as TVM's C++ server does.
    fs::path path = resolve_in_workdir(work_dir, dir.empty() ? "." : dir);
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return std::string();
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path, ec)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    std::string out;
    for (const std::string& n : names) out += (dir.empty() ? "." : dir) + "/" + n + ",";
    return out;
  });
  typed("tvm.rpc.server.load_module", [work_dir](const std::string& name) {
    fs::path lib = linked_library(work_dir, name);
    log_info("load_module ", lib.filename().string());
    return Module::load_from_file(lib.string());
  });
  typed("tvm.rpc.server.download_linked_module", [work_dir](const std::string& name) {
    return Value::bytes(read_file(linked_library(work_dir, name)));
  });
  packed("tvm.rpc.server.ModuleGetFunction", [](Args args) -> Value {
    if (args.size() < 2 || args.size() > 3) type_error("ModuleGetFunction expects (module, name, query_imports)");
    bool query_imports = args.size() < 3 || args[2].as_bool();
    std::optional<Function> f = args[0].as_module().find_function(args[1].as_string(), query_imports);
    return f ? Value(*f) : Value();
  });
  packed("tvm.rpc.server.ImportModule", [](Args args) -> Value {
    if (args.size() != 2) type_error("ImportModule expects (parent, child)");
    args[0].as_module().import_module(args[1].as_module());
    return Value();
  });
  typed("tvm.rpc.server.GetCRTMaxPacketSize",
                    [max_packet_bytes]() { return static_cast<int64_t>(max_packet_bytes); });
  packed("runtime.RPCTimeEvaluator", rpc_time_evaluator);
  typed("ffi.SystemLib", []() { return Module(make_object<SystemLibModule>()); });
  return out;
}

void register_server_functions(const fs::path& work_dir, uint64_t max_packet_bytes) {
  for (auto& [name, fn] : server_functions(work_dir, max_packet_bytes)) Registry::set(name, fn, /*override_existing=*/true);
}

}  // namespace anvil::rpc
