// The intrinsics of issue 11 (trigonometric, hyperbolic, log2/log10, trunc, copysign, isnan/isinf/
// isfinite, bitwise ops and shifts) compiled for each CPU target ("llvm": JIT; "c": exported .so)
// and run by the reference interpreter, against <cmath> and hand-written integer semantics.
// Every kernel is an 8-lane vector loop followed by a scalar tail, run over 37 elements, so both
// the vector form (4 iterations) and the scalar form (5 elements) of each lowering execute.
// Random inputs from a fixed, printed seed; tolerances stated per dtype.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>

#include "anvil/codegen/c/codegen_c.h"
#include "anvil/codegen/llvm/codegen_llvm.h"
#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/float16.h"
#include "anvil/ir/intrinsic_references.h"
#include "anvil/pipeline/export_library.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/interpreter.h"
#include "anvil/tir/stmt.h"

namespace anvil::codegen {
namespace {

namespace fs = std::filesystem;
using ir::buffer_load;
using ir::CallOp;
using ir::reference::FloatCase;
using ir::reference::int_ref;
using ir::reference::kFloatCases;
using ir::decl_buffer;
using ir::PrimExpr;
using ir::Var;
using tir::Buffer;
using tir::PrimFunc;

constexpr uint32_t kSeed = 20261203;
constexpr int64_t kN = 37;  // 4 x 8 lanes + a tail of 5

// Y[i] = f(X0[i], X1[i], ...) for i < n: an 8-lane vector loop over the first floor(n / 8) * 8
// elements, then a scalar loop over the rest.
PrimFunc elementwise(const std::string& name, int arity, DataType in, DataType out,
                     const std::function<PrimExpr(const std::vector<PrimExpr>&)>& f) {
  Var n = ir::size_var("n"), i("i"), j("j");
  std::vector<tir::FuncParam> params;
  std::vector<Buffer> xs;
  for (int k = 0; k < arity; ++k) {
    xs.push_back(decl_buffer({n}, in, "X" + std::to_string(k)));
    params.emplace_back(xs.back());
  }
  Buffer Y = decl_buffer({n}, out, "Y");
  params.emplace_back(Y);
  PrimExpr idx = ir::ramp(i * 8, 1, 8), body_end = ir::floordiv(n, 8) * 8;
  std::vector<PrimExpr> vec, scalar;
  for (const Buffer& x : xs) {
    vec.push_back(buffer_load(x, {idx}));
    scalar.push_back(buffer_load(x, {j}));
  }
  tir::Stmt body = tir::seq({tir::make_for(i, 0, ir::floordiv(n, 8), tir::buffer_store(Y, f(vec), {idx})),
                             tir::make_for(j, body_end, n - body_end, tir::buffer_store(Y, f(scalar), {j}))});
  return tir::make_prim_func(name, params, body);
}

// "sin_float32", ...: the kernel of intrinsic_kernel(op, t).
std::string kernel_name(CallOp op, DataType t) { return std::string(ir::call_op_name(op)) + "_" + ir::dtype_name(t); }

PrimFunc intrinsic_kernel(CallOp op, DataType in) {
  DataType out = ir::call_op_kind(op) == ir::IntrinsicKind::kFloatTest ? ir::bool_type() : in;
  return elementwise(kernel_name(op, in), ir::call_op_arity(op), in, out,
                     [op](const std::vector<PrimExpr>& a) { return ir::call(op, a); });
}

// Tensors of float32/float64 from doubles, of int32/int64/uint8 from int64s (wrapped).
Tensor float_tensor(const std::vector<double>& v, DataType t) {
  Tensor x = Tensor::empty({static_cast<int64_t>(v.size())}, t);
  for (size_t k = 0; k < v.size(); ++k) {
    if (t == DataType::float32()) static_cast<float*>(x.data())[k] = static_cast<float>(v[k]);
    else static_cast<double*>(x.data())[k] = v[k];
  }
  return x;
}
Tensor int_tensor(const std::vector<int64_t>& v, DataType t) {
  Tensor x = Tensor::empty({static_cast<int64_t>(v.size())}, t);
  for (size_t k = 0; k < v.size(); ++k) {
    if (t == DataType::int32()) static_cast<int32_t*>(x.data())[k] = static_cast<int32_t>(v[k]);
    else if (t == DataType::int64()) static_cast<int64_t*>(x.data())[k] = v[k];
    else static_cast<uint8_t*>(x.data())[k] = static_cast<uint8_t>(v[k]);
  }
  return x;
}

double float_element(const Tensor& x, int64_t k) {
  if (x.dtype() == DataType::float32()) return static_cast<const float*>(x.data())[k];
  return static_cast<const double*>(x.data())[k];
}
int64_t int_element(const Tensor& x, int64_t k) {
  DataType t = x.dtype();
  if (t == DataType::int32()) return static_cast<const int32_t*>(x.data())[k];
  if (t == DataType::int64()) return static_cast<const int64_t*>(x.data())[k];
  return static_cast<const uint8_t*>(x.data())[k];  // uint8, bool
}

class Intrinsics : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    std::printf("intrinsics seed %u\n", kSeed);
  }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("anvil_intrin_" + std::to_string(::getpid()) + "_" + GetParam());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Module build(const std::vector<PrimFunc>& fs, const std::string& options = "") {
    if (GetParam() == "llvm") return build_llvm(fs, Target::parse("llvm" + options));
    Module c = build_c(fs, Target::parse("c"));
    std::string path = (dir_ / ("k" + std::to_string(counter_++) + ".so")).string();
    pipeline::export_library(c, path);
    return Module::load_from_file(path);
  }

