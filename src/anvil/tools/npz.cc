// .npy headers and the zip container of .npz (central directory, zip64, stored/deflate).
#include "anvil/tools/npz.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "anvil/base/error.h"

namespace anvil::tools {
namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";

struct DtypeName {
  const char* descr;  // without the byte-order character
  DataType dtype;
};
const DtypeName kDtypes[] = {
    {"f2", DataType::float16()}, {"f4", DataType::float32()}, {"f8", DataType::float64()},
    {"i1", DataType::int8()},    {"i2", DataType::int16()},   {"i4", DataType::int32()},
    {"i8", DataType::int64()},   {"u1", DataType::uint8()},   {"u2", DataType::uint16()},
    {"u4", DataType::uint32()},  {"u8", DataType::uint64()},  {"b1", DataType::boolean()},
};

uint64_t read_le(std::string_view b, size_t off, int bytes, const std::string& what) {
  // Offsets come from the file (zip64 ones up to 2^64): compared without an addition that wraps.
  if (off > b.size() || static_cast<size_t>(bytes) > b.size() - off)
    value_error(what, ": truncated or bad offset (reads ", bytes, " bytes at ", off, ", has ", b.size(), ")");
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[off + static_cast<size_t>(i)]);
  return v;
}

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The value text of `key` in the header dict ('descr': '<f4', 'shape': (2, 3), ...).
std::string dict_value(const std::string& header, const std::string& key, const std::string& what) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) value_error(what, ": .npy header has no '", key, "': ", header);
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) value_error(what, ": malformed .npy header: ", header);
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) value_error(what, ": malformed .npy header: ", header);
  char open = header[start];
  size_t end;
  if (open == '\'') end = header.find('\'', start + 1) + 1;
  else if (open == '(') end = header.find(')', start) + 1;
  else end = header.find_first_of(",}", start);
  if (end == std::string::npos || end == 0 || end <= start) value_error(what, ": malformed .npy header: ", header);
  return header.substr(start, end - start);
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& what) {
  std::vector<int64_t> shape;
  std::string inner = text.substr(1, text.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t a = item.find_first_not_of(' '), z = item.find_last_not_of(' ');
    if (a == std::string::npos) continue;
    item = item.substr(a, z - a + 1);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 18)
      value_error(what, ": bad dimension '", item, "' in shape ", text);
    shape.push_back(std::stoll(item));
  }
  return shape;
}

std::string inflate_raw(std::string_view data, uint64_t size, const std::string& what) {
  // Deflate expands at most about 1032:1, so a larger claim is corrupt; checking it before the
  // allocation keeps a hostile header from asking for terabytes.
  constexpr uint64_t kMaxDeflateRatio = 1032;
  if (size > static_cast<uint64_t>(data.size()) * kMaxDeflateRatio + 64)
    value_error(what, ": entry claims ", size, " bytes from ", data.size(), " compressed (more than deflate can expand)");
  std::string out(size, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) runtime_error(what, ": zlib init failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(std::min<size_t>(data.size(), std::numeric_limits<uInt>::max()));
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(std::min<uint64_t>(size, std::numeric_limits<uInt>::max()));
  int rc = inflate(&zs, Z_FINISH);
  uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != size) value_error(what, ": corrupt deflate data");
  return out;
}

}  // namespace

