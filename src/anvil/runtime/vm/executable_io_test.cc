// The VM executable format (docs/vm-format.md): exact round trips, and clean rejection of every
// truncation, every bit flip, version mismatches and hand-crafted files that are well-formed on
// the outside (valid header and checksum) but wrong inside.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <limits>

#include "anvil/runtime/module/blob.h"
#include "anvil/runtime/module/byte_io.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/tensor_io.h"
#include "anvil/runtime/test_util.h"
#include "anvil/runtime/vm/exec_builder.h"
#include "anvil/runtime/vm/executable.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil::vm {
namespace {

// The format's constants, written out again on purpose: changing them is a format change that
// must bump the version, and these tests should notice.
constexpr char kMagic[8] = {'A', 'N', 'V', 'L', 'V', 'M', 'E', 'X'};
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderBytes = 32;
constexpr size_t kTableBytes = 8 + 3 * 24;  // count + three entries

class ExecutableIoTest : public ::testing::Test {
 protected:
  void SetUp() override { register_runtime_functions(); }
};

// --- hand-crafting files -----------------------------------------------------------------------

// A correct header and checksum around any payload, so tests reach the parser behind them.
std::string wrap(std::string_view payload, uint32_t version = kVersion) {
  ByteWriter out;
  out.put_bytes(std::string_view(kMagic, 8));
  out.put<uint32_t>(version);
  out.put<uint32_t>(0);
  out.put<uint64_t>(payload.size());
  out.put<uint32_t>(crc32(payload));
  out.put<uint32_t>(0);
  out.put_bytes(payload);
  return std::move(out.str());
}

struct Entry {
  uint32_t id;
  uint64_t offset;
  uint64_t size;
  uint32_t reserved = 0;
};

// A payload with an arbitrary section table followed by `body`.
std::string payload_with_table(const std::vector<Entry>& table, std::string_view body) {
  ByteWriter out;
  out.put<uint64_t>(table.size());
  for (const Entry& e : table) {
    out.put<uint32_t>(e.id);
    out.put<uint32_t>(e.reserved);
    out.put<uint64_t>(e.offset);
    out.put<uint64_t>(e.size);
  }
  out.put_bytes(body);
  return std::move(out.str());
}

// The three sections' bytes; assemble() lays them out the way save_to_bytes does.
struct Parts {
  std::string functions, constants, code;
};

std::string assemble(const Parts& p) {
  uint64_t at = kTableBytes;
  std::vector<Entry> table = {{1, at, p.functions.size()},
                              {2, at + p.functions.size(), p.constants.size()},
                              {3, at + p.functions.size() + p.constants.size(), p.code.size()}};
  return wrap(payload_with_table(table, p.functions + p.constants + p.code));
}

// Splits a file written by save_to_bytes into its sections (trusting its layout).
Parts split(const std::string& file) {
  auto entry = [&](int k, size_t field) {
    uint64_t v;
    std::memcpy(&v, file.data() + kHeaderBytes + 8 + 24 * k + field, 8);
    return static_cast<size_t>(v);
  };
  auto section = [&](int k) { return file.substr(kHeaderBytes + entry(k, 8), entry(k, 16)); };
  return {section(0), section(1), section(2)};
}

std::string functions_section(const std::vector<FuncInfo>& funcs) {
  ByteWriter out;
  out.put<uint64_t>(funcs.size());
  for (const FuncInfo& f : funcs) {
    out.put<int32_t>(static_cast<int32_t>(f.kind));
    out.put_string(f.name);
    out.put<int64_t>(f.start_instr);
    out.put<int64_t>(f.end_instr);
    out.put<int64_t>(f.num_args);
    out.put<int64_t>(f.register_file_size);
    out.put<uint64_t>(f.param_names.size());
    for (const auto& p : f.param_names) out.put_string(p);
  }
  return std::move(out.str());
}

std::string int_constants_section(const std::vector<int64_t>& values) {
  ByteWriter out;
  out.put<uint64_t>(values.size());
  for (int64_t v : values) {
    out.put<uint8_t>(static_cast<uint8_t>(ValueKind::kInt));
    out.put<int64_t>(v);
  }
  return std::move(out.str());
}

// One constant given as raw bytes after its tag.
std::string raw_constant_section(uint8_t tag, std::string_view payload) {
  ByteWriter out;
  out.put<uint64_t>(1);
  out.put<uint8_t>(tag);
  out.put_bytes(payload);
  return std::move(out.str());
}

std::string code_section(const std::vector<std::vector<Word>>& instrs) {
  std::vector<int64_t> offsets;
  std::vector<Word> data;
  for (const auto& ins : instrs) {
    offsets.push_back(static_cast<int64_t>(data.size()));
    data.insert(data.end(), ins.begin(), ins.end());
  }
  ByteWriter out;
  out.put<uint64_t>(offsets.size());
  for (int64_t o : offsets) out.put<int64_t>(o);
  out.put<uint64_t>(data.size());
  for (Word w : data) out.put<int64_t>(w);
  return std::move(out.str());
}

Word op(Opcode o) { return static_cast<Word>(o); }

FuncInfo packed(const std::string& name) {
  FuncInfo f;
  f.name = name;
  return f;
}

FuncInfo vm_func(const std::string& name, int64_t start, int64_t end, std::vector<std::string> params, int64_t regs) {
  FuncInfo f;
  f.kind = FuncKind::kVMFunc;
  f.name = name;
  f.start_instr = start;
  f.end_instr = end;
  f.num_args = static_cast<int64_t>(params.size());
  f.register_file_size = regs;
  f.param_names = std::move(params);
  return f;
}

// A small legal program, by hand: main(x) { %1 = test.f(x, c[0]); ret %1 }.
Parts handmade() {
  return {functions_section({packed("test.f"), vm_func("main", 0, 2, {"x"}, 2)}), int_constants_section({5}),
          code_section({{op(Opcode::kCall), 1, 0, 2, Arg::reg(0).encode(), Arg::constant(0).encode()},
                        {op(Opcode::kRet), 1}})};
}

// Loading must fail with a ValueError whose message contains every fragment.
void expect_load_error(const std::string& bytes, std::initializer_list<std::string_view> fragments) {
  try {
    Executable::load_from_bytes(bytes);
    ADD_FAILURE() << "expected the load to fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
    for (std::string_view f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << "'" << f << "' not in: " << e.what();
  }
}

// --- programs made with ExecBuilder ------------------------------------------------------------

// Two functions with every opcode and argument kind, and one constant of every serialisable kind.
Executable full_program(bool with_tensors) {
  ExecBuilder b;
  b.begin_function("helper", {"a"});
  b.emit_ret(0);
  b.end_function();

  b.begin_function("main", {"x", "y"});
  std::vector<Arg> consts;
  for (const Value& v :
       {Value(7), Value(std::numeric_limits<int64_t>::min()), Value(true), Value(false), Value(2.5), Value(-0.0),
        Value(std::numeric_limits<double>::quiet_NaN()), Value(std::string("nul\0inside", 10)), Value(""),
        Value::shape({2, 3, 4}), Value::shape({}), Value(DataType::float32()),
        Value(DataType(DataType::kBFloat, 16, 4)), Value(Device::cuda(1)), Value(Device::cpu())})
    consts.push_back(Arg::constant(b.add_constant(v)));
  std::string all_bytes;
  for (int c = 0; c < 256; ++c) all_bytes.push_back(static_cast<char>(c));
  consts.push_back(Arg::constant(b.add_constant(Value::bytes(all_bytes))));
  if (with_tensors) {
    consts.push_back(Arg::constant(b.add_constant(Value(testing::random_float_tensor({3, 4})))));
    Tensor ints = Tensor::empty({5}, DataType::int64());
    auto* p = static_cast<int64_t*>(ints.data());
    for (int64_t i = 0; i < 5; ++i) p[i] = (i - 2) * (int64_t{1} << 40);
    p[4] = std::numeric_limits<int64_t>::min();
    consts.push_back(Arg::constant(b.add_constant(Value(ints))));
    consts.push_back(Arg::constant(b.add_constant(Value(Tensor::empty({0, 3}, DataType::float32())))));
  }
  // 0: %2 = test.pack(...constants, i42, f[helper], %vm, %void)
  std::vector<Arg> args = consts;
  args.insert(args.end(), {Arg::imm(42), Arg::imm(-kMaxImmediate), Arg::func(0), Arg::vm(), Arg::void_value()});
  b.emit_call("test.pack", args, 2);
  int64_t branch = b.emit_if(0, 0);         // 1: if %0 else -> 4
  b.emit_call("helper", {Arg::reg(1)}, 3);  // 2
  b.emit_ret(3);                            // 3
  b.patch_jump(branch, b.next_instr() - branch);
  b.emit_call("test.id", {Arg::reg(2)}, 3);  // 4
  b.emit_goto(-2);                           // 5: -> 3
  b.end_function();
  return b.get();
}

void expect_same_value(const Value& a, const Value& b, size_t index) {
  SCOPED_TRACE(str_cat("constant ", index, ": ", a.to_string()));
  ASSERT_EQ(a.kind(), b.kind());
  switch (a.kind()) {
    case ValueKind::kInt:
    case ValueKind::kBool: EXPECT_EQ(a.as_int(), b.as_int()); break;
    case ValueKind::kFloat: {
      double x = a.as_float(), y = b.as_float();
      EXPECT_EQ(std::memcmp(&x, &y, sizeof x), 0);  // bit for bit: -0.0 and NaN included
      break;
    }
    case ValueKind::kString: EXPECT_EQ(a.as_string(), b.as_string()); break;
    case ValueKind::kBytes: EXPECT_EQ(a.as_bytes(), b.as_bytes()); break;
    case ValueKind::kShape: EXPECT_EQ(a.as_shape(), b.as_shape()); break;
    case ValueKind::kDataType: EXPECT_EQ(a.as_dtype(), b.as_dtype()); break;
    case ValueKind::kDevice: EXPECT_EQ(a.as_device(), b.as_device()); break;
    case ValueKind::kTensor: {
      Tensor x = a.as_tensor(), y = b.as_tensor();
      EXPECT_EQ(x.shape(), y.shape());
      EXPECT_EQ(x.dtype(), y.dtype());
      EXPECT_EQ(y.device(), Device::cpu());
      ASSERT_EQ(x.nbytes(), y.nbytes());
      EXPECT_EQ(std::memcmp(x.data(), y.data(), x.nbytes()), 0);
      break;
    }
    case ValueKind::kNull: break;
    default: FAIL() << "unexpected constant kind " << a.kind_name();
  }
}

// --- round trips -------------------------------------------------------------------------------

TEST_F(ExecutableIoTest, RoundTripIsExact) {
  Executable exe = full_program(true);
  exe->constants.push_back(Value());  // null: not something add_constant makes, but serialisable
  std::string bytes = exe->save_to_bytes();
  Executable back = Executable::load_from_bytes(bytes);

  EXPECT_EQ(back->save_to_bytes(), bytes);
  EXPECT_EQ(back->as_text(), exe->as_text());
  EXPECT_EQ(back->instr_offset, exe->instr_offset);
  EXPECT_EQ(back->instr_data, exe->instr_data);
  EXPECT_EQ(back->func_map, exe->func_map);
  ASSERT_EQ(back->func_table.size(), exe->func_table.size());
  for (size_t i = 0; i < exe->func_table.size(); ++i) {
    const FuncInfo &x = exe->func_table[i], &y = back->func_table[i];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.start_instr, y.start_instr);
    EXPECT_EQ(x.end_instr, y.end_instr);
    EXPECT_EQ(x.num_args, y.num_args);
    EXPECT_EQ(x.register_file_size, y.register_file_size);
    EXPECT_EQ(x.param_names, y.param_names);
  }
  ASSERT_EQ(back->constants.size(), exe->constants.size());
  for (size_t i = 0; i < exe->constants.size(); ++i) expect_same_value(exe->constants[i], back->constants[i], i);
}

TEST_F(ExecutableIoTest, FileStartsWithTheDocumentedHeader) {
  std::string bytes = full_program(false)->save_to_bytes();
  ASSERT_GE(bytes.size(), kHeaderBytes + kTableBytes);
  EXPECT_EQ(bytes.substr(0, 8), "ANVLVMEX");
  ByteReader in(bytes, "test");
  in.get_bytes(8, "magic");
  EXPECT_EQ(in.get<uint32_t>("version"), 2u);
  EXPECT_EQ(in.get<uint32_t>("flags"), 0u);
  EXPECT_EQ(in.get<uint64_t>("payload size"), bytes.size() - kHeaderBytes);
  EXPECT_EQ(in.get<uint32_t>("crc"), crc32(std::string_view(bytes).substr(kHeaderBytes)));
  EXPECT_EQ(in.get<uint32_t>("reserved"), 0u);
  EXPECT_EQ(in.get<uint64_t>("section count"), 3u);
  for (uint32_t id = 1; id <= 3; ++id) {
    EXPECT_EQ(in.get<uint32_t>("id"), id);
    EXPECT_EQ(in.get<uint32_t>("reserved"), 0u);
    in.get<uint64_t>("offset");
    in.get<uint64_t>("size");
  }
  EXPECT_EQ(assemble(split(bytes)), bytes);  // the test helpers agree with the writer
}

TEST_F(ExecutableIoTest, EmptyExecutableRoundTrips) {
  Executable exe = ExecBuilder().get();
  std::string bytes = exe->save_to_bytes();
  Executable back = Executable::load_from_bytes(bytes);
  EXPECT_TRUE(back->func_table.empty());
  EXPECT_EQ(back->save_to_bytes(), bytes);
}

TEST_F(ExecutableIoTest, ModuleLoaderRebuildsTheExecutable) {
  Executable exe = full_program(true);
  Module m = Module::load_from_bytes(kExecutableKind, exe.as_module().node()->save_to_bytes());
  EXPECT_EQ(m.kind(), kExecutableKind);
  EXPECT_EQ(Executable::from_module(m)->as_text(), exe->as_text());
}

TEST_F(ExecutableIoTest, LoadedExecutableRuns) {
  register_function("test.vmio.add", [](int64_t a, int64_t b) { return a + b; }, true);
  register_function("test.vmio.lt", [](int64_t a, int64_t b) { return a < b; }, true);
  // sum(n) = 0 + 1 + ... + (n - 1), with a loop, a big constant and a call to another function.
  ExecBuilder b;
  b.begin_function("inc", {"v"});
  b.emit_call("test.vmio.add", {Arg::reg(0), Arg::imm(1)}, 1);
  b.emit_ret(1);
  b.end_function();
  b.begin_function("sum", {"n"});
  b.emit_call("test.vmio.add", {Arg::imm(0), Arg::imm(0)}, 1);
  b.emit_call("test.vmio.add", {Arg::imm(0), Arg::constant(b.add_constant(Value(int64_t{1} << 60)))}, 2);
  int64_t head = b.emit_call("test.vmio.lt", {Arg::reg(1), Arg::reg(0)}, 3);
  int64_t branch = b.emit_if(3, 0);
  b.emit_call("test.vmio.add", {Arg::reg(2), Arg::reg(1)}, 2);
  b.emit_call("inc", {Arg::reg(1)}, 1);
  int64_t back = b.emit_goto(0);
  b.patch_jump(back, head - back);
  b.patch_jump(branch, b.next_instr() - branch);
  b.emit_ret(2);
  b.end_function();
  Executable back_exe = Executable::load_from_bytes(b.get()->save_to_bytes());
  VirtualMachine vm = VirtualMachine::create(back_exe.as_module());
  for (int64_t n : {0, 1, 7}) EXPECT_EQ(vm["sum"](n).as_int(), (int64_t{1} << 60) + n * (n - 1) / 2) << n;
}

TEST_F(ExecutableIoTest, HandmadeProgramLoads) {
  Executable exe = Executable::load_from_bytes(assemble(handmade()));
  EXPECT_EQ(exe->find_function("main"), 1);
  EXPECT_EQ(exe->constants.at(0).as_int(), 5);
}

// --- saving what cannot be saved ---------------------------------------------------------------

TEST_F(ExecutableIoTest, SaveRejectsUnserialisableConstants) {
  struct Case {
    Value value;
    std::string kind;
  };
  std::vector<Case> cases = {
      {Value(Function::from_typed([]() { return 1; })), "function"},
      {Value(full_program(false).as_module()), "module"},
      {Value(std::vector<Value>{Value(1), Value(2)}), "array"},
      {Value::object(make_object<StringNode>("x")), "object"},
      {Value::handle(nullptr), "handle"},
  };
  for (const Case& c : cases) {
    Executable exe = full_program(false);
    size_t index = exe->constants.size();
    exe->constants.push_back(c.value);
    try {
      exe->save_to_bytes();
      ADD_FAILURE() << "saving a " << c.kind << " constant should fail";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
      std::string msg = e.what();
      EXPECT_NE(msg.find(str_cat("constant ", index)), std::string::npos) << msg;
      EXPECT_NE(msg.find("'" + c.kind + "'"), std::string::npos) << msg;
    }
  }
}

TEST_F(ExecutableIoTest, SaveRejectsADeviceTheReaderWouldRefuse) {
  Executable exe = full_program(false);
  exe->constants.push_back(Value(Device{kDLCPU, -1}));
  EXPECT_THROW(exe->save_to_bytes(), Error);
}

// --- truncation and corruption -----------------------------------------------------------------

TEST_F(ExecutableIoTest, EveryTruncationIsRejected) {
  std::string bytes = full_program(true)->save_to_bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      Executable::load_from_bytes(std::string_view(bytes).substr(0, n));
      ADD_FAILURE() << "a " << n << "-byte prefix loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
    }
  }
}

