// The VM builtins, exercised through hand-built programs: storage and tensor allocation,
// dynamic shapes through the shape heap (one executable run at several sizes), shape and type
// checks with their messages, tuples, views, device copies, allocator footprints, closures,
// branch conditions and the floor semantics of shape arithmetic.
#include "anvil/runtime/vm/builtins/builtins.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>

#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/test_util.h"
#include "anvil/runtime/vm/exec_builder.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil::vm {
namespace {

using anvil::testing::random_float_tensor;

// Runs `fn` and checks it throws an Error of `kind` whose message contains `text`.
template <typename F>
void expect_error(F&& fn, ErrorKind kind, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "expected " << error_kind_name(kind) << " containing: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << "message: " << e.what() << "\nwanted: " << text;
  }
}

// The kernel of the dynamic-shape program: x (n, 16) -> y (2n,), z (n+1, 16), w (ceildiv(n, 4),).
//   y[i] = 2 * x[i / 2, i % 16];  z[r] = x[r] + 1 for r < n, z[n] = column sums of x;
//   w[b] = sum of x[r, 0] over the block of four rows r in [4b, 4b + 4).
// The symbolic sizes arrive as trailing ints (call_tir_dyn) and must agree with the tensors.
Value dyn_kernel(Args args) {
  if (args.size() != 8) type_error("test.vm.dyn_kernel: expected 8 arguments but got ", args.size());
  Tensor x = args[0].as_tensor(), y = args[1].as_tensor(), z = args[2].as_tensor(), w = args[3].as_tensor();
  int64_t n = args[4].as_int(), n2 = args[5].as_int(), n1 = args[6].as_int(), nb = args[7].as_int();
  if (x.shape() != std::vector<int64_t>{n, 16} || y.shape() != std::vector<int64_t>{n2} ||
      z.shape() != std::vector<int64_t>{n1, 16} || w.shape() != std::vector<int64_t>{nb})
    value_error("test.vm.dyn_kernel: sizes ", n, ", ", n2, ", ", n1, ", ", nb, " disagree with the tensors");
  const auto* xp = static_cast<const float*>(x.data());
  auto* yp = static_cast<float*>(y.data());
  auto* zp = static_cast<float*>(z.data());
  auto* wp = static_cast<float*>(w.data());
  for (int64_t i = 0; i < n2; ++i) yp[i] = 2.0f * xp[(i / 2) * 16 + i % 16];
  for (int64_t c = 0; c < 16; ++c) zp[n * 16 + c] = 0.0f;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < 16; ++c) {
      zp[r * 16 + c] = xp[r * 16 + c] + 1.0f;
      zp[n * 16 + c] += xp[r * 16 + c];
    }
  for (int64_t b = 0; b < nb; ++b) {
    wp[b] = 0.0f;
    for (int64_t r = 4 * b; r < std::min(4 * b + 4, n); ++r) wp[b] += xp[r * 16];
  }
  return Value();
}

class VMBuiltinsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_runtime_functions();
    static std::once_flag once;
    std::call_once(once, [] { register_packed("test.vm.dyn_kernel", dyn_kernel, true); });
  }
  static VirtualMachine make_vm(const Executable& exe, MemoryConfig memory = {},
                                std::vector<Device> devices = {Device::cpu()}) {
    return VirtualMachine::create(exe.as_module(), std::move(devices), memory);
  }
  static MemoryConfig naive() { return MemoryConfig{AllocatorKind::kNaive, {}}; }
  static Arg str(ExecBuilder& b, const std::string& s) { return Arg::constant(b.add_constant(Value(s))); }
  static Arg shape(ExecBuilder& b, std::vector<int64_t> dims) {
    return Arg::constant(b.add_constant(Value::shape(std::move(dims))));
  }
  static Value call(const std::string& builtin, std::vector<Value> args) {
    return Registry::get(builtin).call(args);
  }
};

TEST_F(VMBuiltinsTest, StorageHoldsTensorsAtOffsets) {
  ExecBuilder b;
  b.begin_function("main", {"size"});
  b.emit_call("vm.builtin.alloc_storage", {Arg::vm(), Arg::reg(0), Arg::imm(-1), str(b, "float32")}, 1);
  b.emit_call("vm.builtin.alloc_tensor", {Arg::reg(1), Arg::imm(0), shape(b, {4, 4}), str(b, "float32")}, 2);
  b.emit_call("vm.builtin.alloc_tensor", {Arg::reg(1), Arg::imm(64), shape(b, {8}), str(b, "float64")}, 3);
  b.emit_call("vm.builtin.storage_bytes", {Arg::reg(1)}, 4);
  b.emit_call("vm.builtin.make_tuple", {Arg::reg(2), Arg::reg(3), Arg::reg(4)}, 5);
  b.emit_ret(5);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  // The size may be an int or a 1-d shape (the graph compiler's form).
  for (const Value& size : {Value(128), Value::shape({128})}) {
    std::vector<Value> out = vm["main"](size).as_array();
    Tensor a = out[0].as_tensor(), f64 = out[1].as_tensor();
    EXPECT_EQ(a.shape(), (std::vector<int64_t>{4, 4}));
    EXPECT_EQ(f64.dtype(), DataType::float64());
    EXPECT_EQ(static_cast<char*>(a.data()) + 64, static_cast<char*>(f64.data()));
    EXPECT_EQ(f64.dl()->byte_offset, 64u);
    EXPECT_EQ(out[2].as_int(), 128);
  }
}

