// dlopen-based kernel libraries and the wrapping of their C entry points as Functions.
#include "anvil/runtime/module/library_module.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstring>

#include "anvil/base/error.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/module/blob.h"
#include "anvil/runtime/module/elf_check.h"
#include "anvil/runtime/runtime_api.h"

namespace anvil {
namespace {

class LibraryModuleNode final : public ModuleNode {
 public:
  LibraryModuleNode(std::string path, void* handle) : path_(std::move(path)), handle_(handle) {}
  // Functions from this library hold a reference to this node, so when it dies nothing can
  // call into the library any more.
  ~LibraryModuleNode() override { dlclose(handle_); }

  std::string kind() const override { return kLibraryModuleKind; }

  std::optional<Function> get_local_function(const std::string& name) override {
    void* sym = dlsym(handle_, (std::string(kKernelSymbolPrefix) + name).c_str());
    if (sym == nullptr) return std::nullopt;
    // The Function keeps the library alive, so a kernel never outlives its code.
    return make_kernel_function(reinterpret_cast<AnvilKernelFn>(sym), name, Ref<Object>(this));
  }

  std::vector<std::string> list_functions() const override {
    std::vector<std::string> names;
    auto* table = static_cast<const char*>(dlsym(handle_, kFunctionNamesSymbol));
    if (table == nullptr) return names;
    // NUL-separated names ending with an empty name; capped so a corrupt table cannot run away.
    for (int i = 0; i < 1 << 20 && *table; ++i) {
      names.emplace_back(table);
      table += names.back().size() + 1;
    }
    return names;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* handle_;
};

}  // namespace

Function make_kernel_function(AnvilKernelFn kernel, const std::string& name, Ref<Object> owner) {
  std::string label = name;
  return Function::from_packed(
      [kernel, owner = std::move(owner), label](Args args) -> Value {
        thread_local AbiArgs abi;  // reused: no allocation per call once warmed up
        to_abi_args(args, &abi);
        AnvilValue ret{};
        ret.kind = kAnvilNull;
        int32_t status = kernel(abi.cells.data(), static_cast<int32_t>(abi.cells.size()), &ret);
        if (status != 0) {
          int32_t kind = 0;
          std::string message = take_kernel_error(&kind);
          throw Error(error_kind_from_code(kind),
                      str_cat("kernel '", label, "' failed: ", message.empty() ? "(no message set)" : message));
        }
        return from_abi_return(ret);
      },
      name);
}

Module load_library_module(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) io_error("load_module: cannot open '", path, "': ", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) io_error("load_module: '", path, "' is not a regular file");
  check_elf_library(path);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    io_error("load_module: '", path, "' is not a loadable shared library: ", why ? why : "unknown dlopen error");
  }
  Module library(make_object<LibraryModuleNode>(path, handle));

  if (auto* version = static_cast<const uint32_t*>(dlsym(handle, kAbiVersionSymbol))) {
    if (*version > ANVIL_ABI_VERSION)
      value_error("load_module: '", path, "' was built for kernel ABI version ", *version,
                  " but this runtime supports up to version ", ANVIL_ABI_VERSION);
  }
  if (auto* slot = static_cast<const AnvilRuntimeApi**>(dlsym(handle, kRuntimeApiSymbol))) *slot = AnvilGetRuntimeApi();

  auto* blob = static_cast<const char*>(dlsym(handle, kBlobSymbol));
  if (blob == nullptr) return library;
  auto* blob_size = static_cast<const uint64_t*>(dlsym(handle, kBlobSizeSymbol));
  if (blob_size == nullptr)
    value_error("load_module: '", path, "' has a module blob but no ", kBlobSizeSymbol, " symbol");
  try {
    return unpack_module_tree(std::string_view(blob, *blob_size), library);
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat("load_module: '", path, "': ", e.what()));
  }
}

Module Module::load_from_file(const std::string& path) { return load_library_module(path); }

}  // namespace anvil