Tensor parse_npy(std::string_view b, const std::string& what) {
  if (b.size() < 10 || b.substr(0, 6) != std::string_view(kNpyMagic, 6)) value_error(what, ": not a .npy array (bad magic)");
  int major = static_cast<unsigned char>(b[6]);
  size_t header_len, off;
  if (major == 1) {
    header_len = read_le(b, 8, 2, what);
    off = 10;
  } else if (major == 2 || major == 3) {
    header_len = read_le(b, 8, 4, what);
    off = 12;
  } else {
    value_error(what, ": unsupported .npy version ", major);
  }
  if (off + header_len > b.size()) value_error(what, ": truncated .npy header");
  std::string header(b.substr(off, header_len));
  std::string descr = dict_value(header, "descr", what);
  std::string fortran = dict_value(header, "fortran_order", what);
  std::string shape_text = dict_value(header, "shape", what);
  if (fortran != "False") value_error(what, ": Fortran-order arrays are not supported (save a C-order array)");
  if (descr.size() < 4 || descr.front() != '\'' || descr.back() != '\'')
    value_error(what, ": unsupported dtype ", descr);
  std::string d = descr.substr(1, descr.size() - 2);
  char order = d[0];
  std::string code = d.substr(1);
  bool one_byte = code == "i1" || code == "u1" || code == "b1";
  if (order == '>' && !one_byte) value_error(what, ": big-endian arrays are not supported (dtype ", d, ")");
  if (order != '<' && order != '|' && order != '=' && order != '>') value_error(what, ": unsupported dtype ", d);
  DataType dtype;
  bool found = false;
  for (const DtypeName& n : kDtypes)
    if (code == n.descr) {
      dtype = n.dtype;
      found = true;
    }
  if (!found) value_error(what, ": unsupported dtype ", d, " (expected a number or bool array)");
  if (shape_text.empty() || shape_text.front() != '(') value_error(what, ": bad shape ", shape_text);
  std::vector<int64_t> shape = parse_shape(shape_text, what);
  uint64_t numel = 1;
  for (int64_t s : shape) {
    if (s != 0 && numel > (uint64_t{1} << 40) / static_cast<uint64_t>(s)) value_error(what, ": shape too large");
    numel *= static_cast<uint64_t>(s);
  }
  uint64_t nbytes = numel * static_cast<uint64_t>(dtype.bytes());
  size_t data_off = off + header_len;
  if (b.size() - data_off != nbytes)
    value_error(what, ": data is ", b.size() - data_off, " bytes, expected ", nbytes, " for shape ",
                shape_to_string(shape), " ", dtype);
  Tensor t = Tensor::empty(shape, dtype);
  if (nbytes) std::memcpy(t.data(), b.data() + data_off, nbytes);
  return t;
}

std::string format_npy(const Tensor& t) {
  std::string descr;
  for (const DtypeName& n : kDtypes)
    if (n.dtype == t.dtype()) descr = std::string(t.dtype().bytes() == 1 ? "|" : "<") + n.descr;
  if (descr.empty()) value_error("npy: cannot save dtype ", t.dtype());
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape()[i]);
  shape += t.shape().size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kNpyMagic, 6);
  out.push_back('\x01');
  out.push_back('\x00');
  put_le(out, header.size(), 2);
  out += header;
  Tensor host = t.device().type == kDLCPU ? t : t.copy_to(Device::cpu());
  size_t n = host.nbytes();
  size_t at = out.size();
  out.resize(at + n);
  if (n) host.copy_to_bytes(out.data() + at, n);
  return out;
}