TEST_F(VMBuiltinsTest, AllocTensorIsBoundsAndAlignmentChecked) {
  ExecBuilder b;
  b.begin_function("main", {"size", "offset", "shape"});
  b.emit_call("vm.builtin.alloc_storage", {Arg::vm(), Arg::reg(0), Arg::imm(-1), str(b, "float32")}, 3);
  b.emit_call("vm.builtin.alloc_tensor", {Arg::reg(3), Arg::reg(1), Arg::reg(2), str(b, "float32")}, 4);
  b.emit_ret(4);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  Function main = vm["main"];
  EXPECT_EQ(main(64, 48, Value::shape({4})).as_tensor().numel(), 4);  // exactly fits
  expect_error([&] { main(64, 32, Value::shape({4, 4})); }, ErrorKind::kValue,
               "vm.builtin.alloc_tensor: a tensor of shape [4, 4] and dtype float32 at offset 32 needs 32 + 64 bytes "
               "but the storage holds 64 bytes");
  expect_error([&] { main(64, 2, Value::shape({2})); }, ErrorKind::kValue,
               "vm.builtin.alloc_tensor: offset 2 is not a multiple of the 4-byte size of float32");
  expect_error([&] { main(64, -4, Value::shape({1})); }, ErrorKind::kValue, "offset must be >= 0 but got -4");
  expect_error([&] { main(64, 0, Value::shape({-1})); }, ErrorKind::kValue, "dimension 0 of shape [-1] is negative");
  expect_error([&] { main(-8, 0, Value::shape({1})); }, ErrorKind::kValue,
               "vm.builtin.alloc_storage: argument 1 (size_bytes): expected a size >= 0 but got -8");
  expect_error([&] { main(64, "zero", Value::shape({1})); }, ErrorKind::kType,
               "vm.builtin.alloc_tensor: argument 1 (offset): expected int but got string");
  expect_error([] { call("vm.builtin.alloc_tensor", {Value(3), Value(0), Value::shape({1}), Value("float32")}); },
               ErrorKind::kType, "vm.builtin.alloc_tensor: argument 0 (storage): expected a vm.Storage but got int");
  expect_error([] { call("vm.builtin.storage_bytes", {}); }, ErrorKind::kType,
               "vm.builtin.storage_bytes: expected 1 arguments (storage) but got 0");
}

TEST_F(VMBuiltinsTest, AllocStorageRejectsUnknownDeviceIndex) {
  ExecBuilder b;
  b.begin_function("main", {"device_index"});
  b.emit_call("vm.builtin.alloc_storage", {Arg::vm(), Arg::imm(64), Arg::reg(0), str(b, "float32")}, 1);
  b.emit_ret(1);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  EXPECT_FALSE(vm["main"](0).is_null());
  expect_error([&] { vm["main"](3); }, ErrorKind::kValue,
               "vm.builtin.alloc_storage: argument 2 (device_index): expected -1 (the host) or an index below 1");
}

TEST_F(VMBuiltinsTest, TensorKeepsStorageAliveAfterItsRegisterIsKilled) {
  ExecBuilder b;
  b.begin_function("main", {});
  b.emit_call("vm.builtin.alloc_storage", {Arg::vm(), Arg::imm(1000), Arg::imm(-1), str(b, "float32")}, 0);
  b.emit_call("vm.builtin.alloc_tensor", {Arg::reg(0), Arg::imm(0), shape(b, {250}), str(b, "float32")}, 1);
  b.emit_call("vm.builtin.null_value", {}, 0);  // the storage register dies early
  b.emit_ret(1);
  b.end_function();
  VirtualMachine vm = make_vm(b.get(), naive());
  Allocator* alloc = get_allocator(Device::cpu(), AllocatorKind::kNaive);
  size_t before = alloc->bytes_in_use();
  {
    Tensor t = vm["main"]().as_tensor();
    EXPECT_EQ(alloc->bytes_in_use(), before + 1000);
    std::fill_n(static_cast<float*>(t.data()), 250, 1.5f);  // still valid memory
    EXPECT_EQ(static_cast<float*>(t.data())[249], 1.5f);
  }
  EXPECT_EQ(alloc->bytes_in_use(), before);
}

TEST_F(VMBuiltinsTest, AllocTensorOnGivesAFreshTensor) {
  ExecBuilder b;
  b.begin_function("main", {"shape"});
  b.emit_call("vm.builtin.alloc_tensor_on", {Arg::vm(), Arg::reg(0), str(b, "int32"), Arg::imm(0)}, 1);
  b.emit_ret(1);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  Tensor t = vm["main"](Value::shape({3, 5})).as_tensor();
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(t.dtype(), DataType::int32());
  EXPECT_EQ(t.device(), Device::cpu());
  expect_error([&] { vm["main"](Value::shape({2, -3})); }, ErrorKind::kValue,
               "vm.builtin.alloc_tensor_on: dimension 1 of shape [2, -3] is negative");
}

