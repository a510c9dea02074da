// LaunchExpr evaluation and the "ANVK" binary form of kernel launch metadata.
#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"

#include <cstring>
#include <limits>

#include "anvil/base/error.h"
#include "anvil/runtime/data_type.h"
#include "anvil/runtime/device/vulkan/vulkan_kernel_check.h"
#include "anvil/runtime/module/byte_io.h"

namespace anvil::vulkan {
namespace {

constexpr char kMagic[4] = {'A', 'N', 'V', 'K'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr int64_t kNumOps = static_cast<int64_t>(LaunchOp::kMax) + 1;

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

void put_dtype(ByteWriter& w, DLDataType t) {
  w.put<uint8_t>(t.code);
  w.put<uint8_t>(t.bits);
  w.put<uint16_t>(t.lanes);
}

DLDataType get_dtype(ByteReader& r, std::string_view field) {
  DLDataType t;
  t.code = r.get<uint8_t>(field);
  t.bits = r.get<uint8_t>(field);
  t.lanes = r.get<uint16_t>(field);
  return t;
}

bool is_slot_dtype(DLDataType t) {
  if (t.lanes != 1) return false;
  if (t.code == kDLInt) return t.bits == 32 || t.bits == 64;
  if (t.code == kDLUInt) return t.bits == 32;
  if (t.code == kDLFloat) return t.bits == 16 || t.bits == 32 || t.bits == 64;
  return false;
}

bool is_int_slot(DLDataType t) { return t.code == kDLInt || t.code == kDLUInt; }

}  // namespace

void check_kernel_info(const KernelInfo& k, const std::string& where) {
  auto fail = [&](auto&&... parts) { value_error(where, ": ", parts...); };
  if (k.name.empty()) fail("empty kernel name");
  if (k.entry_point.empty()) fail("empty entry point name");
  if (k.spirv.size() < 5) fail("SPIR-V has ", k.spirv.size(), " words; a module needs at least the 5-word header");
  if (k.spirv[0] != kSpirvMagic) fail("SPIR-V does not start with the magic number 0x07230203");
  int32_t nslots = static_cast<int32_t>(k.slots.size());
  int32_t binding = 0;
  for (size_t a = 0; a < k.args.size(); ++a) {
    const KernelArg& arg = k.args[a];
    std::string an = str_cat("argument ", a, " ('", arg.name, "')");
    if (arg.kind == KernelArg::kTensor) {
      if (arg.binding != binding)
        fail(an, " has binding ", arg.binding, " but is tensor number ", binding, " (bindings follow tensor order)");
      ++binding;
      if (arg.shape.size() != arg.shape_slot.size())
        fail(an, " has ", arg.shape.size(), " dims but ", arg.shape_slot.size(), " shape slots");
      if (arg.shape.size() > 64) fail(an, " has rank ", arg.shape.size(), " (more than 64)");
      if (DataType(arg.dtype).bytes() == 0) fail(an, " has an element type of 0 bytes");
      for (size_t d = 0; d < arg.shape.size(); ++d) {
        int64_t e = arg.shape[d];
        int32_t s = arg.shape_slot[d];
        if (e >= 0 && s != -1) fail(an, " dim ", d, " is constant ", e, " but names slot ", s);
        if (e < -1) fail(an, " dim ", d, " has extent ", e);
        if (e == -1) {
          if (s < 0 || s >= nslots) fail(an, " dim ", d, " names slot ", s, " of ", nslots);
          if (!is_int_slot(k.slots[s].dtype)) fail(an, " dim ", d, " names slot ", s, ", which is not an integer");
        }
      }
      if (arg.slot != -1) fail(an, " is a tensor but names scalar slot ", arg.slot);
    } else if (arg.kind == KernelArg::kScalar) {
      if (arg.binding != -1) fail(an, " is a scalar but has binding ", arg.binding);
      if (arg.slot < 0 || arg.slot >= nslots) fail(an, " names slot ", arg.slot, " of ", nslots);
      const ScalarSlot& slot = k.slots[arg.slot];
      if (slot.source != ScalarSlot::kScalarArg || slot.arg != static_cast<int32_t>(a))
        fail(an, " names slot ", arg.slot, ", which does not come from that argument");
      if (!arg.shape.empty() || !arg.shape_slot.empty()) fail(an, " is a scalar but has a shape");
    } else {
      fail(an, " has unknown kind ", static_cast<int32_t>(arg.kind));
    }
  }
  for (int32_t s = 0; s < nslots; ++s) {
    const ScalarSlot& slot = k.slots[s];
    std::string sn = str_cat("slot ", s);
    if (!is_slot_dtype(slot.dtype))
      fail(sn, " has type ", DataType(slot.dtype).to_string(), " (expected int32, int64, uint32, float16/32/64)");
    if (slot.arg < 0 || slot.arg >= static_cast<int32_t>(k.args.size()))
      fail(sn, " comes from argument ", slot.arg, " of ", k.args.size());
    const KernelArg& arg = k.args[slot.arg];
    if (slot.source == ScalarSlot::kScalarArg) {
      if (arg.kind != KernelArg::kScalar || arg.slot != s)
        fail(sn, " names argument ", slot.arg, ", which is not its scalar");
    } else if (slot.source == ScalarSlot::kTensorDim) {
      if (arg.kind != KernelArg::kTensor) fail(sn, " names a dim of argument ", slot.arg, ", which is not a tensor");
      if (slot.dim < 0 || slot.dim >= static_cast<int32_t>(arg.shape.size()))
        fail(sn, " names dim ", slot.dim, " of a rank-", arg.shape.size(), " tensor");
      if (arg.shape_slot[slot.dim] != s)
        fail(sn, " names dim ", slot.dim, " of argument ", slot.arg, ", which uses another slot");
      if (!is_int_slot(slot.dtype)) fail(sn, " holds a tensor dim but is not an integer");
    } else {
      fail(sn, " has unknown source ", static_cast<int32_t>(slot.source));
    }
    uint32_t size = slot.dtype.bits / 8;
    if (slot.offset % size != 0) fail(sn, " offset ", slot.offset, " is not aligned to its size ", size);
    if (slot.offset > k.block_bytes || size > k.block_bytes - slot.offset)
      fail(sn, " at offset ", slot.offset, " (", size, " bytes) overflows the ", k.block_bytes, "-byte block");
  }
  if (k.block_bytes > 65536) fail("scalar block of ", k.block_bytes, " bytes (at most 65536)");
  if (k.block_in_uniform && k.block_bytes == 0) fail("block_in_uniform without a block");
  for (int i = 0; i < 3; ++i) {
    const std::vector<int64_t>& code = k.grid[i].code;
    int64_t depth = 0;
    for (size_t pc = 0; pc < code.size(); ++pc) {
      int64_t op = code[pc];
      if (op < 0 || op >= kNumOps) fail("grid[", i, "] has unknown opcode ", op, " at ", pc);
      if (op == static_cast<int64_t>(LaunchOp::kConst) || op == static_cast<int64_t>(LaunchOp::kSlot)) {
        if (pc + 1 >= code.size()) fail("grid[", i, "] ends inside an operand");
        int64_t operand = code[++pc];
        if (op == static_cast<int64_t>(LaunchOp::kSlot) &&
            (operand < 0 || operand >= nslots || !is_int_slot(k.slots[operand].dtype)))
          fail("grid[", i, "] reads slot ", operand, ", which is not an integer slot of ", nslots);
        ++depth;
      } else {
        if (depth < 2) fail("grid[", i, "] pops an empty stack at ", pc);
        --depth;
      }
    }
    if (depth != 1) fail("grid[", i, "] leaves ", depth, " values (expected 1)");
    if (k.workgroup_size[i] == 0) fail("workgroup_size[", i, "] is 0");
  }
}

int32_t KernelInfo::num_tensors() const {
  int32_t n = 0;
  for (const KernelArg& a : args) n += a.kind == KernelArg::kTensor;
  return n;
}

int64_t LaunchExpr::eval(std::span<const int64_t> slots) const {
  std::vector<int64_t> stack;
  stack.reserve(8);
  for (size_t pc = 0; pc < code.size(); ++pc) {
    int64_t op = code[pc];
    if (op == static_cast<int64_t>(LaunchOp::kConst) || op == static_cast<int64_t>(LaunchOp::kSlot)) {
      if (pc + 1 >= code.size()) value_error("LaunchExpr: opcode at ", pc, " lacks its operand");
      int64_t operand = code[++pc];
      if (op == static_cast<int64_t>(LaunchOp::kSlot)) {
        if (operand < 0 || operand >= static_cast<int64_t>(slots.size()))
          value_error("LaunchExpr: slot ", operand, " out of range (", slots.size(), " slots)");
        operand = slots[operand];
      }
      stack.push_back(operand);
      continue;
    }
    if (op < 0 || op >= kNumOps) value_error("LaunchExpr: unknown opcode ", op, " at ", pc);
    if (stack.size() < 2) value_error("LaunchExpr: opcode ", op, " at ", pc, " needs 2 operands");
    int64_t b = stack.back();
    stack.pop_back();
    int64_t a = stack.back();
    int64_t r = 0;
    bool overflow = false;
    switch (static_cast<LaunchOp>(op)) {
      case LaunchOp::kAdd:
        overflow = __builtin_add_overflow(a, b, &r);
        break;
      case LaunchOp::kSub:
        overflow = __builtin_sub_overflow(a, b, &r);
        break;
      case LaunchOp::kMul:
        overflow = __builtin_mul_overflow(a, b, &r);
        break;
      case LaunchOp::kFloorDiv:
      case LaunchOp::kFloorMod:
        if (b == 0) value_error("LaunchExpr: division by zero at ", pc);
        if (a == std::numeric_limits<int64_t>::min() && b == -1) {
          overflow = op == static_cast<int64_t>(LaunchOp::kFloorDiv);
          r = 0;
        } else {
          r = op == static_cast<int64_t>(LaunchOp::kFloorDiv) ? floor_div(a, b) : a - floor_div(a, b) * b;
        }
        break;
      case LaunchOp::kMin:
        r = a < b ? a : b;
        break;
      case LaunchOp::kMax:
        r = a < b ? b : a;
        break;
      default:
        value_error("LaunchExpr: unknown opcode ", op, " at ", pc);
    }
    if (overflow) value_error("LaunchExpr: int64 overflow at ", pc, " (", a, ", ", b, ")");
    stack.back() = r;
  }
  if (stack.size() != 1) value_error("LaunchExpr: program leaves ", stack.size(), " values (expected 1)");
  return stack.back();
}

std::string serialize_kernels(const std::vector<KernelInfo>& kernels) {
  for (const KernelInfo& k : kernels) check_kernel_info(k, str_cat("serialize_kernels: kernel '", k.name, "'"));
  ByteWriter w;
  w.put_bytes(std::string_view(kMagic, 4));
  w.put<uint32_t>(kVersion);
  w.put<uint64_t>(kernels.size());
  for (const KernelInfo& k : kernels) {
    w.put_string(k.name);
    w.put_string(k.entry_point);
    w.put<uint64_t>(k.spirv.size());
    w.put_bytes(std::string_view(reinterpret_cast<const char*>(k.spirv.data()), k.spirv.size() * 4));
    w.put<uint64_t>(k.args.size());
    for (const KernelArg& a : k.args) {
      w.put<int32_t>(a.kind);
      w.put_string(a.name);
      put_dtype(w, a.dtype);
      w.put<int32_t>(a.binding);
      w.put<uint64_t>(a.shape.size());
      for (int64_t e : a.shape) w.put<int64_t>(e);
      w.put<uint64_t>(a.shape_slot.size());
      for (int32_t s : a.shape_slot) w.put<int32_t>(s);
      w.put<int32_t>(a.slot);
    }
    w.put<uint64_t>(k.slots.size());
    for (const ScalarSlot& s : k.slots) {
      w.put<int32_t>(s.source);
      w.put<int32_t>(s.arg);
      w.put<int32_t>(s.dim);
      put_dtype(w, s.dtype);
      w.put<uint32_t>(s.offset);
    }
    w.put<uint32_t>(k.block_bytes);
    w.put<uint8_t>(k.block_in_uniform ? 1 : 0);
    for (const LaunchExpr& g : k.grid) {
      w.put<uint64_t>(g.code.size());
      for (int64_t c : g.code) w.put<int64_t>(c);
    }
    for (uint32_t s : k.workgroup_size) w.put<uint32_t>(s);
    w.put<uint32_t>(k.shared_memory_bytes);
  }
  return std::move(w.str());
}

std::vector<KernelInfo> parse_kernels(std::string_view bytes) {
  ByteReader r(bytes, "vulkan kernels");
  std::string_view magic = r.get_bytes(4, "magic");
  if (magic != std::string_view(kMagic, 4)) r.fail("bad magic (expected \"ANVK\")");
  uint32_t version = r.get<uint32_t>("version");
  if (version != kVersion)
    value_error("vulkan kernels: version ", version, " is not supported (expected ", kVersion, ")");
  uint64_t n = r.get_count("kernel count", 64);
  std::vector<KernelInfo> kernels(n);
  for (uint64_t i = 0; i < n; ++i) {
    KernelInfo& k = kernels[i];
    k.name = std::string(r.get_string("kernel name"));
    k.entry_point = std::string(r.get_string("entry point"));
    uint64_t words = r.get_count("SPIR-V word count", 4);
    std::string_view code = r.get_bytes(words * 4, "SPIR-V words");
    k.spirv.resize(words);
    if (words) std::memcpy(k.spirv.data(), code.data(), words * 4);
    uint64_t nargs = r.get_count("argument count", 36);
    k.args.resize(nargs);
    for (KernelArg& a : k.args) {
      a.kind = static_cast<KernelArg::Kind>(r.get<int32_t>("argument kind"));
      a.name = std::string(r.get_string("argument name"));
      a.dtype = get_dtype(r, "argument dtype");
      a.binding = r.get<int32_t>("argument binding");
      uint64_t ndim = r.get_count("argument rank", 8);
      a.shape.resize(ndim);
      for (int64_t& e : a.shape) e = r.get<int64_t>("argument shape");
      uint64_t nss = r.get_count("argument shape slots", 4);
      a.shape_slot.resize(nss);
      for (int32_t& s : a.shape_slot) s = r.get<int32_t>("argument shape slot");
      a.slot = r.get<int32_t>("argument slot");
    }
    uint64_t nslots = r.get_count("slot count", 20);
    k.slots.resize(nslots);
    for (ScalarSlot& s : k.slots) {
      s.source = static_cast<ScalarSlot::Source>(r.get<int32_t>("slot source"));
      s.arg = r.get<int32_t>("slot argument");
      s.dim = r.get<int32_t>("slot dim");
      s.dtype = get_dtype(r, "slot dtype");
      s.offset = r.get<uint32_t>("slot offset");
    }
    k.block_bytes = r.get<uint32_t>("block bytes");
    uint8_t uniform = r.get<uint8_t>("block_in_uniform");
    if (uniform > 1) value_error("vulkan kernels: kernel '", k.name, "': block_in_uniform is ", int(uniform));
    k.block_in_uniform = uniform == 1;
    for (LaunchExpr& g : k.grid) {
      uint64_t len = r.get_count("grid expression length", 8);
      g.code.resize(len);
      for (int64_t& c : g.code) c = r.get<int64_t>("grid expression");
    }
    for (uint32_t& s : k.workgroup_size) s = r.get<uint32_t>("workgroup size");
    k.shared_memory_bytes = r.get<uint32_t>("shared memory bytes");
    check_kernel_info(k, str_cat("vulkan kernels: kernel ", i, " ('", k.name, "')"));
  }
  if (r.remaining() != 0) r.fail(str_cat(r.remaining(), " trailing bytes after the last kernel"));
  return kernels;
}

}  // namespace anvil::vulkan