std::vector<NamedTensor> parse_npz(std::string_view b, const std::string& what) {
  // End of central directory: the last "PK\5\6" within the final 64 KiB + 22 bytes.
  if (b.size() < 22) value_error(what, ": not an .npz file (too short for a zip archive)");
  size_t lo = b.size() > 65557 ? b.size() - 65557 : 0;
  size_t eocd = std::string_view::npos;
  for (size_t i = b.size() - 22 + 1; i-- > lo;)
    if (read_le(b, i, 4, what) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == std::string_view::npos) value_error(what, ": not an .npz file (no zip end-of-directory record)");
  uint64_t count = read_le(b, eocd + 10, 2, what);
  uint64_t cd_offset = read_le(b, eocd + 16, 4, what);
  if (count == 0xffff || cd_offset == 0xffffffff) {
    // zip64: the locator sits just before the EOCD and points at the zip64 EOCD.
    if (eocd < 20 || read_le(b, eocd - 20, 4, what) != 0x07064b50) value_error(what, ": zip64 locator missing");
    uint64_t z = read_le(b, eocd - 20 + 8, 8, what);
    if (read_le(b, z, 4, what) != 0x06064b50) value_error(what, ": zip64 end-of-directory record missing");
    count = read_le(b, z + 32, 8, what);
    cd_offset = read_le(b, z + 48, 8, what);
  }
  std::vector<NamedTensor> out;
  uint64_t p = cd_offset;
  for (uint64_t e = 0; e < count; ++e) {
    if (read_le(b, p, 4, what) != 0x02014b50) value_error(what, ": corrupt zip central directory (entry ", e, ")");
    uint64_t method = read_le(b, p + 10, 2, what);
    uint64_t csize = read_le(b, p + 20, 4, what), usize = read_le(b, p + 24, 4, what);
    uint64_t name_len = read_le(b, p + 28, 2, what), extra_len = read_le(b, p + 30, 2, what);
    uint64_t comment_len = read_le(b, p + 32, 2, what);
    uint64_t local = read_le(b, p + 42, 4, what);
    if (p + 46 + name_len > b.size()) value_error(what, ": truncated zip central directory");
    std::string name(b.substr(p + 46, name_len));
    // zip64 extra field (id 1): the 0xffffffff fields, in order usize, csize, local offset.
    for (uint64_t x = p + 46 + name_len; x + 4 <= p + 46 + name_len + extra_len;) {
      uint64_t id = read_le(b, x, 2, what), len = read_le(b, x + 2, 2, what);
      if (id == 1) {
        uint64_t q = x + 4;
        if (usize == 0xffffffff) usize = read_le(b, q, 8, what), q += 8;
        if (csize == 0xffffffff) csize = read_le(b, q, 8, what), q += 8;
        if (local == 0xffffffff) local = read_le(b, q, 8, what);
      }
      x += 4 + len;
    }
    p += 46 + name_len + extra_len + comment_len;
    std::string entry = what + ": entry '" + name + "'";
    if (read_le(b, local, 4, what) != 0x04034b50) value_error(entry, ": corrupt local header");
    uint64_t data = local + 30 + read_le(b, local + 26, 2, what) + read_le(b, local + 28, 2, what);
    if (data > b.size() || csize > b.size() - data) value_error(entry, ": data runs past the end of the file");
    std::string_view raw = b.substr(data, csize);
    std::string inflated;
    if (method == 8) {
      inflated = inflate_raw(raw, usize, entry);
      raw = inflated;
    } else if (method != 0) {
      value_error(entry, ": unsupported zip compression method ", method);
    } else if (usize != csize) {
      value_error(entry, ": stored entry with different sizes");
    }
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    out.push_back({name, parse_npy(raw, entry)});
  }
  return out;
}

std::string format_npz(const std::vector<NamedTensor>& tensors) {
  std::string out, cd;
  for (const NamedTensor& t : tensors) {
    std::string name = t.name + ".npy";
    std::string data = format_npy(t.tensor);
    if (data.size() >= 0xffffffffULL || out.size() >= 0xffffffffULL) value_error("npz: entry '", t.name, "' is too large (4 GiB)");
    uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    uint64_t local = out.size();
    put_le(out, 0x04034b50, 4);
    put_le(out, 20, 2), put_le(out, 0, 2), put_le(out, 0, 2), put_le(out, 0, 2), put_le(out, 0x21, 2);
    put_le(out, crc, 4), put_le(out, data.size(), 4), put_le(out, data.size(), 4);
    put_le(out, name.size(), 2), put_le(out, 0, 2);
    out += name;
    out += data;
    put_le(cd, 0x02014b50, 4);
    put_le(cd, 20, 2), put_le(cd, 20, 2), put_le(cd, 0, 2), put_le(cd, 0, 2), put_le(cd, 0, 2), put_le(cd, 0x21, 2);
    put_le(cd, crc, 4), put_le(cd, data.size(), 4), put_le(cd, data.size(), 4);
    put_le(cd, name.size(), 2), put_le(cd, 0, 2), put_le(cd, 0, 2), put_le(cd, 0, 2), put_le(cd, 0, 2);
    put_le(cd, 0, 4), put_le(cd, local, 4);
    cd += name;
  }
  uint64_t cd_offset = out.size();
  out += cd;
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 2), put_le(out, 0, 2), put_le(out, tensors.size(), 2), put_le(out, tensors.size(), 2);
  put_le(out, cd.size(), 4), put_le(out, cd_offset, 4), put_le(out, 0, 2);
  return out;
}

std::vector<NamedTensor> read_npz(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) io_error("cannot read '", path, "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_npz(ss.str(), path);
}

void write_npz(const std::string& path, const std::vector<NamedTensor>& tensors) {
  std::string bytes = format_npz(tensors);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) io_error("cannot write '", path, "'");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) io_error("writing '", path, "' failed");
}

}  // namespace anvil::tools