// One executable for every n: x (n, 16) is matched into heap slot 0; slots 1-3 get n*2, n+1 and
// ceildiv(n, 4); slot 4 the byte size of y, which comes from a storage.
Executable dynamic_program() {
  ExecBuilder b;
  auto str = [&](const char* s) { return Arg::constant(b.add_constant(Value(s))); };
  b.begin_function("main", {"x"});
  b.emit_call("vm.builtin.alloc_shape_heap", {Arg::vm(), Arg::imm(5)}, 1);
  b.emit_call("vm.builtin.match_shape",
              {Arg::reg(0), Arg::reg(1), Arg::imm(2), Arg::imm(1), Arg::imm(0), Arg::imm(0), Arg::imm(16),
               str("main: argument x")});
  auto compute = [&](int64_t dst, const char* op, int64_t b_imm) {
    b.emit_call("vm.builtin.shape_compute",
                {Arg::reg(1), Arg::imm(dst), str(op), Arg::imm(1), Arg::imm(0), Arg::imm(0), Arg::imm(b_imm)});
  };
  compute(1, "mul", 2);
  compute(2, "add", 1);
  compute(3, "ceildiv", 4);
  b.emit_call("vm.builtin.shape_compute",
              {Arg::reg(1), Arg::imm(4), str("mul"), Arg::imm(1), Arg::imm(1), Arg::imm(0), Arg::imm(4)});
  // y (n*2,) lives in a storage sized from the heap; z and w come straight from the allocator.
  b.emit_call("vm.builtin.make_shape", {Arg::reg(1), Arg::imm(1), Arg::imm(1), Arg::imm(4)}, 2);
  b.emit_call("vm.builtin.alloc_storage", {Arg::vm(), Arg::reg(2), Arg::imm(0), str("float32")}, 3);
  b.emit_call("vm.builtin.make_shape", {Arg::reg(1), Arg::imm(1), Arg::imm(1), Arg::imm(1)}, 4);
  b.emit_call("vm.builtin.alloc_tensor", {Arg::reg(3), Arg::imm(0), Arg::reg(4), str("float32")}, 5);
  b.emit_call("vm.builtin.make_shape", {Arg::reg(1), Arg::imm(2), Arg::imm(1), Arg::imm(2), Arg::imm(0), Arg::imm(16)},
              6);
  b.emit_call("vm.builtin.alloc_tensor_on", {Arg::vm(), Arg::reg(6), str("float32"), Arg::imm(0)}, 7);
  b.emit_call("vm.builtin.make_shape", {Arg::reg(1), Arg::imm(1), Arg::imm(1), Arg::imm(3)}, 8);
  b.emit_call("vm.builtin.alloc_tensor_on", {Arg::vm(), Arg::reg(8), str("float32"), Arg::imm(0)}, 9);
  b.emit_call("vm.builtin.make_shape",
              {Arg::reg(1), Arg::imm(4), Arg::imm(1), Arg::imm(0), Arg::imm(1), Arg::imm(1), Arg::imm(1), Arg::imm(2),
               Arg::imm(1), Arg::imm(3)},
              10);
  b.emit_call("vm.builtin.call_tir_dyn",
              {Arg::func(b.function_index("test.vm.dyn_kernel")), Arg::reg(0), Arg::reg(5), Arg::reg(7), Arg::reg(9),
               Arg::reg(10)});
  b.emit_call("vm.builtin.make_tuple", {Arg::reg(5), Arg::reg(7), Arg::reg(9)}, 11);
  b.emit_ret(11);
  b.end_function();
  return b.get();
}

TEST_F(VMBuiltinsTest, DynamicShapesOneExecutableManySizes) {
  VirtualMachine vm = make_vm(dynamic_program());
  for (int64_t n : {1, 4, 8}) {
    Tensor x = random_float_tensor({n, 16});
    std::vector<Value> out = vm["main"](x).as_array();
    ASSERT_EQ(out.size(), 3u);
    Tensor y = out[0].as_tensor(), z = out[1].as_tensor(), w = out[2].as_tensor();
    int64_t nb = (n + 3) / 4;
    ASSERT_EQ(y.shape(), std::vector<int64_t>{2 * n}) << n;
    ASSERT_EQ(z.shape(), (std::vector<int64_t>{n + 1, 16})) << n;
    ASSERT_EQ(w.shape(), std::vector<int64_t>{nb}) << n;
    // Plain C++ reference.
    const auto* xp = static_cast<const float*>(x.data());
    auto at = [&](int64_t r, int64_t c) { return xp[r * 16 + c]; };
    for (int64_t i = 0; i < 2 * n; ++i) EXPECT_FLOAT_EQ(static_cast<float*>(y.data())[i], 2 * at(i / 2, i % 16));
    for (int64_t c = 0; c < 16; ++c) {
      float sum = 0;
      for (int64_t r = 0; r < n; ++r) {
        EXPECT_FLOAT_EQ(static_cast<float*>(z.data())[r * 16 + c], at(r, c) + 1);
        sum += at(r, c);
      }
      EXPECT_NEAR(static_cast<float*>(z.data())[n * 16 + c], sum, 1e-5);
    }
    for (int64_t blk = 0; blk < nb; ++blk) {
      float sum = 0;
      for (int64_t r = 4 * blk; r < std::min(4 * blk + 4, n); ++r) sum += at(r, 0);
      EXPECT_NEAR(static_cast<float*>(w.data())[blk], sum, 1e-5);
    }
  }
}

TEST_F(VMBuiltinsTest, MatchShapeMismatchNamesArgumentDimensionAndSlot) {
  VirtualMachine dyn = make_vm(dynamic_program());
  expect_error([&] { dyn["main"](random_float_tensor({4, 15})); }, ErrorKind::kValue,
               "main: argument x dimension 1: expected 16 but got 15 in shape [4, 15]");
  expect_error([&] { dyn["main"](random_float_tensor({4, 16, 1})); }, ErrorKind::kValue,
               "main: argument x: expected 2 dimensions but got 3 in shape [4, 16, 1]");
  expect_error([&] { dyn["main"](7); }, ErrorKind::kType, "main: argument x: expected a tensor or a shape but got int");

  // y must have the shape x was matched with: codes 1 (store) for x, 3 (compare) for y.
  ExecBuilder b;
  b.begin_function("main", {"x", "y"});
  b.emit_call("vm.builtin.alloc_shape_heap", {Arg::vm(), Arg::imm(3)}, 2);
  b.emit_call("vm.builtin.match_shape", {Arg::reg(0), Arg::reg(2), Arg::imm(2), Arg::imm(1), Arg::imm(1), Arg::imm(1),
                                         Arg::imm(2), str(b, "main: argument x")});
  b.emit_call("vm.builtin.match_shape", {Arg::reg(1), Arg::reg(2), Arg::imm(2), Arg::imm(3), Arg::imm(1), Arg::imm(3),
                                         Arg::imm(2), str(b, "main: argument y")});
  b.emit_ret(1);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  Tensor x = random_float_tensor({4, 16});
  EXPECT_TRUE(vm["main"](x, random_float_tensor({4, 16})).as_tensor().defined());
  EXPECT_EQ(vm["main"](x, Value::shape({4, 16})).as_shape(), (std::vector<int64_t>{4, 16}));  // shapes match too
  expect_error([&] { vm["main"](x, random_float_tensor({4, 8})); }, ErrorKind::kValue,
               "main: argument y dimension 1: expected 16 (the value of heap slot 2) but got 8");
  expect_error([&] { vm["main"](x, Value::shape({5, 16})); }, ErrorKind::kValue,
               "main: argument y dimension 0: expected 4 (the value of heap slot 1) but got 5");
}

