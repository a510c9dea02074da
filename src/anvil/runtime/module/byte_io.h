// Little-endian byte writer and a bounds-checked reader for Anvil's binary formats (module blob,
// params, later the VM executable). Every read checks the remaining length first and throws a
// ValueError that names the format, the field and the offset.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "anvil/base/error.h"

namespace anvil {

class ByteWriter {
 public:
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  void put(T v) {
    // Anvil only targets little-endian hosts (x86-64, aarch64); checked at compile time.
    static_assert(std::endian::native == std::endian::little);
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void put_bytes(std::string_view data) { out_.append(data); }
  void put_string(std::string_view s) {
    put<uint64_t>(s.size());
    out_.append(s);
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

class ByteReader {
 public:
  ByteReader(std::string_view data, std::string_view what) : data_(data), what_(what) {}

  template <typename T>
    requires std::is_trivially_copyable_v<T>
  T get(std::string_view field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string_view get_bytes(size_t n, std::string_view field) {
    need(n, field);
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  std::string_view get_string(std::string_view field) {
    uint64_t n = get<uint64_t>(field);
    return get_bytes(n, field);
  }
  // A count of items of at least min_item_bytes each; rejects counts the data cannot hold, so a
  // corrupt count never drives a huge allocation.
  uint64_t get_count(std::string_view field, size_t min_item_bytes) {
    uint64_t n = get<uint64_t>(field);
    if (min_item_bytes > 0 && n > remaining() / min_item_bytes)
      value_error(what_, ": ", field, " = ", n, " at offset ", pos_ - 8, " exceeds what the remaining ", remaining(),
                  " bytes can hold");
    return n;
  }
  size_t offset() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  [[noreturn]] void fail(std::string_view message) const { value_error(what_, ": ", message, " (at offset ", pos_, ")"); }

 private:
  void need(uint64_t n, std::string_view field) const {
    if (n > data_.size() - pos_)
      value_error(what_, ": truncated while reading ", field, " at offset ", pos_, ": need ", n, " bytes, ",
                  data_.size() - pos_, " left");
  }
  std::string_view data_;
  std::string_view what_;
  size_t pos_ = 0;
};

}  // namespace anvil
