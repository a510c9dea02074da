// Saving and loading VM executables: the versioned, checksummed, sectioned binary format that
// docs/vm-format.md describes field by field. The reader trusts nothing: every count, length,
// offset and tag is checked before use, and the loaded program goes through verify_executable.
// Tensor constants' data starts at a multiple of 64 bytes from the file's start (version 2), so
// an executable read in place from a loaded library's blob uses them where they lie, without a
// copy: the weights of a model are in memory once, in the library's read-only pages.
#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "anvil/runtime/device.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/module/blob.h"
#include "anvil/runtime/module/byte_io.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/tensor_io.h"
#include "anvil/runtime/vm/executable.h"

namespace anvil::vm {
namespace {

constexpr char kMagic[8] = {'A', 'N', 'V', 'L', 'V', 'M', 'E', 'X'};
// Any change to the layout or to the meaning of a field bumps this; readers accept only it.
constexpr uint32_t kFormatVersion = 2;
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 4 + 4;
constexpr size_t kSectionEntryBytes = 4 + 4 + 8 + 8;
constexpr std::string_view kWhat = "vm executable";

enum SectionId : uint32_t { kFunctionsSection = 1, kConstantsSection = 2, kCodeSection = 3 };
constexpr std::array<uint32_t, 3> kSectionIds = {kFunctionsSection, kConstantsSection, kCodeSection};

// Smallest encodings, for ByteReader::get_count: a function entry with empty name and no
// params; a constant that is a bare tag (null).
constexpr size_t kMinFunctionBytes = 4 + 8 + 8 * 4 + 8;
constexpr size_t kMinConstantBytes = 1;
// The tensor header written by write_tensor: magic, version, reserved, ndim, dtype, shape, size.
constexpr size_t kTensorReservedOffset = 8 + 4;
constexpr size_t kTensorNdimOffset = 8 + 4 + 4;
size_t tensor_header_bytes(int64_t ndim) { return 8 + 4 + 4 + 4 + 4 + 8 * static_cast<size_t>(ndim) + 8; }
// Tensor data is aligned to this from the file start: what Tensor::empty gives, so constants
// used in place are as aligned as copied ones.
constexpr size_t kTensorDataAlignment = kAllocAlignment;

// The zero bytes between a tensor constant's pad count (whose end is at file offset `at`) and
// its header, so that the data after a header of `header` bytes is aligned.
size_t tensor_padding(size_t at, size_t header) {
  return (kTensorDataAlignment - (at + header) % kTensorDataAlignment) % kTensorDataAlignment;
}

std::string_view section_name(uint32_t id) {
  switch (id) {
    case kFunctionsSection: return "functions";
    case kConstantsSection: return "constants";
    case kCodeSection: return "code";
    default: return "unknown";
  }
}

// Device types a constant may name: those of runtime/device_types.def that a DLDeviceType of
// this build can hold (not Hexagon's 16; see that file).
bool is_known_device_type(int32_t type) { return device_type_fits(type); }

std::string_view kind_text(uint8_t tag) {
  if (tag > static_cast<uint8_t>(ValueKind::kObject)) return "unknown";
  return value_kind_name(static_cast<ValueKind>(tag));
}

// --- writing -----------------------------------------------------------------------------------

void write_functions(const std::vector<FuncInfo>& funcs, ByteWriter* out) {
  out->put<uint64_t>(funcs.size());
  for (const FuncInfo& f : funcs) {
    out->put<int32_t>(static_cast<int32_t>(f.kind));
    out->put_string(f.name);
    out->put<int64_t>(f.start_instr);
    out->put<int64_t>(f.end_instr);
    out->put<int64_t>(f.num_args);
    out->put<int64_t>(f.register_file_size);
    out->put<uint64_t>(f.param_names.size());
    for (const std::string& p : f.param_names) out->put_string(p);
  }
}

// `base`: the file offset at which `out`'s bytes will start.
void write_constant(const Value& v, size_t index, size_t base, ByteWriter* out) {
  ValueKind kind = v.kind();
  out->put<uint8_t>(static_cast<uint8_t>(kind));
  switch (kind) {
    case ValueKind::kNull: break;
    case ValueKind::kInt: out->put<int64_t>(v.as_int()); break;
    case ValueKind::kBool: out->put<int64_t>(v.as_bool() ? 1 : 0); break;
    case ValueKind::kFloat: out->put<double>(v.as_float()); break;
    case ValueKind::kString: out->put_string(v.as_string()); break;
    case ValueKind::kBytes: out->put_string(v.as_bytes()); break;
    case ValueKind::kShape: {
      const std::vector<int64_t>& dims = v.as_shape();
      out->put<uint64_t>(dims.size());
      for (int64_t d : dims) out->put<int64_t>(d);
      break;
    }
    case ValueKind::kDataType: {
      DLDataType dt = v.as_dtype().dl();
      out->put<uint8_t>(dt.code);
      out->put<uint8_t>(dt.bits);
      out->put<uint16_t>(dt.lanes);
      break;
    }
    case ValueKind::kDevice: {
      Device d = v.as_device();
      // Refuse what the reader would refuse, so every saved file loads.
      if (!is_known_device_type(static_cast<int32_t>(d.type)) || d.id < 0)
        value_error(kWhat, ": cannot save constant ", index, ": device type ", static_cast<int32_t>(d.type), " id ",
                    d.id, " is not a valid device");
      out->put<int32_t>(static_cast<int32_t>(d.type));
      out->put<int32_t>(d.id);
      break;
    }
    case ValueKind::kTensor: {
      const Tensor& t = v.as_tensor();
      size_t pad = tensor_padding(base + out->str().size() + 1, tensor_header_bytes(t.ndim()));
      out->put<uint8_t>(static_cast<uint8_t>(pad));
      out->put_bytes(std::string(pad, '\0'));
      write_tensor(t, out);
      break;
    }
    default:
      value_error(kWhat, ": cannot save constant ", index, " of kind '", v.kind_name(),
                  "': only null, int, float, bool, string, bytes, shape, dtype, device and tensor constants "
                  "can be serialised");
  }
}

void write_code(const ExecutableNode& exec, ByteWriter* out) {
  out->put<uint64_t>(exec.instr_offset.size());
  for (int64_t off : exec.instr_offset) out->put<int64_t>(off);
  out->put<uint64_t>(exec.instr_data.size());
  for (Word w : exec.instr_data) out->put<int64_t>(w);
}

// --- reading -----------------------------------------------------------------------------------

struct Section {
  uint32_t id = 0;
  uint64_t offset = 0;  // in the payload
  uint64_t size = 0;
};

// The prefix of a section's error messages. ByteReader keeps only a view of it, hence literals.
std::string_view section_what(uint32_t id) {
  switch (id) {
    case kFunctionsSection: return "vm executable: section 'functions'";
    case kConstantsSection: return "vm executable: section 'constants'";
    default: return "vm executable: section 'code'";
  }
}

// A reader over one section whose offsets (in error messages) count from the start of the file.
ByteReader section_reader(std::string_view file, const Section& s) {
  ByteReader in(file.substr(0, kHeaderBytes + s.offset + s.size), section_what(s.id));
  in.get_bytes(kHeaderBytes + s.offset, "section start");
  return in;
}

void expect_consumed(const ByteReader& in, std::string_view after) {
  if (in.remaining() != 0) in.fail(str_cat(in.remaining(), " unexpected trailing bytes after ", after));
}

std::vector<FuncInfo> read_functions(ByteReader& in) {
  uint64_t count = in.get_count("function count", kMinFunctionBytes);
  std::vector<FuncInfo> funcs(count);
  for (uint64_t i = 0; i < count; ++i) {
    FuncInfo& f = funcs[i];
    int32_t kind = in.get<int32_t>(str_cat("kind of function ", i));
    if (kind != static_cast<int32_t>(FuncKind::kPackedFunc) && kind != static_cast<int32_t>(FuncKind::kVMFunc))
      in.fail(str_cat("function ", i, ": kind ", kind, " is neither 0 (packed) nor 1 (vm)"));
    f.kind = static_cast<FuncKind>(kind);
    f.name = in.get_string(str_cat("name of function ", i));
    if (f.name.empty()) in.fail(str_cat("function ", i, " has an empty name"));
    f.start_instr = in.get<int64_t>(str_cat("start_instr of function '", f.name, "'"));
    f.end_instr = in.get<int64_t>(str_cat("end_instr of function '", f.name, "'"));
    f.num_args = in.get<int64_t>(str_cat("num_args of function '", f.name, "'"));
    f.register_file_size = in.get<int64_t>(str_cat("register_file_size of function '", f.name, "'"));
    uint64_t params = in.get_count(str_cat("param count of function '", f.name, "'"), 8);
    f.param_names.reserve(params);
    for (uint64_t k = 0; k < params; ++k)
      f.param_names.emplace_back(in.get_string(str_cat("param ", k, " name of function '", f.name, "'")));
  }
  expect_consumed(in, "the last function");
  return funcs;
}

// With `backing` (the owner of the file's memory), aligned tensor data is used in place.
Value read_constant(ByteReader& in, uint64_t index, const std::shared_ptr<void>& backing) {
  size_t tag_offset = in.offset();
  uint8_t tag = in.get<uint8_t>(str_cat("tag of constant ", index));
  auto field = [&](std::string_view name) { return str_cat(name, " of constant ", index); };
  switch (static_cast<ValueKind>(tag)) {
    case ValueKind::kNull: return Value();
    case ValueKind::kInt: return Value(in.get<int64_t>(field("int value")));
    case ValueKind::kBool: {
      int64_t b = in.get<int64_t>(field("bool value"));
      // Only the encoding save writes, so a loaded file re-saves to the same bytes.
      if (b != 0 && b != 1) in.fail(str_cat("constant ", index, ": bool value ", b, " is neither 0 nor 1"));
      return Value(b == 1);
    }
    case ValueKind::kFloat: return Value(in.get<double>(field("float value")));
    case ValueKind::kString: return Value(std::string(in.get_string(field("string"))));
    case ValueKind::kBytes: return Value::bytes(std::string(in.get_string(field("bytes"))));
    case ValueKind::kShape: {
      uint64_t ndim = in.get_count(field("shape ndim"), 8);
      std::vector<int64_t> dims(ndim);
      for (int64_t& d : dims) d = in.get<int64_t>(field("shape dim"));
      return Value::shape(std::move(dims));
    }
    case ValueKind::kDataType: {
      uint8_t code = in.get<uint8_t>(field("dtype code"));
      uint8_t bits = in.get<uint8_t>(field("dtype bits"));
      uint16_t lanes = in.get<uint16_t>(field("dtype lanes"));
      return Value(DataType(code, bits, lanes));
    }
    case ValueKind::kDevice: {
      int32_t type = in.get<int32_t>(field("device type"));
      int32_t id = in.get<int32_t>(field("device id"));
      if (!is_known_device_type(type)) in.fail(str_cat("constant ", index, ": unknown device type ", type));
      if (id < 0) in.fail(str_cat("constant ", index, ": negative device id ", id));
      return Value(Device{static_cast<DLDeviceType>(type), id});
    }
    case ValueKind::kTensor: {
      // Exactly the padding the writer puts, all zero, so that an accepted file re-saves as it is.
      uint8_t pad = in.get<uint8_t>(field("tensor padding count"));
      std::string_view zeros = in.get_bytes(pad, field("tensor padding"));
      if (zeros.find_first_not_of('\0') != std::string_view::npos)
        in.fail(str_cat("constant ", index, ": tensor padding is not zero"));
      ByteReader peek = in;
      peek.get_bytes(kTensorNdimOffset, field("tensor header"));
      int32_t ndim = peek.get<int32_t>(field("tensor ndim"));
      if (ndim >= 0 && ndim <= kTensorMaxNdim &&
          pad != tensor_padding(in.offset() - pad, tensor_header_bytes(ndim)))
        in.fail(str_cat("constant ", index, ": tensor padding of ", int(pad), " bytes leaves its data unaligned (",
                        kTensorDataAlignment, " bytes)"));
      // read_tensor ignores the tensor header's reserved word; insist on 0 so that no bit of an
      // accepted file goes unread.
      peek = in;
      peek.get_bytes(kTensorReservedOffset, field("tensor header"));
      if (uint32_t reserved = peek.get<uint32_t>(field("tensor reserved")); reserved != 0)
        in.fail(str_cat("constant ", index, ": tensor reserved word is ", reserved, ", must be 0"));
      return Value(read_tensor(&in, Device::cpu(), backing, kTensorDataAlignment));
    }
    default:
      value_error(kWhat, ": section 'constants': constant ", index,
                  " at offset ", tag_offset, " has tag ", int(tag), " (", kind_text(tag),
                  "), which is not a serialisable constant kind");
  }
}

std::vector<Value> read_constants(ByteReader& in, const std::shared_ptr<void>& backing) {
  uint64_t count = in.get_count("constant count", kMinConstantBytes);
  std::vector<Value> constants;
  constants.reserve(count);
  for (uint64_t i = 0; i < count; ++i) constants.push_back(read_constant(in, i, backing));
  expect_consumed(in, "the last constant");
  return constants;
}

void read_code(ByteReader& in, ExecutableNode* exec) {
  uint64_t num_instrs = in.get_count("instr_offset count", 8);
  exec->instr_offset.resize(num_instrs);
  for (int64_t& off : exec->instr_offset) off = in.get<int64_t>("instr_offset");
  uint64_t num_words = in.get_count("instr_data count", 8);
  exec->instr_data.resize(num_words);
  for (Word& w : exec->instr_data) w = in.get<int64_t>("instr_data");
  expect_consumed(in, "instr_data");
  // instruction(i) indexes instr_data with these; verify_executable checks what lies there.
  for (uint64_t i = 0; i < num_instrs; ++i) {
    int64_t off = exec->instr_offset[i];
    int64_t lower = i == 0 ? 0 : exec->instr_offset[i - 1] + 1;
    if ((i == 0 && off != 0) || off < lower || static_cast<uint64_t>(off) >= num_words)
      value_error(kWhat, ": section 'code': instr_offset[", i, "] = ", off, " is invalid: offsets must start at 0, ",
                  "increase strictly and stay below the ", num_words, " words of instr_data");
  }
  if (num_instrs == 0 && num_words != 0)
    value_error(kWhat, ": section 'code': ", num_words, " words of instr_data but no instructions");
}

// Reads and checks the section table; returns the sections indexed by id - 1.
std::array<Section, 3> read_section_table(std::string_view file, uint64_t payload_size) {
  ByteReader in(file, "vm executable: section table");
  in.get_bytes(kHeaderBytes, "header");
  uint64_t count = in.get_count("section count", kSectionEntryBytes);
  uint64_t table_end = 8 + count * kSectionEntryBytes;  // in the payload
  std::array<Section, 3> sections{};
  std::array<bool, 3> seen{};
  for (uint64_t i = 0; i < count; ++i) {
    Section s;
    s.id = in.get<uint32_t>("section id");
    if (std::find(kSectionIds.begin(), kSectionIds.end(), s.id) == kSectionIds.end())
      in.fail(str_cat("unknown section id ", s.id, " in entry ", i, ": format version ", kFormatVersion,
                      " has only sections 1 (functions), 2 (constants) and 3 (code)"));
    if (seen[s.id - 1]) in.fail(str_cat("section '", section_name(s.id), "' is listed twice"));
    seen[s.id - 1] = true;
    if (uint32_t reserved = in.get<uint32_t>("section reserved"); reserved != 0)
      in.fail(str_cat("reserved word of section '", section_name(s.id), "' is ", reserved, ", must be 0"));
    s.offset = in.get<uint64_t>("section offset");
    s.size = in.get<uint64_t>("section size");
    if (s.offset < table_end)
      in.fail(str_cat("section '", section_name(s.id), "' starts at payload offset ", s.offset,
                      ", inside the section table (which ends at ", table_end, ")"));
    if (s.offset > payload_size || s.size > payload_size - s.offset)
      in.fail(str_cat("section '", section_name(s.id), "' (payload offset ", s.offset, ", size ", s.size,
                      ") runs past the end of the ", payload_size, "-byte payload"));
    sections[s.id - 1] = s;
  }
  for (uint32_t id : kSectionIds)
    if (!seen[id - 1]) value_error(kWhat, ": section '", section_name(id), "' is missing from the section table");

  // The sections must tile the rest of the payload: no overlap, no unaccounted bytes.
  std::array<Section, 3> by_offset = sections;
  std::sort(by_offset.begin(), by_offset.end(), [](const Section& a, const Section& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.size < b.size;
  });
  uint64_t expected = table_end;
  for (size_t k = 0; k < by_offset.size(); ++k) {
    const Section& s = by_offset[k];
    if (k > 0 && s.offset < expected)
      value_error(kWhat, ": section '", section_name(s.id), "' [", s.offset, ", ", s.offset + s.size,
                  ") overlaps section '", section_name(by_offset[k - 1].id), "' [", by_offset[k - 1].offset, ", ",
                  expected, ") (payload offsets)");
    if (s.offset > expected)
      value_error(kWhat, ": payload bytes [", expected, ", ", s.offset, ") belong to no section (before section '",
                  section_name(s.id), "')");
    expected = s.offset + s.size;
  }
  if (expected != payload_size)
    value_error(kWhat, ": payload bytes [", expected, ", ", payload_size,
                ") after the last section belong to no section");
  return sections;
}

}  // namespace

std::string ExecutableNode::save_to_bytes() const {
  std::array<ByteWriter, 3> sections;  // indexed by id - 1
  write_functions(func_table, &sections[kFunctionsSection - 1]);
  // The constants follow the header, the section table and the functions (see below).
  const size_t constants_base =
      kHeaderBytes + 8 + kSectionIds.size() * kSectionEntryBytes + sections[kFunctionsSection - 1].str().size();
  sections[kConstantsSection - 1].put<uint64_t>(constants.size());
  for (size_t i = 0; i < constants.size(); ++i)
    write_constant(constants[i], i, constants_base, &sections[kConstantsSection - 1]);
  write_code(*this, &sections[kCodeSection - 1]);

  ByteWriter payload;
  payload.put<uint64_t>(kSectionIds.size());
  uint64_t offset = 8 + kSectionIds.size() * kSectionEntryBytes;
  for (uint32_t id : kSectionIds) {
    uint64_t size = sections[id - 1].str().size();
    payload.put<uint32_t>(id);
    payload.put<uint32_t>(0);
    payload.put<uint64_t>(offset);
    payload.put<uint64_t>(size);
    offset += size;
  }
  for (uint32_t id : kSectionIds) payload.put_bytes(sections[id - 1].str());

  ByteWriter out;
  out.put_bytes(std::string_view(kMagic, 8));
  out.put<uint32_t>(kFormatVersion);
  out.put<uint32_t>(0);  // flags
  out.put<uint64_t>(payload.str().size());
  out.put<uint32_t>(crc32(payload.str()));
  out.put<uint32_t>(0);  // reserved
  out.put_bytes(payload.str());
  return std::move(out.str());
}

Executable Executable::load_from_bytes(std::string_view bytes, const std::shared_ptr<void>& backing) {
  ByteReader header(bytes, kWhat);
  std::string_view magic = header.get_bytes(8, "magic");
  if (std::memcmp(magic.data(), kMagic, 8) != 0) header.fail("bad magic: this is not an Anvil VM executable");
  uint32_t version = header.get<uint32_t>("version");
  if (version != kFormatVersion)
    value_error(kWhat, ": format version ", version, " is not supported: this runtime reads only version ",
                kFormatVersion, "; rebuild the executable with a matching Anvil");
  if (uint32_t flags = header.get<uint32_t>("flags"); flags != 0)
    value_error(kWhat, ": flags word is ", flags, ", but format version ", kFormatVersion, " defines no flags");
  uint64_t payload_size = header.get<uint64_t>("payload size");
  uint32_t checksum = header.get<uint32_t>("checksum");
  if (uint32_t reserved = header.get<uint32_t>("reserved"); reserved != 0)
    value_error(kWhat, ": header reserved word is ", reserved, ", must be 0");
  if (payload_size != header.remaining())
    value_error(kWhat, ": header says ", payload_size, " payload bytes but ", header.remaining(),
                " follow (truncated or trailing data)");
  std::string_view payload = bytes.substr(kHeaderBytes);
  if (uint32_t actual = crc32(payload); actual != checksum)
    value_error(kWhat, ": checksum mismatch: header says ", checksum, ", payload has ", actual,
                " (the file is corrupt)");

  std::array<Section, 3> sections = read_section_table(bytes, payload_size);
  auto node = make_object<ExecutableNode>();
  auto reader = [&](uint32_t id) { return section_reader(bytes, sections[id - 1]); };
  {
    ByteReader in = reader(kFunctionsSection);
    node->func_table = read_functions(in);
  }
  {
    ByteReader in = reader(kConstantsSection);
    node->constants = read_constants(in, backing);
    for (const Value& c : node->constants)
      if (c.kind() == ValueKind::kTensor && backing && c.as_tensor().owner().get() == backing.get())
        node->in_place_backing = backing;
  }
  {
    ByteReader in = reader(kCodeSection);
    read_code(in, node.get());
  }
  for (size_t i = 0; i < node->func_table.size(); ++i) {
    auto [it, inserted] = node->func_map.emplace(node->func_table[i].name, static_cast<int64_t>(i));
    if (!inserted)
      value_error(kWhat, ": function name '", it->first, "' is used by both function ", it->second,
                  " and function ", i);
  }
  // A well-formed file can still hold illegal code; its ValueErrors name function and instruction.
  verify_executable(*node);
  return Executable(std::move(node));
}

}  // namespace anvil::vm