TEST_F(VMBuiltinsTest, MakeShapeAndMatchShapeRejectBadCodesAndSlots) {
  Tensor heap = Tensor::empty({2}, DataType::int64());
  expect_error([&] { call("vm.builtin.make_shape", {heap, 1, 5, 0}); }, ErrorKind::kValue,
               "vm.builtin.make_shape: argument 2 (code): expected 0 (immediate) or 1 (heap slot) but got 5");
  expect_error([&] { call("vm.builtin.make_shape", {heap, 1, 1, 2}); }, ErrorKind::kValue,
               "vm.builtin.make_shape: heap slot 2 is out of range for a heap of 2 slots");
  expect_error([&] { call("vm.builtin.make_shape", {Value(), 1, 1, 0}); }, ErrorKind::kValue,
               "heap slot 0 is used but no shape heap was given");
  EXPECT_EQ(call("vm.builtin.make_shape", {Value(), 2, 0, 3, 0, 7}).as_shape(), (std::vector<int64_t>{3, 7}));
  expect_error([&] { call("vm.builtin.make_shape", {heap, 2, 0, 3}); }, ErrorKind::kType,
               "vm.builtin.make_shape: expected 2 + 2 * n arguments");
  expect_error([&] { call("vm.builtin.match_shape", {Value::shape({1}), heap, 1, 9, 0, "ctx"}); }, ErrorKind::kValue,
               "vm.builtin.match_shape: argument 3 (code): expected 0 (assert equal to immediate)");
  expect_error([&] { call("vm.builtin.match_shape", {Value::shape({1}), Tensor::empty({2}, DataType::int32()), 1, 1,
                                                     0, "ctx"}); },
               ErrorKind::kValue, "vm.builtin.match_shape: argument 1 (heap): expected a 1-d int64 CPU tensor");
}

TEST_F(VMBuiltinsTest, CheckTensorInfoReportsDtypeNdimAndDevice) {
  auto program = [&](int64_t ndim, const char* dtype, int64_t device_type) {
    ExecBuilder b;
    b.begin_function("main", {"x"});
    b.emit_call("vm.builtin.check_tensor_info",
                {Arg::reg(0), Arg::imm(ndim), str(b, dtype), Arg::imm(device_type), str(b, "main: argument x")});
    b.emit_ret(0);
    b.end_function();
    return make_vm(b.get());
  };
  VirtualMachine vm = program(2, "float32", kDLCPU);
  EXPECT_TRUE(vm["main"](random_float_tensor({2, 3})).as_tensor().defined());
  expect_error([&] { vm["main"](Tensor::empty({2, 3}, DataType::float64())); }, ErrorKind::kValue,
               "main: argument x: expected dtype float32 but got float64");
  expect_error([&] { vm["main"](random_float_tensor({2, 3, 4})); }, ErrorKind::kValue,
               "main: argument x: expected a 2-d tensor but got 3-d Tensor(shape=[2, 3, 4]");
  expect_error([&] { vm["main"](5); }, ErrorKind::kType, "main: argument x: expected a tensor but got int (5)");
  VirtualMachine on_cuda = program(-1, "", kDLCUDA);
  expect_error([&] { on_cuda["main"](random_float_tensor({2})); }, ErrorKind::kValue,
               "main: argument x: expected a tensor on cuda but got one on cpu:0");
  VirtualMachine any = program(-1, "", -1);
  EXPECT_TRUE(any["main"](Tensor::empty({1, 1, 1, 1}, DataType::int8())).as_tensor().defined());
}

TEST_F(VMBuiltinsTest, TuplesAreMadeAndIndexed) {
  ExecBuilder b;
  b.begin_function("main", {"a", "b", "i"});
  b.emit_call("vm.builtin.make_tuple", {Arg::reg(0), Arg::reg(1), str(b, "third")}, 3);
  b.emit_call("vm.builtin.tuple_getitem", {Arg::reg(3), Arg::reg(2)}, 4);
  b.emit_ret(4);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  Tensor a = random_float_tensor({2});
  EXPECT_TRUE(vm["main"](a, 7, 0).as_tensor().same_as(a));
  EXPECT_EQ(vm["main"](a, 7, 1).as_int(), 7);
  EXPECT_EQ(vm["main"](a, 7, 2).as_string(), "third");
  expect_error([&] { vm["main"](a, 7, 3); }, ErrorKind::kIndex,
               "vm.builtin.tuple_getitem: index 3 is out of range for a tuple of 3 items");
  expect_error([&] { vm["main"](a, 7, -1); }, ErrorKind::kIndex, "index -1 is out of range");
  expect_error([] { call("vm.builtin.tuple_getitem", {Value(1), Value(0)}); }, ErrorKind::kType,
               "vm.builtin.tuple_getitem: argument 0 (tuple): expected array but got int");
}