// Behind a valid header and table, every prefix of every section is rejected by the field
// parsers themselves (not by the checksum).
TEST_F(ExecutableIoTest, EveryTruncatedSectionIsRejected) {
  Parts parts = split(full_program(true)->save_to_bytes());
  for (std::string Parts::*section : {&Parts::functions, &Parts::constants, &Parts::code}) {
    for (size_t n = 0; n < (parts.*section).size(); ++n) {
      Parts cut = parts;
      (cut.*section).resize(n);
      try {
        Executable::load_from_bytes(assemble(cut));
        ADD_FAILURE() << "a section cut to " << n << " bytes loaded";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
      }
    }
  }
}

TEST_F(ExecutableIoTest, TruncationMessageNamesSectionFieldAndFileOffset) {
  Parts parts = handmade();
  size_t functions_start = kHeaderBytes + kTableBytes;
  size_t last_name = functions_start + parts.functions.size() - 1;  // main's parameter "x"
  parts.functions.pop_back();
  expect_load_error(assemble(parts), {str_cat("vm executable: section 'functions': truncated while reading "
                                              "param 0 name of function 'main' at offset ",
                                              last_name, ": need 1 bytes, 0 left")});
  // Counts are checked against the bytes left before anything is read or allocated.
  parts = handmade();
  size_t code_start = functions_start + parts.functions.size() + parts.constants.size();
  parts.code.resize(parts.code.size() - 3);
  expect_load_error(assemble(parts), {str_cat("vm executable: section 'code': instr_data count = 8 at offset ",
                                              code_start + 8 + 2 * 8, " exceeds")});
}

