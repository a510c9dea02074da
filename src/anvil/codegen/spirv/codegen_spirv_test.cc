// The SPIR-V code generator on hand-made PrimFuncs: every module validates; the launch metadata
// (arguments, slots, offsets, grid, workgroup size) is what vulkan_kernel_info.h documents; what
// the target lacks or the back end cannot do fails with the documented errors.
#include "anvil/codegen/spirv/codegen_spirv.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/codegen/spirv/spirv_test_util.h"
#include "anvil/tir/workgroup_barrier.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::codegen::spirv {
namespace {

using ir::DataType;
using ir::PrimExpr;
using testing::compile;
using testing::elementwise;
using testing::full_target;
using testing::plain_target;

template <typename F>
std::string error_of(F&& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(CodegenSpirv, ElementwiseOverEveryDtypeValidates) {
  for (DataType t : {DataType::int8(), DataType::int16(), DataType::int32(), DataType::int64(), DataType::uint8(),
                     DataType::uint16(), DataType::uint32(), DataType::float16(), DataType::float32(),
                     DataType::float64()}) {
    SCOPED_TRACE(t.to_string());
    auto f = elementwise("ew_" + t.to_string(), t, t, 1000, [&](PrimExpr x) { return x * ir::make_const(t, 3) + x; });
    vulkan::KernelInfo k = compile(f);
    EXPECT_EQ(k.name, "ew_" + t.to_string());
    EXPECT_EQ(k.entry_point, "main");
    ASSERT_EQ(k.args.size(), 2u);
    EXPECT_EQ(DataType(k.args[0].dtype), t);
    EXPECT_EQ(k.args[0].binding, 0);
    EXPECT_EQ(k.args[1].binding, 1);
    EXPECT_EQ(k.args[0].shape, (std::vector<int64_t>{1000}));
    EXPECT_EQ(k.args[0].shape_slot, (std::vector<int32_t>{-1}));
    EXPECT_TRUE(k.slots.empty());
    EXPECT_EQ(k.block_bytes, 0u);
    EXPECT_EQ(k.workgroup_size, (std::array<uint32_t, 3>{64, 1, 1}));
    EXPECT_EQ(k.grid[0].eval({}), 16);
    EXPECT_EQ(k.grid[1].eval({}), 1);
  }
}

TEST(CodegenSpirv, Float16StorageWithFloat32ArithmeticNeedsOnly16BitBuffers) {
  VulkanTarget t = plain_target();
  t.supports_16bit_buffer = true;
  auto f = elementwise("half_io", DataType::float16(), DataType::float16(), 256, [](PrimExpr x) {
    return ir::cast(DataType::float16(), ir::cast(DataType::float32(), x) * 2.0f);
  });
  vulkan::KernelInfo k = compile(f, t);
  std::string text = testing::disassembly(k);
  EXPECT_NE(text.find("StorageBuffer16BitAccess"), std::string::npos);
  EXPECT_EQ(text.find("Capability Float16"), std::string::npos) << text;
}

TEST(CodegenSpirv, MissingCapabilitiesNameTheAttributeAndTheKernel) {
  auto i64 = elementwise("add64", DataType::int64(), DataType::int64(), 64, [](PrimExpr x) { return x + x; });
  std::string msg = error_of([&] { compile(i64, plain_target()); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("supports_int64"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'add64'"), std::string::npos) << msg;

  auto h = elementwise("half_add", DataType::float16(), DataType::float16(), 64, [](PrimExpr x) { return x + x; });
  msg = error_of([&] { compile(h, plain_target()); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("supports_16bit_buffer"), std::string::npos) << msg;
  VulkanTarget t = plain_target();
  t.supports_16bit_buffer = true;
  msg = error_of([&] { compile(h, t); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("supports_float16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'half_add'"), std::string::npos) << msg;

  auto i8 = elementwise("bytes", DataType::int8(), DataType::int8(), 64, [](PrimExpr x) { return x + x; });
  t.supports_8bit_buffer = true;
  msg = error_of([&] { compile(i8, t); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("supports_int8"), std::string::npos) << msg;
  auto f64 = elementwise("dbl", DataType::float64(), DataType::float64(), 64, [](PrimExpr x) { return x + x; });
  msg = error_of([&] { compile(f64, plain_target()); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("supports_float64"), std::string::npos) << msg;
}

TEST(CodegenSpirv, SymbolicLengthGetsATensorDimSlotAndAGridExpression) {
  auto f = elementwise("ew_n", DataType::float32(), DataType::float32(), -1, [](PrimExpr x) { return x + 1.0f; });
  vulkan::KernelInfo k = compile(f, plain_target());
  ASSERT_EQ(k.slots.size(), 1u);
  EXPECT_EQ(k.slots[0].source, vulkan::ScalarSlot::kTensorDim);
  EXPECT_EQ(k.slots[0].arg, 0);
  EXPECT_EQ(k.slots[0].dim, 0);
  EXPECT_EQ(DataType(k.slots[0].dtype), DataType::int32());
  EXPECT_EQ(k.slots[0].offset, 0u);
  EXPECT_EQ(k.block_bytes, 4u);
  EXPECT_FALSE(k.block_in_uniform);
  EXPECT_EQ(k.args[0].shape, (std::vector<int64_t>{-1}));
  EXPECT_EQ(k.args[0].shape_slot, (std::vector<int32_t>{0}));
  EXPECT_EQ(k.args[1].shape_slot, (std::vector<int32_t>{0}));  // same symbol: the call must agree
  for (int64_t n : {1, 63, 64, 65, 1000}) EXPECT_EQ(k.grid[0].eval(std::vector<int64_t>{n}), (n + 63) / 64) << n;
  // Golden: floordiv(n + 63, 64) in postfix.
  using Op = vulkan::LaunchOp;
  auto op = [](Op o) { return static_cast<int64_t>(o); };
  EXPECT_EQ(k.grid[0].code, (std::vector<int64_t>{op(Op::kSlot), 0, op(Op::kConst), 63, op(Op::kAdd), op(Op::kConst), 64,
                                                  op(Op::kFloorDiv)}));
  EXPECT_EQ(k.grid[1].code, (std::vector<int64_t>{op(Op::kConst), 1}));
}

// out[0] = sum of the scalars (as float32), the scalars of the given types.
tir::PrimFunc scalar_sum(const std::string& name, const std::vector<DataType>& types) {
  ir::Buffer out = ir::decl_buffer({1}, DataType::float32(), "out");
  std::vector<tir::FuncParam> params;
  PrimExpr acc = 0.0f;
  for (size_t i = 0; i < types.size(); ++i) {
    ir::Var v("s" + std::to_string(i), types[i]);
    params.push_back(v);
    acc = acc + ir::cast(DataType::float32(), v);
  }
  params.push_back(out);
  ir::Var tx("tx");
  tir::Stmt body = tir::make_thread_for(tx, 0, 1, "threadIdx.x", tir::buffer_store(out, acc, {0}));
  return tir::make_prim_func(name, params, body);
}

TEST(CodegenSpirv, ScalarSlotsUseStd430OffsetsInPushConstants) {
  auto f = scalar_sum("mixed", {DataType::int32(), DataType::int64(), DataType::float32(), DataType::int8(),
                                DataType::float64(), DataType::boolean(), DataType::float16()});
  vulkan::KernelInfo k = compile(f);
  ASSERT_EQ(k.slots.size(), 7u);
  std::vector<uint32_t> offsets;
  std::vector<DataType> types;
  for (const auto& s : k.slots) {
    offsets.push_back(s.offset);
    types.push_back(DataType(s.dtype));
    EXPECT_EQ(s.source, vulkan::ScalarSlot::kScalarArg);
  }
  EXPECT_EQ(offsets, (std::vector<uint32_t>{0, 8, 16, 20, 24, 32, 36}));
  EXPECT_EQ(types, (std::vector<DataType>{DataType::int32(), DataType::int64(), DataType::float32(), DataType::int32(),
                                          DataType::float64(), DataType::int32(), DataType::float32()}));
  EXPECT_EQ(k.block_bytes, 40u);
  EXPECT_FALSE(k.block_in_uniform);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(k.args[i].kind, vulkan::KernelArg::kScalar);
    EXPECT_EQ(k.args[i].slot, i);
    EXPECT_EQ(k.slots[i].arg, i);
  }
  EXPECT_EQ(k.args[7].kind, vulkan::KernelArg::kTensor);
  EXPECT_EQ(k.args[7].binding, 0);
  EXPECT_NE(testing::disassembly(k).find("PushConstant"), std::string::npos);
}

TEST(CodegenSpirv, FortyScalarsGoToAUniformBufferAfterTheTensors) {
  std::vector<DataType> types(40, DataType::float32());
  for (int i = 0; i < 40; i += 2) types[i] = DataType::int32();
  vulkan::KernelInfo k = compile(scalar_sum("forty", types));
  EXPECT_EQ(k.block_bytes, 160u);
  EXPECT_TRUE(k.block_in_uniform);
  EXPECT_EQ(k.slots[39].offset, 156u);
  std::string text = testing::disassembly(k);
  EXPECT_NE(text.find("Uniform"), std::string::npos);
  EXPECT_NE(text.find("Binding 1"), std::string::npos) << text;  // one tensor: binding 0
  // A larger push-constant budget keeps them in push constants; a small uniform range rejects them.
  VulkanTarget big = full_target();
  big.max_push_constants_size = 256;
  EXPECT_FALSE(compile(scalar_sum("forty", types), big).block_in_uniform);
  VulkanTarget small = full_target();
  small.max_uniform_buffer_range = 128;
  std::string msg = error_of([&] { compile(scalar_sum("forty", types), small); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("max_uniform_buffer_range"), std::string::npos) << msg;
}

TEST(CodegenSpirv, ScalarParameterUsedAsAShapeSharesItsSlot) {
  ir::Var n("n");
  ir::Buffer A = ir::decl_buffer({n, 4}, DataType::float32(), "A");
  ir::Var tx("tx"), j("j");
  tir::Stmt body = tir::make_thread_for(
      tx, 0, 32, "threadIdx.x",
      tir::if_then_else(tx < n, tir::make_for(j, 0, 4, tir::buffer_store(A, ir::buffer_load(A, {tx, j}) * 2.0f, {tx, j}))));
  vulkan::KernelInfo k = compile(tir::make_prim_func("scale_rows", {A, n}, body));
  ASSERT_EQ(k.slots.size(), 1u);
  EXPECT_EQ(k.slots[0].source, vulkan::ScalarSlot::kScalarArg);
  EXPECT_EQ(k.slots[0].arg, 1);
  EXPECT_EQ(k.args[0].shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(k.args[0].shape_slot, (std::vector<int32_t>{0, -1}));
  EXPECT_EQ(k.args[1].slot, 0);
}

TEST(CodegenSpirv, TwoDimensionalGridAndWorkgroup) {
  ir::Var n = ir::size_var("n"), m = ir::size_var("m");
  ir::Buffer A = ir::decl_buffer({n, m}, DataType::float32(), "A");
  ir::Buffer B = ir::decl_buffer({n, m}, DataType::float32(), "B");
  ir::Var by("by"), bx("bx"), ty("ty"), tx("tx");
  PrimExpr i = by * 8 + ty, j = bx * 16 + tx;
  tir::Stmt st = tir::if_then_else(i < n && j < m, tir::buffer_store(B, ir::buffer_load(A, {i, j}) + 1.0f, {i, j}));
  tir::Stmt body = tir::make_thread_for(
      by, 0, ir::floordiv(n + 7, 8), "blockIdx.y",
      tir::make_thread_for(bx, 0, ir::floordiv(m + 15, 16), "blockIdx.x",
                           tir::make_thread_for(ty, 0, 8, "threadIdx.y", tir::make_thread_for(tx, 0, 16, "threadIdx.x", st))));
  vulkan::KernelInfo k = compile(tir::make_prim_func("add2d", {A, B}, body));
  EXPECT_EQ(k.workgroup_size, (std::array<uint32_t, 3>{16, 8, 1}));
  ASSERT_EQ(k.slots.size(), 2u);
  std::vector<int64_t> slots{17, 33};
  EXPECT_EQ(k.grid[0].eval(slots), 3);
  EXPECT_EQ(k.grid[1].eval(slots), 3);
  EXPECT_EQ(k.grid[2].eval(slots), 1);
}

TEST(CodegenSpirv, ThreadExtentsMustBeConstantAndWithinMaxNumThreads) {
  ir::Var n = ir::size_var("n");
  ir::Buffer A = ir::decl_buffer({n}, DataType::float32(), "A");
  ir::Var tx("tx");
  tir::Stmt body = tir::make_thread_for(tx, 0, n, "threadIdx.x", tir::buffer_store(A, 0.0f, {tx}));
  std::string msg = error_of([&] { compile(tir::make_prim_func("dyn_threads", {A}, body)); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("'tx'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'dyn_threads'"), std::string::npos) << msg;

  ir::Buffer C = ir::decl_buffer({1024}, DataType::float32(), "C");
  ir::Var t2("tx");
  tir::Stmt big = tir::make_thread_for(t2, 0, 1024, "threadIdx.x", tir::buffer_store(C, 0.0f, {t2}));
  msg = error_of([&] { compile(tir::make_prim_func("wide", {C}, big)); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("max_num_threads"), std::string::npos) << msg;
  // Within max_num_threads but over the per-axis limit (z: 64).
  ir::Var tz("tz");
  tir::Stmt deep = tir::make_thread_for(tz, 0, 128, "threadIdx.z", tir::buffer_store(C, 0.0f, {tz}));
  VulkanTarget t = full_target();
  t.max_workgroup_size[2] = 64;
  msg = error_of([&] { compile(tir::make_prim_func("deep", {C}, deep), t); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("axis z"), std::string::npos) << msg;
}

TEST(CodegenSpirv, VectorExpressionsAreNotImplementedNamingTheKernel) {
  ir::Buffer A = ir::decl_buffer({64}, DataType::float32(), "A");
  ir::Var tx("tx");
  tir::Stmt body = tir::make_thread_for(
      tx, 0, 16, "threadIdx.x",
      tir::buffer_store(A, ir::BroadcastNode::make(1.0f, 4), {ir::RampNode::make(tx * 4, 1, 4)}));
  std::string msg = error_of([&] { compile(tir::make_prim_func("vec4", {A}, body)); }, ErrorKind::kNotImplemented);
  EXPECT_NE(msg.find("'vec4'"), std::string::npos) << msg;
}

TEST(CodegenSpirv, LoopWithIfElseAndLocalAccumulator) {
  ir::Buffer A = ir::decl_buffer({64, 8}, DataType::float32(), "A");
  ir::Buffer B = ir::decl_buffer({64}, DataType::float32(), "B");
  ir::Var acc_data("acc", ir::handle_type());
  ir::Buffer acc = ir::Buffer::make(acc_data, DataType::float32(), {1}, {}, PrimExpr(), "acc", 64, "local");
  ir::Var tx("tx"), k("k");
  tir::Stmt step = tir::if_then_else(
      ir::eq(ir::floormod(k, 2), 0), tir::buffer_store(acc, ir::buffer_load(acc, {0}) + ir::buffer_load(A, {tx, k}), {0}),
      tir::buffer_store(acc, ir::buffer_load(acc, {0}) - ir::buffer_load(A, {tx, k}), {0}));
  tir::Stmt body = tir::seq({tir::buffer_store(acc, 0.0f, {0}), tir::make_for(k, 0, 8, step),
                             tir::buffer_store(B, ir::buffer_load(acc, {0}), {tx})});
  tir::Stmt s = tir::make_thread_for(tx, 0, 64, "threadIdx.x", tir::allocate(acc_data, DataType::float32(), {1}, "local", body));
  vulkan::KernelInfo kinfo = compile(tir::make_prim_func("alternating", {A, B}, s));
  std::string text = testing::disassembly(kinfo);
  EXPECT_NE(text.find("OpLoopMerge"), std::string::npos);
  EXPECT_NE(text.find("OpSelectionMerge"), std::string::npos);
  EXPECT_NE(text.find("NonWritable"), std::string::npos);  // A is only read
}

// out[b] = sum of in[b * 64 .. b * 64 + 63]: a tree in shared memory with barriers.
tir::PrimFunc shared_reduction(int blocks) {
  ir::Buffer in = ir::decl_buffer({blocks * 64}, DataType::float32(), "inp");
  ir::Buffer out = ir::decl_buffer({blocks}, DataType::float32(), "out");
  ir::Var sh_data("sh", ir::handle_type());
  ir::Buffer sh = ir::Buffer::make(sh_data, DataType::float32(), {64}, {}, PrimExpr(), "sh", 64, "shared");
  ir::Var bx("bx"), tx("tx"), s("s");
  PrimExpr stride = ir::shift_right(PrimExpr(32), s);
  tir::Stmt tree = tir::make_for(
      s, 0, 6,
      tir::workgroup_barrier_after(tir::if_then_else(
          tx < stride, tir::buffer_store(sh, ir::buffer_load(sh, {tx}) + ir::buffer_load(sh, {tx + stride}), {tx}))));
  tir::Stmt body = tir::seq({tir::workgroup_barrier_after(tir::buffer_store(sh, ir::buffer_load(in, {bx * 64 + tx}), {tx})),
                             tree, tir::if_then_else(ir::eq(tx, 0), tir::buffer_store(out, ir::buffer_load(sh, {0}), {bx}))});
  tir::Stmt k = tir::make_thread_for(
      bx, 0, blocks, "blockIdx.x",
      tir::make_thread_for(tx, 0, 64, "threadIdx.x", tir::allocate(sh_data, DataType::float32(), {64}, "shared", body)));
  return tir::make_prim_func("block_sum", {in, out}, k);
}

TEST(CodegenSpirv, SharedMemoryReductionWithBarriers) {
  vulkan::KernelInfo k = compile(shared_reduction(4));
  EXPECT_EQ(k.shared_memory_bytes, 256u);
  EXPECT_EQ(k.grid[0].eval({}), 4);
  std::string text = testing::disassembly(k);
  EXPECT_NE(text.find("OpControlBarrier"), std::string::npos) << text;
  EXPECT_NE(text.find("Workgroup"), std::string::npos);
  VulkanTarget t = full_target();
  t.max_shared_memory_per_block = 128;
  std::string msg = error_of([&] { compile(shared_reduction(4), t); }, ErrorKind::kValue);
  EXPECT_NE(msg.find("max_shared_memory_per_block"), std::string::npos) << msg;
}

TEST(CodegenSpirv, MathIntrinsicsValidateForEveryFloatWidth) {
  for (DataType t : {DataType::float16(), DataType::float32(), DataType::float64()}) {
    SCOPED_TRACE(t.to_string());
    auto f = elementwise("math_" + t.to_string(), t, t, 128, [&](PrimExpr x) {
      PrimExpr y = ir::exp(x) + ir::log(x) + ir::sqrt(x) + ir::rsqrt(x) + ir::tanh(x) + ir::erf(x) + ir::sigmoid(x);
      y = y + ir::pow(x, x) + ir::floor(x) + ir::ceil(x) + ir::round(x) + ir::abs(x) + ir::fma(x, x, x);
      y = y + ir::sin(x) + ir::cos(x) + ir::tan(x) + ir::asin(x) + ir::acos(x) + ir::atan(x) + ir::sinh(x);
      y = y + ir::cosh(x) + ir::asinh(x) + ir::acosh(x) + ir::atanh(x) + ir::log2(x) + ir::log10(x) + ir::trunc(x);
      y = y + ir::copysign(x, -x) + ir::floordiv(x, x) + ir::floormod(x, x) + ir::min(x, x) + ir::max(x, x);
      PrimExpr tests = ir::isnan(x) || ir::isinf(x) || !ir::isfinite(x);
      return ir::select(tests, x, y);
    });
    compile(f);
  }
}

TEST(CodegenSpirv, IntegerOpsValidate) {
  for (DataType t : {DataType::int8(), DataType::int32(), DataType::uint32(), DataType::int64(), DataType::uint16()}) {
    SCOPED_TRACE(t.to_string());
    auto f = elementwise("int_" + t.to_string(), t, t, 128, [&](PrimExpr x) {
      PrimExpr one = ir::make_const(t, 1);
      PrimExpr y = ir::floordiv(x, x + one) + ir::floormod(x, x + one) + x / (x + one) + ir::min(x, one) + ir::max(x, one);
      y = y + ir::bitwise_and(x, one) + ir::bitwise_or(x, one) + ir::bitwise_xor(x, one) + ir::bitwise_not(x);
      y = y + ir::shift_left(x, one) + ir::shift_right(x, one) + ir::abs(x);
      return ir::select(x < one || x >= y, ir::cast(t, ir::cast(DataType::float32(), y)), y);
    });
    compile(f);
  }
}

TEST(CodegenSpirv, BoolTensorsAreStoredAsBytes) {
  auto f = elementwise("positive", DataType::float32(), DataType::boolean(), 64, [](PrimExpr x) { return x > 0.0f; });
  vulkan::KernelInfo k = compile(f);
  EXPECT_EQ(DataType(k.args[1].dtype), DataType::boolean());
  EXPECT_NE(testing::disassembly(k).find("StorageBuffer8BitAccess"), std::string::npos);
}

TEST(CodegenSpirv, BlockLoopsOfOneTagMustAgreeAndVthreadIsNotSupported) {
  ir::Buffer A = ir::decl_buffer({64}, DataType::float32(), "A");
  ir::Var b1("b1"), b2("b2"), v("v");
  tir::Stmt two = tir::seq({tir::make_thread_for(b1, 0, 4, "blockIdx.x", tir::buffer_store(A, 0.0f, {b1})),
                            tir::make_thread_for(b2, 0, 8, "blockIdx.x", tir::buffer_store(A, 1.0f, {b2}))});
  std::string msg = error_of([&] { compile(tir::make_prim_func("two_grids", {A}, two)); }, ErrorKind::kNotImplemented);
  EXPECT_NE(msg.find("blockIdx.x"), std::string::npos) << msg;
  tir::Stmt vt = tir::make_thread_for(v, 0, 4, "vthread", tir::buffer_store(A, 0.0f, {v}));
  msg = error_of([&] { compile(tir::make_prim_func("virtual", {A}, vt)); }, ErrorKind::kNotImplemented);
  EXPECT_NE(msg.find("vthread"), std::string::npos) << msg;
}

}  // namespace
}  // namespace anvil::codegen::spirv
