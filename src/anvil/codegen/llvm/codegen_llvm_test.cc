// build_llvm details that the shared conformance suite does not see: the integer flags of the
// emitted IR (index arithmetic carries nsw, value arithmetic keeps wrapping semantics) and the
// alignment of loads and stores (64 bytes where provable, the element size for arguments).
#include "anvil/codegen/llvm/codegen_llvm.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/test_util.h"
#include "anvil/base/error.h"
#include "anvil/tir/stmt.h"

namespace anvil::codegen {
namespace {

using ir::buffer_load;
using ir::decl_buffer;
using ir::PrimExpr;
using ir::ramp;
using ir::Var;
using testing::error_of;

// B[i] = A[i * 2 + 1] * 7 + 5 over int32: the index arithmetic may assume no signed overflow
// (an overflowing index is out of bounds), the stored value must wrap like the evaluator's.
tir::PrimFunc strided_affine() {
  Var n = ir::size_var("n"), i("i");
  ir::Buffer A = decl_buffer({n * 2 + 1}, DataType::int32(), "A"), B = decl_buffer({n}, DataType::int32(), "B");
  return tir::make_prim_func(
      "strided_affine", {A, B},
      tir::make_for(i, 0, n, tir::buffer_store(B, buffer_load(A, {i * 2 + 1}) * 7 + 5, {i})));
}

TEST(CodeGenLLVM, IndexArithmeticIsNswAndValueArithmeticWraps) {
  register_runtime_functions();
  // Unoptimised IR shows the flags as emitted.
  std::string ll = llvm_module_source(build_llvm({strided_affine()}, Target::parse("llvm -opt-level=0")), "ll");
  EXPECT_NE(ll.find("mul nsw i32"), std::string::npos) << ll;  // i * 2 in the index
  EXPECT_NE(ll.find("add nsw i32"), std::string::npos) << ll;  // + 1 in the index, loop increment
  EXPECT_NE(ll.find("mul i32"), std::string::npos) << ll;      // value * 7: no nsw
  // Optimised code still wraps the values: INT32_MAX * 7 + 5 == 2147483646 (mod 2^32).
  Module m = build_llvm({strided_affine()}, Target::parse("llvm"));
  const int64_t n = 37;
  Tensor a = Tensor::empty({2 * n + 1}, DataType::int32()), b = Tensor::empty({n}, DataType::int32());
  auto* ap = static_cast<int32_t*>(a.data());
  for (int64_t x = 0; x < 2 * n + 1; ++x) ap[x] = x % 3 == 0 ? INT32_MAX : static_cast<int32_t>(x * 1000 - 20000);
  m["strided_affine"](a, b);
  for (int64_t x = 0; x < n; ++x) {
    uint32_t want = static_cast<uint32_t>(ap[2 * x + 1]) * 7u + 5u;
    ASSERT_EQ(static_cast<int32_t*>(b.data())[x], static_cast<int32_t>(want)) << "at " << x;
  }
}


// T (allocated, 64-byte aligned) = A + A in 16-lane vectors; B[16 io + 1 ..] = T[16 io + 1 ..] +
// T[16 io ..] (through a let); B[0] = T[0]. n = 16 * (blocks + 1); a stack array for a constant
// n, a workspace allocation for a symbolic one. With parallel, the fill loop is a parallel loop
// (T and A reach its task body as arguments).
tir::PrimFunc aligned_blocks(PrimExpr n_expr, const char* name, bool parallel = false) {
  Var io("io"), jo("jo"), base("base");
  ir::Buffer A = decl_buffer({n_expr}, DataType::float32(), "A"), B = decl_buffer({n_expr}, DataType::float32(), "B");
  ir::Buffer T = decl_buffer({n_expr}, DataType::float32(), "T");
  PrimExpr blocks = ir::floordiv(n_expr, 16);
  tir::Stmt fill = tir::make_for(io, 0, blocks,
                                 tir::buffer_store(T, buffer_load(A, {ramp(io * 16, 1, 16)}) + buffer_load(A, {ramp(io * 16, 1, 16)}),
                                                   {ramp(io * 16, 1, 16)}),
                                 parallel ? tir::ForKind::kParallel : tir::ForKind::kSerial);
  tir::Stmt use = tir::make_for(
      jo, 0, blocks - 1,
      tir::let_stmt(base, jo * 16,
                    tir::buffer_store(B, buffer_load(T, {ramp(base + 1, 1, 16)}) + buffer_load(T, {ramp(base, 1, 16)}),
                                      {ramp(base + 1, 1, 16)})));
  tir::Stmt first = tir::buffer_store(B, buffer_load(T, {PrimExpr(0)}), {PrimExpr(0)});
  tir::Stmt body = tir::allocate(T->data(), DataType::float32(), {n_expr}, "global", tir::seq({fill, use, first}));
  return tir::make_prim_func(name, {A, B}, body);
}

// The alignments of the vector loads / stores of <16 x float> in ll, in order.
std::vector<std::string> vector_alignments(const std::string& ll, const std::string& what) {
  std::vector<std::string> out;
  std::regex re(what == "load" ? R"(load <16 x float>, ptr %[\w.]+, align (\d+))"
                               : R"(store <16 x float> %[\w.]+, ptr %[\w.]+, align (\d+))");
  for (auto it = std::sregex_iterator(ll.begin(), ll.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

TEST(CodeGenLLVM, VectorAccessAlignmentFollowsBufferAndIndex) {
  register_runtime_functions();
  for (bool symbolic : {false, true}) {
    Var n = ir::size_var("n");
    tir::PrimFunc f = aligned_blocks(symbolic ? PrimExpr(n) : PrimExpr(256), "blocks");
    std::string ll = llvm_module_source(build_llvm({f}, Target::parse("llvm -opt-level=0")), "ll");
    // Loads: A twice (argument: element alignment), T[base + 1] (4), T[base] (64, base = 16 jo).
    EXPECT_EQ(vector_alignments(ll, "load"), (std::vector<std::string>{"4", "4", "4", "64"})) << ll;
    // Stores: T[16 io] (64), B[base + 1] (argument, 4).
    EXPECT_EQ(vector_alignments(ll, "store"), (std::vector<std::string>{"64", "4"})) << ll;
    // The compute function may assume what the entry checked.
    EXPECT_NE(ll.find("ptr noalias align 4 %A"), std::string::npos) << ll;
  }
  // A parallel task body gets T's alignment as an argument attribute and keeps align 64.
  std::string ll = llvm_module_source(build_llvm({aligned_blocks(PrimExpr(256), "blocks", true)},
                                                 Target::parse("llvm -opt-level=0 -num-cores=2")), "ll");
  EXPECT_NE(ll.find("ptr noalias align 64 %T"), std::string::npos) << ll;
  std::vector<std::string> stores = vector_alignments(ll, "store");  // the task body comes last
  std::sort(stores.begin(), stores.end());
  EXPECT_EQ(stores, (std::vector<std::string>{"4", "64"})) << ll;
}

TEST(CodeGenLLVM, AlignedVectorKernelMatchesLoopAndArgumentsNeedOnlyElementAlignment) {
  register_runtime_functions();
  Var n = ir::size_var("n");
  for (int variant = 0; variant < 3; ++variant) {
    bool symbolic = variant == 1, parallel = variant == 2;
    const int64_t len = 256;
    const std::vector<int64_t> shape{len};
    Module m = build_llvm({aligned_blocks(symbolic ? PrimExpr(n) : PrimExpr(256), "blocks", parallel)},
                          Target::parse("llvm -num-cores=2"));
    std::mt19937 rng(11 + variant);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    // Arguments at byte offsets 0 (64-byte aligned), 4 and 20 (only element aligned) work.
    for (uint64_t offset : {0u, 4u, 20u}) {
      Tensor raw_a = Tensor::empty({len * 4 + 64}, DataType::uint8()), raw_b = Tensor::empty({len * 4 + 64}, DataType::uint8());
      Tensor a = raw_a.view(shape, DataType::float32(), offset);
      Tensor b = raw_b.view(shape, DataType::float32(), offset);
      auto* ap = static_cast<float*>(a.data());
      auto* bp = static_cast<float*>(b.data());
      for (int64_t x = 0; x < len; ++x) ap[x] = dist(rng), bp[x] = -7.0f;
      m["blocks"](a, b);
      std::vector<float> t(len), want(len, -7.0f);
      for (int64_t x = 0; x < len; ++x) t[x] = ap[x] + ap[x];
      for (int64_t jo = 0; jo < len / 16 - 1; ++jo)
        for (int64_t l = 0; l < 16; ++l) want[jo * 16 + 1 + l] = t[jo * 16 + 1 + l] + t[jo * 16 + l];
      want[0] = t[0];
      for (int64_t x = 0; x < len; ++x)
        ASSERT_EQ(bp[x], want[x]) << "at " << x << ", offset " << offset << ", variant " << variant;
    }
    // A float32 argument that is not 4-byte aligned is refused with the argument and the fix.
    Tensor raw = Tensor::empty({len * 4 + 64}, DataType::uint8()), ok = Tensor::empty({len}, DataType::float32());
    Tensor odd = raw.view(shape, DataType::float32(), 2);
    std::string msg = error_of([&] { m["blocks"](ok, odd); });
    EXPECT_NE(msg.find("blocks: argument 1 (B) has data address 0x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("but expected a multiple of 4 (float32 elements must be aligned; pass an aligned copy"),
              std::string::npos) << msg;
    Tensor other = Tensor::empty({len}, DataType::float32());
    m["blocks"](ok, other);  // still usable
  }
}

// A vector load with a constant stride of 2-4 is one masked load of the span and a shuffle:
// B[io * lanes + l] = A[(io * lanes + l) * stride]. A ends exactly at a PROT_NONE page, so a
// load that touched one element past the last lane's would fault; every lane must match.
TEST(CodeGenLLVM, StridedVectorLoadsReadOnlyTheirSpan) {
  register_runtime_functions();
  const long page = sysconf(_SC_PAGESIZE);
  for (DataType dt : {DataType::float32(), DataType::int16(), DataType::int8()})
    for (int stride : {2, 3, 4, 5})
      for (int lanes : {4, 16}) {
        const int64_t blocks = 3, n = blocks * lanes, a_len = (n - 1) * stride + 1;
        Var io("io");
        ir::Buffer A = decl_buffer({PrimExpr(static_cast<int>(a_len))}, dt, "A");
        ir::Buffer B = decl_buffer({PrimExpr(static_cast<int>(n))}, dt, "B");
        tir::PrimFunc f = tir::make_prim_func(
            "strided", {A, B},
            tir::make_for(io, 0, static_cast<int>(blocks),
                          tir::buffer_store(B, buffer_load(A, {ramp(io * (lanes * stride), stride, lanes)}),
                                            {ramp(io * lanes, 1, lanes)})));
        Module m = build_llvm({f}, Target::parse("llvm"));
        const int64_t bytes = a_len * dt.bytes(), pages = (bytes + page - 1) / page + 1;
        void* mem = mmap(nullptr, static_cast<size_t>(pages * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
        ASSERT_NE(mem, MAP_FAILED);
        char* guard = static_cast<char*>(mem) + (pages - 1) * page;
        ASSERT_EQ(mprotect(guard, static_cast<size_t>(page), PROT_NONE), 0);
        char* a_data = guard - bytes;  // element-aligned: bytes is a multiple of the element size
        for (int64_t x = 0; x < bytes; ++x) a_data[x] = static_cast<char>(x * 7 + 3);
        const std::vector<int64_t> a_shape{a_len};
        Tensor a = Tensor::wrap(a_data, a_shape, dt, Device::cpu(), nullptr);
        Tensor b = Tensor::empty({n}, dt);
        m["strided"](a, b);
        const auto* bp = static_cast<const char*>(b.data());
        for (int64_t x = 0; x < n; ++x)
          ASSERT_EQ(std::memcmp(bp + x * dt.bytes(), a_data + x * stride * dt.bytes(), static_cast<size_t>(dt.bytes())), 0)
              << "lane " << x << " stride " << stride << " lanes " << lanes << " " << ir::dtype_name(dt);
        munmap(mem, static_cast<size_t>(pages * page));
      }
}

// bfloat16 is not IEEE float16: its values are raw bits computed through float32 and rounded
// once per operation (codegen_llvm_lowp.cc), so A + A * 3 rounds after the multiply and the add.
TEST(CodeGenLLVM, Bfloat16ArithmeticRoundsEachOperationThroughFloat32) {
  register_runtime_functions();
  Var n = ir::size_var("n"), i("i");
  ir::Buffer A = decl_buffer({n}, DataType::bfloat16(), "A"), B = decl_buffer({n}, DataType::bfloat16(), "B");
  PrimExpr a = buffer_load(A, {i});
  tir::PrimFunc f = tir::make_prim_func(
      "bf16_madd", {A, B}, tir::make_for(i, 0, n, tir::buffer_store(B, a + a * ir::float_imm(3.0, DataType::bfloat16()), {i})));
  Module m = build_llvm({f}, Target::parse("llvm"));
  auto to_bits = [](double v) {  // float32 -> bfloat16, nearest even (values here are finite)
    float x = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
  };
  auto to_double = [](uint16_t h) {
    uint32_t u = static_cast<uint32_t>(h) << 16;
    float x;
    std::memcpy(&x, &u, 4);
    return static_cast<double>(x);
  };
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  const int64_t count = 257;
  Tensor ta = Tensor::empty({count}, DataType::bfloat16()), tb = Tensor::empty({count}, DataType::bfloat16());
  auto* ap = static_cast<uint16_t*>(ta.data());
  for (int64_t k = 0; k < count; ++k) ap[k] = to_bits(dist(rng));
  m["bf16_madd"](ta, tb);
  for (int64_t k = 0; k < count; ++k) {
    double x = to_double(ap[k]);
    uint16_t want = to_bits(x + to_double(to_bits(x * 3.0)));
    ASSERT_EQ(static_cast<const uint16_t*>(tb.data())[k], want) << "at " << k << " x = " << x;
  }
}

}  // namespace
}  // namespace anvil::codegen