TEST_F(VMBuiltinsTest, ReshapeIsAZeroCopyViewAndShapeOfReadsTheShape) {
  ExecBuilder b;
  b.begin_function("main", {"x", "shape"});
  b.emit_call("vm.builtin.shape_of", {Arg::reg(0)}, 2);
  b.emit_call("vm.builtin.reshape", {Arg::reg(0), Arg::reg(1)}, 3);
  b.emit_call("vm.builtin.make_tuple", {Arg::reg(2), Arg::reg(3)}, 4);
  b.emit_ret(4);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  Tensor x = random_float_tensor({3, 4});
  std::vector<Value> out = vm["main"](x, Value::shape({2, 6})).as_array();
  EXPECT_EQ(out[0].as_shape(), (std::vector<int64_t>{3, 4}));
  Tensor r = out[1].as_tensor();
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(r.data(), x.data());
  expect_error([&] { vm["main"](x, Value::shape({5})); }, ErrorKind::kValue,
               "vm.builtin.reshape: cannot reshape Tensor(shape=[3, 4], dtype=float32, device=cpu:0) (12 elements) to "
               "shape [5] (5 elements)");
}

TEST_F(VMBuiltinsTest, TensorToShapeReadsIntegerTensors) {
  Tensor t = Tensor::empty({3}, DataType::int32());
  int32_t values[] = {3, 5, 7};
  t.copy_from_bytes(values, sizeof(values));
  EXPECT_EQ(call("vm.builtin.tensor_to_shape", {t}).as_shape(), (std::vector<int64_t>{3, 5, 7}));
  Tensor u8 = Tensor::empty({1}, DataType::uint8());
  *static_cast<uint8_t*>(u8.data()) = 200;
  EXPECT_EQ(call("vm.builtin.tensor_to_shape", {u8}).as_shape(), std::vector<int64_t>{200});
  expect_error([] { call("vm.builtin.tensor_to_shape", {random_float_tensor({2})}); }, ErrorKind::kValue,
               "vm.builtin.tensor_to_shape: argument 0 (tensor): expected a 1-d integer tensor but got "
               "Tensor(shape=[2], dtype=float32");
  expect_error([] { call("vm.builtin.tensor_to_shape", {Tensor::empty({2, 2}, DataType::int64())}); },
               ErrorKind::kValue, "expected a 1-d integer tensor");
}

TEST_F(VMBuiltinsTest, ReshapeTargetResolvesZeroAndMinusOneAsOnnxReshape) {
  Tensor x = Tensor::empty({2, 3, 4}, DataType::float32());
  auto target = [](std::vector<int64_t> v) {
    Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, DataType::int64());
    t.copy_from_bytes(v.data(), v.size() * sizeof(int64_t));
    return t;
  };
  auto resolve = [&](std::vector<int64_t> v, int64_t allowzero = 0) {
    return call("vm.builtin.reshape_target", {x, target(std::move(v)), Value(allowzero)}).as_shape();
  };
  EXPECT_EQ(resolve({4, 0, -1}), (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(resolve({-1}), std::vector<int64_t>{24});
  EXPECT_EQ(resolve({0, 0, 4}), (std::vector<int64_t>{2, 3, 4}));
  expect_error([&] { resolve({0, 0, 0, 0}); }, ErrorKind::kValue, "copies dim 3 (a 0) of x [2, 3, 4], which has no such dim");
  expect_error([&] { resolve({-1, -1}); }, ErrorKind::kValue, "has more than one -1");
  expect_error([&] { resolve({5, -1}); }, ErrorKind::kValue, "x [2, 3, 4] cannot be reshaped to [5, -1]");
  expect_error([&] { resolve({4, 0, 2}, 1); }, ErrorKind::kValue, "(24 elements) cannot be reshaped to [4, 0, 2] (0 elements)");
  expect_error([&] { resolve({2, -3}); }, ErrorKind::kValue, "has a negative dim -3");
}

// ONNX Range's element count max(ceil((limit - start) / delta), 0), vs the formula in long double.
TEST_F(VMBuiltinsTest, RangeLengthIsOnnxRangesElementCount) {
  auto f64 = [](double v) {
    Tensor t = Tensor::empty({}, DataType::float64());
    t.copy_from_bytes(&v, sizeof v);
    return t;
  };
  auto length = [&](double s, double l, double d) {
    std::vector<int64_t> n = call("vm.builtin.range_length", {f64(s), f64(l), f64(d)}).as_shape();
    EXPECT_EQ(n.size(), 1u);
    return n.at(0);
  };
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-50, 50);
  for (int k = 0; k < 200; ++k) {
    double s = u(rng), l = u(rng), d = u(rng) / 8;
    if (d == 0) continue;
    long double n = std::ceil((static_cast<long double>(l) - s) / d);
    EXPECT_EQ(length(s, l, d), std::max<int64_t>(0, static_cast<int64_t>(n))) << s << " " << l << " " << d;
  }
  EXPECT_EQ(length(0, 10, 3), 4);
  EXPECT_EQ(length(10, 6, -3), 2);
  EXPECT_EQ(length(5, 5, 1), 0);
  EXPECT_EQ(length(5, 1, 1), 0);
  expect_error([&] { length(1, 5, 0); }, ErrorKind::kValue, "Range(start 1, limit 5, delta 0) has no length");
  expect_error([&] { call("vm.builtin.range_length", {f64(0), f64(1), Tensor::empty({1}, DataType::float64())}); },
               ErrorKind::kValue, "argument 2 (delta): expected a 0-d float64 tensor");
}