// Flags and every reserved word must be zero too, so no single bit of a valid file is unused:
// every flip is rejected (most by the checksum, the header fields by their own checks).
TEST_F(ExecutableIoTest, EveryBitFlipIsRejected) {
  std::string bytes = full_program(true)->save_to_bytes();
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      try {
        Executable::load_from_bytes(bad);
        ADD_FAILURE() << "flipping bit " << bit << " of byte " << i << " was accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
      }
    }
  }
}

// With the checksum recomputed, a flip reaches the parser. It may land in a value that has no
// wrong setting (an int, a float, tensor data) and load; then the file must re-save to exactly
// the same bytes, i.e. no bit was ignored or reinterpreted.
TEST_F(ExecutableIoTest, FlipsBehindAValidChecksumAreRejectedOrRoundTrip) {
  std::string payload = full_program(true)->save_to_bytes().substr(kHeaderBytes);
  int accepted = 0;
  for (size_t i = 0; i < payload.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = payload;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      std::string file = wrap(bad);
      Executable exe;
      try {
        exe = Executable::load_from_bytes(file);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
        continue;
      }
      ++accepted;
      EXPECT_EQ(exe->save_to_bytes(), file) << "payload byte " << i << " bit " << bit;
    }
  }
  EXPECT_GT(accepted, 0);
}