  // Runs kernel `name` (f) compiled (m) and interpreted on the inputs; the two outputs, both
  // filled with a pattern first so an element left unwritten shows.
  std::pair<Tensor, Tensor> run(Module& m, const std::string& name, const PrimFunc& f, std::vector<Tensor> ins, DataType out) {
    Tensor got = Tensor::empty({kN}, out), interp = Tensor::empty({kN}, out);
    std::memset(got.data(), 0x5a, static_cast<size_t>(kN) * out.bytes());
    std::memset(interp.data(), 0x5a, static_cast<size_t>(kN) * out.bytes());
    std::vector<tir::InterpArg> args;
    for (Tensor& x : ins) args.emplace_back(x.dl());
    args.emplace_back(interp.dl());
    tir::run_prim_func(f, args);
    if (ins.size() == 1)
      m[name](ins[0], got);
    else
      m[name](ins[0], ins[1], got);
    return {got, interp};
  }

  fs::path dir_;
  int counter_ = 0;
};

TEST_P(Intrinsics, FloatFunctionsMatchCmath) {
  std::mt19937 rng(kSeed);
  for (DataType t : {DataType::float32(), DataType::float64()}) {
    // float32: libm's float functions (<= a few ulp) against the double result of the same input.
    double rtol = t == DataType::float32() ? 1e-6 : 1e-14, atol = t == DataType::float32() ? 1e-7 : 1e-300;
    std::vector<PrimFunc> fs;
    for (const FloatCase& c : kFloatCases) fs.push_back(intrinsic_kernel(c.op, t));
    fs.push_back(intrinsic_kernel(CallOp::k_copysign, t));
    Module m = build(fs);
    for (size_t k = 0; k < std::size(kFloatCases); ++k) {
      const FloatCase& c = kFloatCases[k];
      std::string name = kernel_name(c.op, t);
      std::uniform_real_distribution<double> dist(c.lo, c.hi);
      std::vector<double> xs;
      for (int64_t i = 0; i < kN; ++i) xs.push_back(dist(rng));
      Tensor x = float_tensor(xs, t);
      auto [got, interp] = run(m, name, fs[k], {x}, t);
      for (int64_t i = 0; i < kN; ++i) {
        double in = float_element(x, i), want = c.ref(in), tol = atol + rtol * std::abs(want);
        ASSERT_LE(std::abs(float_element(got, i) - want), tol) << GetParam() << " " << name << "(" << in << ") at " << i;
        ASSERT_LE(std::abs(float_element(interp, i) - want), tol) << "interpreter " << name << "(" << in << ") at " << i;
      }
    }
    std::uniform_real_distribution<double> dist(-5, 5);
    std::vector<double> as, ss;
    for (int64_t i = 0; i < kN; ++i) {
      as.push_back(dist(rng));
      ss.push_back(i % 9 == 4 ? -0.0 : dist(rng));
    }
    Tensor a = float_tensor(as, t), s = float_tensor(ss, t);
    auto [got, interp] = run(m, kernel_name(CallOp::k_copysign, t), fs.back(), {a, s}, t);
    for (int64_t i = 0; i < kN; ++i) {
      double want = std::copysign(float_element(a, i), float_element(s, i));
      ASSERT_EQ(float_element(got, i), want) << GetParam() << " copysign at " << i;
      ASSERT_EQ(float_element(interp, i), want) << "interpreter copysign at " << i;
      ASSERT_EQ(std::signbit(float_element(got, i)), std::signbit(want)) << i;
    }
  }
}