TEST_F(VMBuiltinsTest, ToDeviceCopiesOntoAnotherDevice) {
  ExecBuilder b;
  b.begin_function("main", {"x", "device_index"});
  b.emit_call("vm.builtin.to_device", {Arg::vm(), Arg::reg(0), Arg::reg(1)}, 2);
  b.emit_ret(2);
  b.end_function();
  VirtualMachine vm = make_vm(b.get(), {}, {Device::cpu(0), Device::cpu(1)});
  Tensor x = random_float_tensor({5, 3});
  for (int64_t index : {1, -1, 0}) {
    Tensor y = vm["main"](x, index).as_tensor();
    EXPECT_EQ(y.device(), index == 0 ? Device::cpu(0) : Device::cpu(1));
    EXPECT_NE(y.data(), x.data());
    EXPECT_EQ(std::memcmp(y.data(), x.data(), x.nbytes()), 0);
  }
  expect_error([&] { vm["main"](x, 2); }, ErrorKind::kValue,
               "vm.builtin.to_device: argument 2 (device_index): expected -1 (the host) or an index below 2");
}

// Storage, a heap and a tensor per call: the pooled allocator hands back the same blocks.
Executable allocating_program() {
  ExecBuilder b;
  auto str = [&](const char* s) { return Arg::constant(b.add_constant(Value(s))); };
  b.begin_function("main", {});
  b.emit_call("vm.builtin.alloc_storage", {Arg::vm(), Arg::imm(10000), Arg::imm(0), str("float32")}, 0);
  b.emit_call("vm.builtin.alloc_tensor",
              {Arg::reg(0), Arg::imm(0), Arg::constant(b.add_constant(Value::shape({2500}))), str("float32")}, 1);
  b.emit_call("vm.builtin.alloc_shape_heap", {Arg::vm(), Arg::imm(4)}, 2);
  b.emit_call("vm.builtin.alloc_tensor_on",
              {Arg::vm(), Arg::constant(b.add_constant(Value::shape({100}))), str("float32"), Arg::imm(0)}, 3);
  b.emit_call("vm.builtin.shape_of", {Arg::reg(1)}, 4);
  b.emit_ret(4);
  b.end_function();
  return b.get();
}

TEST_F(VMBuiltinsTest, PooledAllocatorFootprintStaysFlat) {
  VirtualMachine vm = make_vm(allocating_program(), MemoryConfig{AllocatorKind::kPooled, {}});
  Allocator* pool = get_allocator(Device::cpu(), AllocatorKind::kPooled);
  EXPECT_EQ(vm["main"]().as_shape(), std::vector<int64_t>{2500});
  size_t held = pool->bytes_held();
  size_t in_use = pool->bytes_in_use();
  for (int i = 0; i < 1000; ++i) vm["main"]();
  EXPECT_EQ(pool->bytes_held(), held);
  EXPECT_EQ(pool->bytes_in_use(), in_use);
}

TEST_F(VMBuiltinsTest, NaiveAllocatorReturnsEveryBlock) {
  VirtualMachine vm = make_vm(allocating_program(), naive());
  Allocator* alloc = get_allocator(Device::cpu(), AllocatorKind::kNaive);
  size_t before = alloc->bytes_in_use();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(vm["main"]().as_shape(), std::vector<int64_t>{2500});
  EXPECT_EQ(alloc->bytes_in_use(), before);
}

TEST_F(VMBuiltinsTest, ClosuresBindTrailingArguments) {
  ExecBuilder b;
  int64_t add3 = b.begin_function("add3", {"a", "b", "c"});
  b.emit_call("vm.builtin.add", {Arg::reg(0), Arg::reg(1)}, 3);
  b.emit_call("vm.builtin.add", {Arg::reg(3), Arg::reg(2)}, 3);
  b.emit_ret(3);
  b.end_function();
  b.begin_function("main", {"x"});
  // Over a VM function: add3(x, 10, 100).
  b.emit_call("vm.builtin.make_closure", {Arg::func(add3), Arg::imm(10), Arg::imm(100)}, 1);
  b.emit_call("vm.builtin.invoke_closure", {Arg::vm(), Arg::reg(1), Arg::reg(0)}, 2);
  // Over a packed function: sub(x, 3), the captured 3 comes last.
  b.emit_call("vm.builtin.make_closure", {Arg::func(b.function_index("vm.builtin.sub")), Arg::imm(3)}, 3);
  b.emit_call("vm.builtin.invoke_closure", {Arg::vm(), Arg::reg(3), Arg::reg(0)}, 4);
  // Over a closure: the outer binding comes before the inner one, add3(x, 1000, 100).
  b.emit_call("vm.builtin.make_closure", {Arg::func(add3), Arg::imm(100)}, 5);
  b.emit_call("vm.builtin.make_closure", {Arg::reg(5), Arg::imm(1000)}, 6);
  b.emit_call("vm.builtin.invoke_closure", {Arg::vm(), Arg::reg(6), Arg::reg(0)}, 7);
  b.emit_call("vm.builtin.make_tuple", {Arg::reg(2), Arg::reg(4), Arg::reg(7), Arg::reg(1)}, 8);
  b.emit_ret(8);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  std::vector<Value> out = vm["main"](5).as_array();
  EXPECT_EQ(out[0].as_int(), 115);
  EXPECT_EQ(out[1].as_int(), 2);
  EXPECT_EQ(out[2].as_int(), 1105);
  // A closure handed back to the host stays callable.
  Value args[] = {Value(1)};
  EXPECT_EQ(vm->invoke_closure(out[3], args).as_int(), 111);
  expect_error([] { call("vm.builtin.make_closure", {Value(4)}); }, ErrorKind::kType,
               "vm.builtin.make_closure: argument 0 (func): expected a function or a vm.Closure but got int (4)");
}