TEST_F(ExecutableIoTest, VersionMismatchNamesBothVersions) {
  std::string payload = full_program(false)->save_to_bytes().substr(kHeaderBytes);
  expect_load_error(wrap(payload, 1), {"version 1", "version 2"});
  expect_load_error(wrap(payload, 3), {"version 3", "version 2"});
}

TEST_F(ExecutableIoTest, HeaderFieldsAreChecked) {
  std::string good = assemble(handmade());
  auto patched = [&](size_t at, uint32_t v) {
    std::string s = good;
    std::memcpy(s.data() + at, &v, 4);
    return s;
  };
  std::string bad_magic = good;
  bad_magic[3] = 'X';
  expect_load_error(bad_magic, {"bad magic"});
  expect_load_error(patched(12, 1), {"flags"});
  expect_load_error(patched(24, crc32("x")), {"checksum mismatch"});
  expect_load_error(patched(28, 5), {"reserved"});
  expect_load_error(good + "x", {"payload bytes", "follow"});
}

// --- hand-crafted files with a valid checksum --------------------------------------------------

TEST_F(ExecutableIoTest, RejectsJumpOutsideTheFunction) {
  Parts p = handmade();
  p.functions = functions_section({packed("test.f"), vm_func("main", 0, 2, {"x"}, 1)});
  p.code = code_section({{op(Opcode::kGoto), 5}, {op(Opcode::kRet), 0}});
  expect_load_error(assemble(p), {"function 'main'", "instruction 0", "goto offset 5"});
  p.code = code_section({{op(Opcode::kIf), 0, 7}, {op(Opcode::kRet), 0}});
  expect_load_error(assemble(p), {"function 'main'", "instruction 0", "false-offset 7"});
  // Offsets so large that pc + offset would overflow.
  int64_t huge = std::numeric_limits<int64_t>::max();
  p.code = code_section({{op(Opcode::kGoto), huge}, {op(Opcode::kRet), 0}});
  expect_load_error(assemble(p), {"goto offset"});
  p.code = code_section({{op(Opcode::kIf), 0, huge}, {op(Opcode::kRet), 0}});
  expect_load_error(assemble(p), {"if false-offset"});
}