// NaN (both signs), infinities, zeros, subnormals, the largest finite values: also with
// -fast-math on LLVM, which assumes no NaN/inf in float operations but cannot fold bit tests.
TEST_P(Intrinsics, ClassificationOfSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const CallOp ops[] = {CallOp::k_isnan, CallOp::k_isinf, CallOp::k_isfinite};
  bool (*const refs[])(double) = {[](double v) { return std::isnan(v); }, [](double v) { return std::isinf(v); },
                                  [](double v) { return std::isfinite(v); }};
  for (const std::string options : {"", " -fast-math"}) {
    if (!options.empty() && GetParam() != "llvm") continue;
    for (DataType t : {DataType::float32(), DataType::float64()}) {
      bool f32 = t == DataType::float32();
      double big = f32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
      const double specials[] = {nan, -nan, inf, -inf, 0.0, -0.0, f32 ? 1e-45 : 5e-324, big, -big, 1.5, -2.0,
                                 f32 ? 1.2e-38 : 2.3e-308};
      std::vector<double> xs;
      for (int64_t i = 0; i < kN; ++i) xs.push_back(specials[(i * 5) % std::size(specials)]);  // all in the vector loop
      Tensor x = float_tensor(xs, t);
      std::vector<PrimFunc> fs;
      for (CallOp op : ops) fs.push_back(intrinsic_kernel(op, t));
      Module m = build(fs, options);
      for (size_t k = 0; k < fs.size(); ++k) {
        std::string name = kernel_name(ops[k], t);
        auto [got, interp] = run(m, name, fs[k], {x}, ir::bool_type());
        for (int64_t i = 0; i < kN; ++i) {
          int64_t want = refs[k](float_element(x, i)) ? 1 : 0;
          ASSERT_EQ(int_element(got, i), want) << GetParam() << options << " " << name << "(" << float_element(x, i) << ") at " << i;
          ASSERT_EQ(int_element(interp, i), want) << "interpreter " << name << " at " << i;
        }
      }
    }
  }
}