TEST_F(VMBuiltinsTest, IntHelpersExpressLoopsAndRecursion) {
  ExecBuilder b;
  // fact(n) = n < 2 ? 1 : n * fact(n - 1)
  int64_t fact = b.begin_function("fact", {"n"});
  b.emit_call("vm.builtin.lt", {Arg::reg(0), Arg::imm(2)}, 1);
  b.emit_if(1, 3);
  b.emit_call("vm.builtin.copy", {Arg::imm(1)}, 2);
  b.emit_ret(2);
  b.emit_call("vm.builtin.sub", {Arg::reg(0), Arg::imm(1)}, 2);
  b.emit_call(fact, {Arg::reg(2)}, 3);
  b.emit_call("vm.builtin.mul", {Arg::reg(0), Arg::reg(3)}, 4);
  b.emit_ret(4);
  b.end_function();
  // count(n): i = 0; while (!(i == n)) i += 1; return i
  b.begin_function("count", {"n"});
  b.emit_call("vm.builtin.copy", {Arg::imm(0)}, 1);
  int64_t head = b.emit_call("vm.builtin.eq", {Arg::reg(1), Arg::reg(0)}, 2);
  int64_t branch = b.emit_if(2, 0);
  b.emit_ret(1);
  b.patch_jump(branch, b.next_instr() - branch);
  b.emit_call("vm.builtin.add", {Arg::reg(1), Arg::imm(1)}, 1);
  int64_t back = b.emit_goto(0);
  b.patch_jump(back, head - back);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  EXPECT_EQ(vm["fact"](10).as_int(), 3628800);
  EXPECT_EQ(vm["fact"](1).as_int(), 1);
  EXPECT_EQ(vm["count"](50).as_int(), 50);
  expect_error([] { call("vm.builtin.mul", {Value(int64_t{1} << 62), Value(4)}); }, ErrorKind::kValue,
               "vm.builtin.mul: 4611686018427387904 and 4 overflow int64");
}

TEST_F(VMBuiltinsTest, ReadIfCondAcceptsScalarsAndOneElementTensors) {
  ExecBuilder b;
  b.begin_function("main", {"c"});
  b.emit_call("vm.builtin.read_if_cond", {Arg::reg(0)}, 1);
  b.emit_if(1, 3);
  b.emit_call("vm.builtin.copy", {Arg::imm(1)}, 2);
  b.emit_ret(2);
  b.emit_call("vm.builtin.copy", {Arg::imm(0)}, 2);
  b.emit_ret(2);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  auto scalar = [](DataType dtype, std::vector<int64_t> shape, int64_t value) {
    Tensor t = Tensor::empty(shape, dtype);
    std::memset(t.data(), 0, t.nbytes());
    std::memcpy(t.data(), &value, t.nbytes());  // little-endian: the low bytes
    return t;
  };
  EXPECT_EQ(vm["main"](true).as_int(), 1);
  EXPECT_EQ(vm["main"](0).as_int(), 0);
  EXPECT_EQ(vm["main"](scalar(DataType::int32(), {}, 7)).as_int(), 1);
  EXPECT_EQ(vm["main"](scalar(DataType::int32(), {}, 0)).as_int(), 0);
  EXPECT_EQ(vm["main"](scalar(DataType::boolean(), {1}, 1)).as_int(), 1);
  EXPECT_EQ(vm["main"](scalar(DataType::int64(), {1, 1}, int64_t{1} << 40)).as_int(), 1);
  EXPECT_EQ(vm["main"](scalar(DataType::uint8(), {1}, 0)).as_int(), 0);
  expect_error([&] { vm["main"](random_float_tensor({1})); }, ErrorKind::kType,
               "vm.builtin.read_if_cond: argument 0 (condition): expected an integer or bool tensor");
  expect_error([&] { vm["main"](Tensor::empty({2}, DataType::int32())); }, ErrorKind::kValue,
               "expected a tensor of one element but got Tensor(shape=[2]");
  expect_error([&] { vm["main"]("yes"); }, ErrorKind::kType, "expected a bool, an int or a tensor but got string");
}

TEST_F(VMBuiltinsTest, CheckCopiesXOrRaisesItsMessageWithXsValues) {
  auto tensor = [](DataType dtype, std::vector<int64_t> shape, const void* data) {
    Tensor t = Tensor::empty(shape, dtype);
    std::memcpy(t.data(), data, t.nbytes());
    return t;
  };
  const int64_t axes[2] = {1, -3};
  const uint8_t all[3] = {1, 1, 1}, one_false[3] = {1, 0, 1};
  Tensor x = tensor(DataType::int64(), {2}, axes);
  Tensor out = call("vm.builtin.check", {x, tensor(DataType::boolean(), {3}, all), Value("bad axes")}).as_tensor();
  EXPECT_NE(out.data(), x.data());  // a value of its own
  EXPECT_EQ(std::memcmp(out.data(), axes, sizeof axes), 0);
  expect_error([&] { call("vm.builtin.check", {x, tensor(DataType::boolean(), {3}, one_false), Value("bad axes")}); },
               ErrorKind::kValue, "bad axes; got [1, -3]");
  expect_error([&] { call("vm.builtin.check", {x, x, Value("m")}); }, ErrorKind::kType,
               "vm.builtin.check: argument 1 (ok): expected a bool tensor");
  // A float x (Resize's run-time scales) shows its values too.
  const float scales[3] = {1.0f, -0.5f, 2.0f};
  Tensor f = tensor(DataType::float32(), {3}, scales);
  expect_error([&] { call("vm.builtin.check", {f, tensor(DataType::boolean(), {3}, one_false), Value("bad scales")}); },
               ErrorKind::kValue, "bad scales; got [1, -0.5, 2]");
}