TEST_F(ExecutableIoTest, RejectsRegisterOutsideTheFrame) {
  Parts p = handmade();
  p.code = code_section({{op(Opcode::kCall), 1, 0, 1, Arg::reg(9).encode()}, {op(Opcode::kRet), 1}});
  expect_load_error(assemble(p), {"function 'main'", "register %9"});
}

TEST_F(ExecutableIoTest, RejectsBadConstantAndFunctionIndices) {
  Parts p = handmade();
  p.code = code_section({{op(Opcode::kCall), 1, 0, 1, Arg::constant(1).encode()}, {op(Opcode::kRet), 1}});
  expect_load_error(assemble(p), {"constant index 1"});
  p.code = code_section({{op(Opcode::kCall), 1, 7, 0}, {op(Opcode::kRet), 1}});
  expect_load_error(assemble(p), {"function index 7"});
}

TEST_F(ExecutableIoTest, RejectsFunctionRangeOutsideTheCode) {
  Parts p = handmade();
  p.functions = functions_section({packed("test.f"), vm_func("main", 0, 3, {"x"}, 2)});
  expect_load_error(assemble(p), {"function 'main'", "instruction range"});
}

TEST_F(ExecutableIoTest, RejectsDuplicateFunctionNames) {
  Parts p = handmade();
  p.functions = functions_section({packed("main"), vm_func("main", 0, 2, {"x"}, 2)});
  expect_load_error(assemble(p), {"function name 'main'", "function 0", "function 1"});
}

