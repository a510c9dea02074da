#include "anvil/frontend/onnx/external_data.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "anvil/base/error.h"

namespace anvil::frontend::onnx {
namespace fs = std::filesystem;

namespace {

std::string external_label(const TensorProto& tensor) { return str_cat("tensor '", tensor.name(), "': external data"); }

uint64_t parse_byte_count(const std::string& label, const std::string& key, const std::string& text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    value_error(label, ": '", key, "' is '", text, "'; expected a non-negative decimal byte count below 2^64");
  }
  return value;
}

// Refuses locations that could leave the model's directory; returns the relative path.
fs::path checked_location(const std::string& label, const std::string& location) {
  if (location.empty())
    value_error(label, ": 'location' is empty; expected a file name relative to the model's directory");
  if (location.find('\0') != std::string::npos) value_error(label, ": 'location' contains a NUL character");
  fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_directory() || rel.has_root_name()) {
    value_error(label, ": location '", location,
                "' is an absolute path; expected a path relative to the model's directory");
  }
  for (const fs::path& part : rel) {
    if (part == "..") {
      value_error(label, ": location '", location,
                  "' leaves the model's directory (a '..' component); expected a path inside it");
    }
  }
  return rel;
}

}  // namespace

bool has_external_data(const TensorProto& tensor) {
  return tensor.has_data_location() && tensor.data_location() == TensorProto::EXTERNAL;
}

ExternalDataRef resolve_external_data(const TensorProto& tensor, const fs::path& base_dir) {
  const std::string label = external_label(tensor);
  std::optional<std::string> location, offset_text, length_text;
  for (const StringStringEntryProto& entry : tensor.external_data()) {
    std::optional<std::string>* slot = entry.key() == "location" ? &location
                                       : entry.key() == "offset" ? &offset_text
                                       : entry.key() == "length" ? &length_text
                                                                 : nullptr;
    if (!slot) continue;  // "checksum" and keys of future ONNX versions
    if (slot->has_value()) value_error(label, ": the key '", entry.key(), "' appears twice");
    *slot = entry.value();
  }
  if (!location) value_error(label, ": no 'location' entry; expected the file holding the data");
  fs::path rel = checked_location(label, *location);
  if (base_dir.empty()) {
    value_error(label, " in '", *location,
                "', but the model was not loaded from a file: no directory to resolve it against "
                "(load the model by path)");
  }

  ExternalDataRef ref;
  ref.path = base_dir / rel;
  std::error_code ec;
  fs::file_status status = fs::status(ref.path, ec);
  if (ec || !fs::exists(status)) {
    io_error(label, ": cannot open '", ref.path.string(),
             "': ", ec ? ec.message() : std::generic_category().message(ENOENT));
  }
  if (!fs::is_regular_file(status)) io_error(label, ": '", ref.path.string(), "' is not a regular file");
  uint64_t file_size = fs::file_size(ref.path, ec);
  if (ec) io_error(label, ": cannot read the size of '", ref.path.string(), "': ", ec.message());

  ref.offset = offset_text ? parse_byte_count(label, "offset", *offset_text) : 0;
  if (ref.offset > file_size) {
    value_error(label, ": offset ", ref.offset, " is beyond the end of '", ref.path.string(), "' (", file_size,
                " bytes)");
  }
  ref.length = length_text ? parse_byte_count(label, "length", *length_text) : file_size - ref.offset;
  if (ref.length > file_size - ref.offset) {
    value_error(label, ": offset ", ref.offset, " + length ", ref.length, " is beyond the end of '", ref.path.string(),
                "' (", file_size, " bytes)");
  }
  return ref;
}

void read_external_data(const ExternalDataRef& ref, std::string_view tensor_name, void* dst) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(ref.path.c_str(), "rb"), &std::fclose);
  if (!file) {
    io_error("tensor '", tensor_name, "': external data: cannot open '", ref.path.string(),
             "': ", std::strerror(errno));
  }
  if (ref.offset > 0 && fseeko(file.get(), static_cast<off_t>(ref.offset), SEEK_SET) != 0) {
    io_error("tensor '", tensor_name, "': external data: cannot seek to ", ref.offset, " in '", ref.path.string(),
             "': ", std::strerror(errno));
  }
  size_t got = ref.length ? std::fread(dst, 1, ref.length, file.get()) : 0;
  if (got != ref.length) {
    io_error("tensor '", tensor_name, "': external data: read ", got, " of ", ref.length, " bytes at offset ",
             ref.offset, " of '", ref.path.string(), "' (the file changed or cannot be read)");
  }
}

}  // namespace anvil::frontend::onnx
