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

#include "anvil/rpc/link_inputs.h"
#include "anvil/rpc/log.h"
#include "anvil/rpc/protocol.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/profiling/time_evaluator.h"
#include "anvil/runtime/registry.h"

extern char** environ;

namespace anvil::rpc {
namespace fs = std::filesystem;

namespace {

// `path` is `root` or below it, comparing whole components (no file system access).
bool lexically_within(const fs::path& path, const fs::path& root) {
  auto [root_end, unused] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  (void)unused;
  return root_end == root.end();
}

// The name with its control characters written as \xNN, for messages.
std::string printable_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

fs::path resolve_in_workdir(const fs::path& work_dir, const std::string& name) {
  if (name.empty()) value_error("path: an empty file name names nothing in the session directory");
  // A NUL would cut the name short at the system call; the other control characters confuse
  // listings and logs.
  if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    value_error("path '", printable_name(name),
                "': file names may not contain NUL or other control characters (bytes 0x00-0x1f, 0x7f)");
  }
  std::error_code ec;
  fs::path root = fs::canonical(work_dir, ec);
  if (ec) io_error("path: the session directory ", work_dir, " is gone: ", ec.message());
  fs::path given(name);
  for (const fs::path& part : given) {
    if (part == "..") value_error("path '", name, "': '..' is not allowed; paths stay inside the session directory");
  }
  // An absolute path outside is refused before the file system is asked anything about it, so
  // the answer is the same whether or not the outside file exists.
  if (given.is_absolute()) {
    fs::path normal = given.lexically_normal();
    fs::path spelled = work_dir.lexically_normal();  // the directory as given, before resolving links
    if (!spelled.has_filename()) spelled = spelled.parent_path();
    if (!lexically_within(normal, root) && !(spelled.is_absolute() && lexically_within(normal, spelled))) {
      value_error("path '", name, "' leads outside the session directory");
    }
  }
  fs::path joined = given.is_absolute() ? given : root / given;
  // weakly_canonical resolves the symbolic links of the part that exists.
  fs::path resolved = fs::weakly_canonical(joined, ec);
  if (ec) value_error("path '", name, "' cannot be resolved: ", ec.message());
  if (!lexically_within(resolved, root)) value_error("path '", name, "' leads outside the session directory");
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

// Extracts `tar` (the client's `name`) into a fresh `<tar>.d` and returns its .o and .a members,
// each checked (link_inputs.h). A member that is a symbolic link or a special file is refused and
// the extraction removed: a link left in the session directory could lead out of it.
std::vector<fs::path> extract_link_inputs(const fs::path& tar, const std::string& name) {
  fs::path dir = tar;
  dir += ".d";
  std::error_code ec;
  fs::remove_all(dir, ec);  // an earlier extraction; remove_all does not follow links
  fs::create_directories(dir);
  std::vector<std::string> argv = {"tar", "--no-same-owner", "--no-same-permissions", "-xf", tar.string(), "-C", dir.string()};
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, "tar", nullptr, nullptr, raw.data(), environ) != 0) io_error("cannot run tar");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fs::remove_all(dir, ec);
    io_error("tar -xf ", name, " failed with status ", status);
  }
  std::vector<fs::path> inputs;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    fs::file_status st = entry.symlink_status();
    if (fs::is_directory(st)) continue;
    std::string member = entry.path().lexically_relative(dir).string();
    if (!fs::is_regular_file(st)) {
      fs::remove_all(dir, ec);
      value_error("'", name, "' member '", member, "' is ", fs::is_symlink(st) ? "a symbolic link" : "not a regular file",
                  "; a tar to link may hold only regular files and directories");
    }
    std::string ext = entry.path().extension().string();
    if (ext != ".o" && ext != ".a") continue;
    check_link_input_file(entry.path(), str_cat("'", name, "' member '", member, "'"));
    inputs.push_back(entry.path());
  }
  if (inputs.empty()) value_error("load_module: ", name, " holds no object files to link");
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

// X.so as is; X.o and X.tar linked into X.o.so / X.tar.so next to them (as TVM's servers do).
// Every input is checked to be an object file or an archive of them (link_inputs.h).
fs::path linked_library(const fs::path& work_dir, const std::string& name) {
  fs::path path = resolve_in_workdir(work_dir, name);
  std::string ext = path.extension().string();
  if (ext == ".so" || ext == ".dylib") return path;
  std::vector<fs::path> inputs;
  if (ext == ".o") {
    check_link_input_file(path, "'" + name + "'");
    inputs.push_back(path);
  } else if (ext == ".tar") {
    inputs = extract_link_inputs(path, name);
  } else {
    value_error("Do not know how to link ", name);
  }
  fs::path output = path;
  output += ".so";
  std::error_code ec;
  fs::remove(output, ec);  // an earlier output, or a link in its place, is replaced, not written through
  link_shared_library(output, inputs);
  return output;
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
// A global is looked up as the client's GetGlobalFunc would: the session's own functions first
// (so the evaluator cannot reach the unconfined runtime.load_module), then the registry.
Value rpc_time_evaluator(const SessionFunctions& session, Args args) {
  if (args.size() != 12) type_error("runtime.RPCTimeEvaluator expects 12 arguments but got ", args.size());
  std::string name = args[1].as_string();
  std::optional<Function> f;
  if (args[0].is_null()) {
    auto own = session.find(name);
    f = own != session.end() ? std::optional<Function>(own->second) : Registry::find(name);
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
  // Module loading by path stays in the session directory too (the server's --load-library is
  // opened with dlopen at session start, not through this). The message for an outside path is
  // the same whether or not the file exists: resolve_in_workdir asks the file system nothing then.
  typed("runtime.load_module", [work_dir](const std::string& path) {
    fs::path lib = resolve_in_workdir(work_dir, path);
    log_info("runtime.load_module ", lib.filename().string());
    return Module::load_from_file(lib.string());
  });
  packed("runtime.RPCTimeEvaluator", [session = out](Args args) { return rpc_time_evaluator(session, args); });
  typed("ffi.SystemLib", []() { return Module(make_object<SystemLibModule>()); });
  return out;
}

void register_server_functions(const fs::path& work_dir, uint64_t max_packet_bytes) {
  for (auto& [name, fn] : server_functions(work_dir, max_packet_bytes)) Registry::set(name, fn, /*override_existing=*/true);
}

}  // namespace anvil::rpc