TEST_F(ExecutableIoTest, RejectsBadFunctionEntries) {
  Parts p = handmade();
  FuncInfo odd = packed("test.f");
  odd.kind = static_cast<FuncKind>(7);
  p.functions = functions_section({odd, vm_func("main", 0, 2, {"x"}, 2)});
  expect_load_error(assemble(p), {"section 'functions'", "function 0: kind 7"});
  p.functions = functions_section({packed(""), vm_func("main", 0, 2, {"x"}, 2)});
  expect_load_error(assemble(p), {"function 0 has an empty name"});
}

TEST_F(ExecutableIoTest, RejectsOverlappingSections) {
  Parts p = handmade();
  std::string body = p.functions + p.constants + p.code;
  uint64_t f = p.functions.size(), c = p.constants.size();
  std::vector<Entry> table = {
      {1, kTableBytes, f}, {2, kTableBytes + f - 4, c}, {3, kTableBytes + f + c, p.code.size()}};
  expect_load_error(wrap(payload_with_table(table, body)), {"section 'constants'", "overlaps section 'functions'"});
}

TEST_F(ExecutableIoTest, RejectsBytesThatBelongToNoSection) {
  Parts p = handmade();
  uint64_t f = p.functions.size(), c = p.constants.size();
  std::string body = p.functions + "gap!" + p.constants + p.code;
  std::vector<Entry> table = {
      {1, kTableBytes, f}, {2, kTableBytes + f + 4, c}, {3, kTableBytes + f + 4 + c, p.code.size()}};
  expect_load_error(wrap(payload_with_table(table, body)), {"belong to no section"});
  table[1].offset -= 4;
  table[2].offset -= 4;
  expect_load_error(wrap(payload_with_table(table, p.functions + p.constants + p.code + "tail")),
                    {"after the last section"});
}

TEST_F(ExecutableIoTest, RejectsUnknownMissingAndRepeatedSections) {
  Parts p = handmade();
  std::string body = p.functions + p.constants + p.code;
  uint64_t f = p.functions.size(), c = p.constants.size();
  uint64_t start = 8 + 4 * 24;
  std::vector<Entry> table = {{1, start, f}, {2, start + f, c}, {3, start + f + c, p.code.size()}, {9, start, 0}};
  expect_load_error(wrap(payload_with_table(table, body)), {"unknown section id 9"});
  table.back() = {2, start + f, c};
  expect_load_error(wrap(payload_with_table(table, body)), {"section 'constants' is listed twice"});
  start = 8 + 2 * 24;
  table = {{1, start, f}, {2, start + f, c}};
  expect_load_error(wrap(payload_with_table(table, p.functions + p.constants)), {"section 'code' is missing"});
}

TEST_F(ExecutableIoTest, RejectsSectionsOutsideThePayload) {
  Parts p = handmade();
  std::string body = p.functions + p.constants + p.code;
  uint64_t f = p.functions.size(), c = p.constants.size();
  std::vector<Entry> table = {{1, kTableBytes, f}, {2, kTableBytes + f, c}, {3, kTableBytes + f + c, 1u << 20}};
  expect_load_error(wrap(payload_with_table(table, body)), {"section 'code'", "runs past the end"});
  table[2] = {3, std::numeric_limits<uint64_t>::max(), 16};
  expect_load_error(wrap(payload_with_table(table, body)), {"section 'code'", "runs past the end"});
  table[2] = {3, 8, p.code.size()};
  expect_load_error(wrap(payload_with_table(table, body)), {"inside the section table"});
  table[2] = {3, kTableBytes + f + c, p.code.size(), 1};
  expect_load_error(wrap(payload_with_table(table, body)), {"reserved word of section 'code'"});
}