TEST_P(Intrinsics, BitwiseOpsAndShifts) {
  std::mt19937_64 rng(kSeed + 1);
  const auto& ops = ir::reference::kBitwiseOps;
  for (DataType t : {DataType::int32(), DataType::uint8(), DataType::int64()}) {
    std::vector<PrimFunc> fs;
    for (CallOp op : ops) fs.push_back(intrinsic_kernel(op, t));
    Module m = build(fs);
    int bits = t.bits();
    for (size_t k = 0; k < fs.size(); ++k) {
      std::string name = kernel_name(ops[k], t);
      bool shift = ops[k] == CallOp::k_shift_left || ops[k] == CallOp::k_shift_right;
      std::vector<int64_t> as, bs;
      for (int64_t i = 0; i < kN; ++i) {
        int64_t a = static_cast<int64_t>(rng()), b = static_cast<int64_t>(rng());
        if (i % 4 == 0) a = static_cast<int64_t>(rng() % 7) - 3;  // small, some negative
        if (shift) {  // in range, at and past the width, negative
          b = ir::reference::shift_amount(bits, static_cast<uint64_t>(i), rng());
        }
        as.push_back(int_ref(CallOp::k_bitwise_and, a, -1, t));  // wrapped to t
        bs.push_back(int_ref(CallOp::k_bitwise_and, b, -1, t));
      }
      Tensor a = int_tensor(as, t), b = int_tensor(bs, t);
      auto [got, interp] = run(m, name, fs[k], ir::call_op_arity(ops[k]) == 2 ? std::vector<Tensor>{a, b} : std::vector<Tensor>{a}, t);
      for (int64_t i = 0; i < kN; ++i) {
        int64_t want = int_ref(ops[k], as[i], bs[i], t);
        ASSERT_EQ(int_element(got, i), want) << GetParam() << " " << name << "(" << as[i] << ", " << bs[i] << ") at " << i;
        ASSERT_EQ(int_element(interp, i), want) << "interpreter " << name << " at " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, Intrinsics, ::testing::Values("llvm", "c"), [](const auto& info) { return info.param; });

// How LLVM lowers the vector forms (codegen_llvm_math.cc): sin/cos/log2/log10/trunc/copysign as
// vector LLVM intrinsics, tan & co as per-lane libm calls, isnan as an integer compare.
TEST(IntrinsicsLLVM, VectorFormsInTheEmittedIR) {
  std::vector<PrimFunc> fs = {intrinsic_kernel(CallOp::k_sin, DataType::float32()),
                              intrinsic_kernel(CallOp::k_log10, DataType::float64()),
                              intrinsic_kernel(CallOp::k_trunc, DataType::float32()),
                              intrinsic_kernel(CallOp::k_tan, DataType::float32()),
                              intrinsic_kernel(CallOp::k_isnan, DataType::float32())};
  std::string ll = llvm_module_source(build_llvm(fs, Target::parse("llvm -opt-level=0 -fast-math")), "ll");
  for (const char* want : {"@llvm.sin.v8f32(", "@llvm.log10.v8f64(", "@llvm.trunc.v8f32(", "@llvm.sin.f32(", "@tanf(",
                           "icmp ugt <8 x i32>"})
    EXPECT_NE(ll.find(want), std::string::npos) << want << " not in\n" << ll;
  EXPECT_EQ(ll.find("fcmp fast uno"), std::string::npos);  // isnan is no float compare
}

// float16 goes through the same lowerings (libm ones via float32): compared with the interpreter
// (which rounds the double result to half) within an ulp of half.
TEST(IntrinsicsLLVM, Float16VectorAndTail) {
  register_runtime_functions();
  DataType h = DataType::float16();
  std::vector<PrimFunc> fs = {intrinsic_kernel(CallOp::k_sin, h), intrinsic_kernel(CallOp::k_atan, h),
                              intrinsic_kernel(CallOp::k_log2, h), intrinsic_kernel(CallOp::k_isinf, h)};
  Module m = build_llvm(fs, Target::parse("llvm"));
  std::mt19937 rng(kSeed + 2);
  std::uniform_real_distribution<float> dist(0.01f, 8.0f);
  Tensor x = Tensor::empty({kN}, h);
  for (int64_t i = 0; i < kN; ++i) static_cast<uint16_t*>(x.data())[i] = ir::double_to_half_bits(dist(rng));
  static_cast<uint16_t*>(x.data())[3] = 0x7c00;   // +inf
  static_cast<uint16_t*>(x.data())[35] = 0xfc00;  // -inf, in the tail
  const CallOp ops[] = {CallOp::k_sin, CallOp::k_atan, CallOp::k_log2, CallOp::k_isinf};
  for (size_t k = 0; k < fs.size(); ++k) {
    std::string name = kernel_name(ops[k], h);
    DataType out = ops[k] == CallOp::k_isinf ? ir::bool_type() : h;
    Tensor got = Tensor::empty({kN}, out), want = Tensor::empty({kN}, out);
    m[name](x, got);
    tir::run_prim_func(fs[k], {x.dl(), want.dl()});
    for (int64_t i = 0; i < kN; ++i) {
      if (out.is_bool()) {
        ASSERT_EQ(int_element(got, i), int_element(want, i)) << name << " at " << i;
        continue;
      }
      double g = ir::half_bits_to_double(static_cast<uint16_t*>(got.data())[i]);
      double w = ir::half_bits_to_double(static_cast<uint16_t*>(want.data())[i]);
      if (std::isnan(w) || std::isinf(w)) {
        EXPECT_TRUE(g == w || (std::isnan(g) && std::isnan(w))) << name << " at " << i << ": " << g << " vs " << w;
        continue;
      }
      ASSERT_LE(std::abs(g - w), 1e-3 * std::abs(w) + 1e-7) << name << " at " << i << ": " << g << " vs " << w;
    }
  }
}

}  // namespace
}  // namespace anvil::codegen