// Python's floor division and modulo, as the reference for shape_compute.
int64_t ref_floordiv(int64_t a, int64_t b) {
  return static_cast<int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
}
int64_t ref_ceildiv(int64_t a, int64_t b) {
  return static_cast<int64_t>(std::ceil(static_cast<double>(a) / static_cast<double>(b)));
}

TEST_F(VMBuiltinsTest, ShapeComputeUsesFloorSemanticsForNegatives) {
  Tensor heap = Tensor::empty({3}, DataType::int64());
  auto compute = [&](const char* op, int64_t a, int64_t b) {
    call("vm.builtin.shape_compute", {heap, 2, op, 0, a, 0, b});
    return static_cast<int64_t*>(heap.data())[2];
  };
  EXPECT_EQ(compute("floordiv", -7, 2), -4);
  EXPECT_EQ(compute("floordiv", 7, -2), -4);
  EXPECT_EQ(compute("floordiv", -7, -2), 3);
  EXPECT_EQ(compute("floordiv", -8, 2), -4);
  EXPECT_EQ(compute("floormod", -7, 2), 1);
  EXPECT_EQ(compute("floormod", 7, -2), -1);
  EXPECT_EQ(compute("floormod", -7, -2), -1);
  EXPECT_EQ(compute("ceildiv", -7, 2), -3);
  EXPECT_EQ(compute("ceildiv", 7, 2), 4);
  EXPECT_EQ(compute("ceildiv", 7, -2), -3);
  EXPECT_EQ(compute("min", -3, 2), -3);
  EXPECT_EQ(compute("max", -3, 2), 2);
  EXPECT_EQ(compute("sub", 3, 5), -2);
  // Random operands against the floating-point reference (exact for these magnitudes).
  std::uniform_int_distribution<int64_t> dist(-1000, 1000);
  for (int i = 0; i < 500; ++i) {
    int64_t a = dist(anvil::testing::rng()), b = dist(anvil::testing::rng());
    if (b == 0) continue;
    EXPECT_EQ(compute("floordiv", a, b), ref_floordiv(a, b)) << a << " // " << b;
    EXPECT_EQ(compute("floormod", a, b), a - ref_floordiv(a, b) * b) << a << " % " << b;
    EXPECT_EQ(compute("ceildiv", a, b), ref_ceildiv(a, b)) << a << " ceildiv " << b;
  }
  expect_error([&] { compute("floordiv", 5, 0); }, ErrorKind::kValue,
               "vm.builtin.shape_compute: floordiv(5, 0): division by zero");
  expect_error([&] { compute("mul", int64_t{1} << 40, int64_t{1} << 40); }, ErrorKind::kValue, "overflows int64");
  expect_error([&] { compute("pow", 2, 3); }, ErrorKind::kValue,
               "vm.builtin.shape_compute: argument 2 (op): expected one of add, sub, mul, floordiv");
}

TEST_F(VMBuiltinsTest, ShapeComputeInAProgramReadsAndWritesTheHeap) {
  // main(s): match s = (a, b) into slots 0 and 1; return (a // b, a % b, ceildiv(a, b)).
  ExecBuilder b;
  b.begin_function("main", {"s"});
  b.emit_call("vm.builtin.alloc_shape_heap", {Arg::vm(), Arg::imm(5)}, 1);
  b.emit_call("vm.builtin.match_shape", {Arg::reg(0), Arg::reg(1), Arg::imm(2), Arg::imm(1), Arg::imm(0), Arg::imm(1),
                                         Arg::imm(1), str(b, "main: argument s")});
  int64_t slot = 2;
  for (const char* op : {"floordiv", "floormod", "ceildiv"})
    b.emit_call("vm.builtin.shape_compute",
                {Arg::reg(1), Arg::imm(slot++), str(b, op), Arg::imm(1), Arg::imm(0), Arg::imm(1), Arg::imm(1)});
  b.emit_call("vm.builtin.make_shape",
              {Arg::reg(1), Arg::imm(3), Arg::imm(1), Arg::imm(2), Arg::imm(1), Arg::imm(3), Arg::imm(1), Arg::imm(4)},
              2);
  b.emit_ret(2);
  b.end_function();
  VirtualMachine vm = make_vm(b.get());
  EXPECT_EQ(vm["main"](Value::shape({-7, 2})).as_shape(), (std::vector<int64_t>{-4, 1, -3}));
  EXPECT_EQ(vm["main"](Value::shape({9, 4})).as_shape(), (std::vector<int64_t>{2, 1, 3}));
  expect_error([&] { vm["main"](Value::shape({9, 0})); }, ErrorKind::kValue, "floordiv(9, 0): division by zero");
}

TEST_F(VMBuiltinsTest, CallTirDynNeedsATrailingShape) {
  Value echo = Registry::get("testing.echo");
  EXPECT_EQ(call("vm.builtin.call_tir_dyn", {echo, Value::shape({42})}).as_int(), 42);
  expect_error([&] { call("vm.builtin.call_tir_dyn", {echo, Value(1)}); }, ErrorKind::kType,
               "vm.builtin.call_tir_dyn: argument 1 (shape): expected shape but got int");
  expect_error([&] { call("vm.builtin.call_tir_dyn", {Value(1), Value::shape({})}); }, ErrorKind::kType,
               "vm.builtin.call_tir_dyn: argument 0 (func): expected function but got int");
}

}  // namespace
}  // namespace anvil::vm