TEST_F(ExecutableIoTest, RejectsTrailingBytesInsideASection) {
  Parts p = handmade();
  p.constants += "zz";
  expect_load_error(assemble(p), {"section 'constants'", "2 unexpected trailing bytes"});
}

TEST_F(ExecutableIoTest, RejectsCountsTheDataCannotHold) {
  Parts p = handmade();
  ByteWriter huge;
  huge.put<uint64_t>(uint64_t{1} << 60);
  Parts q = p;
  q.functions = huge.str();
  expect_load_error(assemble(q), {"section 'functions'", "function count", "exceeds"});
  q = p;
  q.code = huge.str();
  expect_load_error(assemble(q), {"section 'code'", "instr_offset count", "exceeds"});
  ByteWriter shape;
  shape.put<uint64_t>(uint64_t{1} << 61);
  q = p;
  q.constants = raw_constant_section(static_cast<uint8_t>(ValueKind::kShape), shape.str());
  expect_load_error(assemble(q), {"shape ndim of constant 0", "exceeds"});
  q.constants = raw_constant_section(static_cast<uint8_t>(ValueKind::kString), shape.str());
  expect_load_error(assemble(q), {"truncated while reading string of constant 0"});
}

TEST_F(ExecutableIoTest, RejectsBadConstants) {
  Parts p = handmade();
  auto with = [&](ValueKind kind, std::string_view payload) {
    Parts q = p;
    q.constants = raw_constant_section(static_cast<uint8_t>(kind), payload);
    return assemble(q);
  };
  ByteWriter two;
  two.put<int64_t>(2);
  expect_load_error(with(ValueKind::kBool, two.str()), {"constant 0: bool value 2"});
  expect_load_error(with(ValueKind::kFunction, ""), {"constant 0", "tag 11 (function)", "not a serialisable"});
  expect_load_error(with(ValueKind::kHandle, two.str()), {"tag 4 (handle)"});
  expect_load_error(with(static_cast<ValueKind>(200), ""), {"tag 200 (unknown)"});
  ByteWriter device;
  device.put<int32_t>(99);
  device.put<int32_t>(0);
  expect_load_error(with(ValueKind::kDevice, device.str()), {"unknown device type 99"});
  ByteWriter negative;
  negative.put<int32_t>(kDLCPU);
  negative.put<int32_t>(-3);
  expect_load_error(with(ValueKind::kDevice, negative.str()), {"negative device id -3"});
}

TEST_F(ExecutableIoTest, RejectsTensorConstantWithNonZeroReserved) {
  Parts p = handmade();
  ByteWriter t;
  Tensor x = Tensor::empty({2}, DataType::float32());
  static_cast<float*>(x.data())[0] = 1.0f;
  static_cast<float*>(x.data())[1] = 2.0f;
  // Padding as the writer puts it: the data (after a 40-byte header) at a multiple of 64.
  size_t pad_end = kHeaderBytes + kTableBytes + p.functions.size() + 8 + 1 + 1;
  size_t pad = (64 - (pad_end + 40) % 64) % 64;
  t.put<uint8_t>(static_cast<uint8_t>(pad));
  t.put_bytes(std::string(pad, '\0'));
  size_t header_at = t.str().size();
  write_tensor(x, &t);
  std::string payload = t.str();
  p.constants = raw_constant_section(static_cast<uint8_t>(ValueKind::kTensor), payload);
  EXPECT_NO_THROW(Executable::load_from_bytes(assemble(p)));
  payload[header_at + 12] = 1;  // the tensor header's reserved word
  p.constants = raw_constant_section(static_cast<uint8_t>(ValueKind::kTensor), payload);
  expect_load_error(assemble(p), {"constant 0: tensor reserved word is 1"});
  // Padding that leaves the data unaligned, or is not zero, is refused.
  std::string shifted = payload;
  shifted[0] = static_cast<char>(pad + 1);
  shifted.insert(1, 1, '\0');
  p.constants = raw_constant_section(static_cast<uint8_t>(ValueKind::kTensor), shifted);
  expect_load_error(assemble(p), {"constant 0: tensor padding of", "unaligned"});
  if (pad > 0) {
    std::string dirty = std::string(payload);
    dirty[1] = 7;
    p.constants = raw_constant_section(static_cast<uint8_t>(ValueKind::kTensor), dirty);
    expect_load_error(assemble(p), {"constant 0: tensor padding is not zero"});
  }
}

