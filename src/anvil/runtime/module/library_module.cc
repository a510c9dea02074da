// dlopen-based kernel libraries and the wrapping of their C entry points as Functions.
#include "anvil/runtime/module/library_module.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>
#include <memory>

#include "anvil/base/error.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/module/blob.h"
#include "anvil/runtime/module/elf_check.h"
#include "anvil/runtime/runtime_api.h"

namespace anvil {
namespace {

class LibraryModuleNode final : public ModuleNode {
 public:
  // `mapping` owns the dlopen handle (dlclose when the last holder goes): this node, and the VM
  // constants used in place from the blob, which cannot hold the node itself (it imports their
  // executable: a cycle).
  LibraryModuleNode(std::string path, std::shared_ptr<void> mapping, ElfLoadInfo layout, uintptr_t base)
      : path_(std::move(path)), mapping_(std::move(mapping)), handle_(mapping_.get()), layout_(std::move(layout)),
        base_(base) {}
  // Functions from this library hold a reference to this node, so when it dies nothing can
  // call into the library any more.

  const std::shared_ptr<void>& mapping() const { return mapping_; }

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
    // NUL-separated names ending with an empty name; read only inside the library's segment, so
    // a corrupt table cannot run away.
    uint64_t limit = readable_bytes(table);
    for (uint64_t at = 0; at < limit && table[at] != '\0';) {
      const void* nul = std::memchr(table + at, '\0', limit - at);
      if (nul == nullptr) break;
      names.emplace_back(table + at);
      at += names.back().size() + 1;
    }
    return names;
  }

  // True when [p, p + n) lies inside this library's readable (or, `for_writing`, writable and
  // never write-protected) memory.
  bool holds(const void* p, uint64_t n, bool for_writing = false) const {
    auto addr = reinterpret_cast<uintptr_t>(p);
    return addr >= base_ && layout_.contains(addr - base_, n, for_writing);
  }

  // How many bytes from p on lie inside the same readable segment (0 when p is outside).
  uint64_t readable_bytes(const void* p) const {
    auto addr = reinterpret_cast<uintptr_t>(p);
    if (addr < base_) return 0;
    for (const ElfLoadInfo::Range& r : layout_.segments)
      if (addr - base_ >= r.begin && addr - base_ < r.end) return r.end - (addr - base_);
    return 0;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::shared_ptr<void> mapping_;
  void* handle_;
  ElfLoadInfo layout_;
  uintptr_t base_;
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
  ElfLoadInfo layout = check_elf_library(path);
  // dlopen searches the library path for a name without a slash (and finds a system library of
  // the same name first); here a name always means the file that was just checked.
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    io_error("load_module: '", path, "' is not a loadable shared library: ", why ? why : "unknown dlopen error");
  }
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) {
    dlclose(handle);
    io_error("load_module: '", path, "': cannot find where the library was loaded");
  }
  std::shared_ptr<void> mapping(handle, [](void* h) { dlclose(h); });
  auto node = make_object<LibraryModuleNode>(path, std::move(mapping), std::move(layout),
                                             static_cast<uintptr_t>(map->l_addr));
  const LibraryModuleNode& lib = *node;
  Module library(std::move(node));
  // The loader's own symbols are read (and one written) only where the ELF check saw them.
  auto symbol = [&](const char* name, uint64_t bytes, bool for_writing = false) -> void* {
    void* p = dlsym(handle, name);
    if (p != nullptr && !lib.holds(p, bytes, for_writing))
      io_error("load_module: '", path, "' is not a loadable shared library: its symbol ", name, " lies outside its ",
               for_writing ? "writable " : "", "segments");
    return p;
  };

  if (auto* version = static_cast<const uint32_t*>(symbol(kAbiVersionSymbol, sizeof(uint32_t)))) {
    if (*version > ANVIL_ABI_VERSION)
      value_error("load_module: '", path, "' was built for kernel ABI version ", *version,
                  " but this runtime supports up to version ", ANVIL_ABI_VERSION);
  }
  if (auto* slot = static_cast<const AnvilRuntimeApi**>(symbol(kRuntimeApiSymbol, sizeof(void*), true)))
    *slot = AnvilGetRuntimeApi();

  auto* blob = static_cast<const char*>(dlsym(handle, kBlobSymbol));
  if (blob == nullptr) return library;
  auto* blob_size = static_cast<const uint64_t*>(symbol(kBlobSizeSymbol, sizeof(uint64_t)));
  if (blob_size == nullptr)
    value_error("load_module: '", path, "' has a module blob but no ", kBlobSizeSymbol, " symbol");
  if (!lib.holds(blob, *blob_size))
    value_error("load_module: '", path, "': the module blob's size (", *blob_size,
                " bytes) runs past the end of its segment (the library is corrupt)");
  try {
    // The blob stays mapped while `mapping` lives, so modules may keep views of it (the VM
    // executable's weights are not copied).
    return unpack_module_tree(std::string_view(blob, *blob_size), library, lib.mapping());
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat("load_module: '", path, "': ", e.what()));
  }
}

Module Module::load_from_file(const std::string& path) { return load_library_module(path); }

}  // namespace anvil