// With a backing owner, tensor constants are used where they lie in the (64-byte aligned) bytes,
// which the owner keeps alive; without one they are copied. Same values either way.
TEST_F(ExecutableIoTest, TensorConstantsAreUsedInPlaceWithABacking) {
  std::string file = full_program(true)->save_to_bytes();
  // The bytes at a 64-byte aligned address, as in a library's blob.
  auto* storage = static_cast<char*>(std::aligned_alloc(64, (file.size() + 63) / 64 * 64));
  std::memcpy(storage, file.data(), file.size());
  std::shared_ptr<void> backing(storage, [](void* p) { std::free(p); });
  std::weak_ptr<void> watch = backing;
  std::string_view bytes(storage, file.size());
  Executable copied = Executable::load_from_bytes(bytes);
  Executable in_place = Executable::load_from_bytes(bytes, backing);
  backing.reset();  // the constants alone keep the bytes now
  int tensors = 0;
  for (size_t i = 0; i < in_place->constants.size(); ++i) {
    expect_same_value(copied->constants[i], in_place->constants[i], i);
    if (in_place->constants[i].kind() != ValueKind::kTensor) continue;
    ++tensors;
    auto* data = static_cast<const char*>(in_place->constants[i].as_tensor().data());
    auto* copy = static_cast<const char*>(copied->constants[i].as_tensor().data());
    EXPECT_TRUE(data >= storage && data < storage + file.size()) << "constant " << i << " was copied";
    EXPECT_FALSE(copy >= storage && copy < storage + file.size()) << "constant " << i << " was not copied";
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  }
  EXPECT_GT(tensors, 0);
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(in_place->save_to_bytes(), file);  // re-saving gives the same file
  in_place = Executable();
  EXPECT_TRUE(watch.expired());
}

// A constant used in place lies in read-only memory (a library's .rodata): what the VM returns
// to its caller is a copy, so the caller may write into it; inside the VM it is not copied.
TEST_F(ExecutableIoTest, ConstantsUsedInPlaceAreCopiedOnTheWayOut) {
  ExecBuilder b;
  b.begin_function("one", {});
  Tensor w = testing::random_float_tensor({4, 16});
  Arg c = Arg::constant(b.add_constant(Value(w)));
  b.emit_call("vm.builtin.copy", {c}, 0);
  b.emit_ret(0);
  b.end_function();
  b.begin_function("pair", {});
  b.emit_call("vm.builtin.make_tuple", {c, c}, 0);
  b.emit_ret(0);
  b.end_function();
  std::string file = b.get()->save_to_bytes();
  auto* storage = static_cast<char*>(std::aligned_alloc(64, (file.size() + 63) / 64 * 64));
  std::memcpy(storage, file.data(), file.size());
  std::shared_ptr<void> backing(storage, [](void* p) { std::free(p); });
  Executable exe = Executable::load_from_bytes(std::string_view(storage, file.size()), backing);
  ASSERT_EQ(exe->in_place_backing.get(), storage);
  auto inside = [&](const Tensor& t) {
    auto* p = static_cast<const char*>(t.data());
    return p >= storage && p < storage + file.size();
  };
  ASSERT_TRUE(inside(exe->constants[0].as_tensor()));
  VirtualMachine vm = VirtualMachine::create(exe.as_module());
  Value one = vm->invoke("one", {});
  EXPECT_FALSE(inside(one.as_tensor()));
  expect_same_value(Value(w), one, 0);
  Value pair = vm->invoke("pair", {});
  ASSERT_EQ(pair.as_array().size(), 2u);
  for (const Value& item : pair.as_array()) {
    EXPECT_FALSE(inside(item.as_tensor()));
    expect_same_value(Value(w), item, 0);
  }
  // Loaded without a backing, nothing is in place and results are returned as they are.
  Executable copied = Executable::load_from_bytes(file);
  EXPECT_EQ(copied->in_place_backing, nullptr);
}

TEST_F(ExecutableIoTest, RejectsBadInstructionOffsets) {
  Parts p = handmade();
  auto code = [](std::vector<int64_t> offsets, size_t words) {
    ByteWriter out;
    out.put<uint64_t>(offsets.size());
    for (int64_t o : offsets) out.put<int64_t>(o);
    out.put<uint64_t>(words);
    for (size_t i = 0; i < words; ++i) out.put<int64_t>(2);
    return std::move(out.str());
  };
  p.code = code({1, 3}, 4);
  expect_load_error(assemble(p), {"instr_offset[0] = 1"});
  p.code = code({0, 0}, 4);
  expect_load_error(assemble(p), {"instr_offset[1] = 0"});
  p.code = code({0, 9}, 4);
  expect_load_error(assemble(p), {"instr_offset[1] = 9"});
  p.code = code({}, 4);
  expect_load_error(assemble(p), {"no instructions"});
}

}  // namespace
}  // namespace anvil::vm
