// Transform operator kernels: each graph call lowered through ops::lower_call, built for llvm
// with pipeline::build and run on random inputs (fixed, printed seed) against a naive reference
// that reads the input element every output element should come from. Static and symbolic
// shapes (the trailing int32 shape-var scalars are passed), sizes like 37 that no vector width divides.
#include "anvil/ops/transform_test_util.h"

namespace anvil::ops {
namespace {

using namespace transform_test;  // NOLINT(google-build-using-namespace)

class TransformKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    std::printf("transform kernels seed %u\n", kSeed);
  }
  std::mt19937 rng{kSeed};
  graph::BlockBuilder b;
  ir::Var n = ir::size_var("n");
};

TEST_F(TransformKernels, ReshapeStaticAndSymbolic) {
  Tensor x = random_f32({2, 3, 37}, rng);
  auto e = b.call("reshape", {param("x", {2, 3, 37}), graph::ShapeExpr::make({6, 37})});
  expect_elements(run(e, {x}, {{6, 37}})[0], [&](const Idx& i) { return at(x, unravel(ravel(i, {6, 37}), {2, 3, 37})); });
  Tensor y = random_f32({37, 6}, rng);
  auto s = b.call("reshape", {param("y", {n, 6}), graph::ShapeExpr::make({n, 2, 3})});
  expect_elements(run(s, {y}, {{37, 2, 3}}, {{"n", 37}})[0],
                  [&](const Idx& i) { return at(y, unravel(ravel(i, {37, 2, 3}), {37, 6})); });
}

TEST_F(TransformKernels, TransposeStaticAndSymbolic) {
  Tensor x = random_f32({3, 37, 5}, rng);
  auto e = b.call("transpose", {param("x", {3, 37, 5})}, {{"axes", AttrValue::ints({2, 0, 1})}});
  expect_elements(run(e, {x}, {{5, 3, 37}})[0], [&](const Idx& i) { return at(x, {i[1], i[2], i[0]}); });
  Tensor y = random_f32({2, 11, 4, 3}, rng);
  auto s = b.call("transpose", {param("y", {2, n, 4, 3})}, {{"axes", AttrValue::ints({0, 2, 1, 3})}});
  expect_elements(run(s, {y}, {{2, 4, 11, 3}}, {{"n", 11}})[0], [&](const Idx& i) { return at(y, {i[0], i[2], i[1], i[3]}); });
}

TEST_F(TransformKernels, ExpandDimsSqueezeBroadcastTo) {
  Tensor x = random_f32({3, 37}, rng);
  auto e = b.call("expand_dims", {param("x", {3, 37})}, {{"axes", AttrValue::ints({0, -1})}});
  expect_elements(run(e, {x}, {{1, 3, 37, 1}})[0], [&](const Idx& i) { return at(x, {i[1], i[2]}); });
  Tensor y = random_f32({1, 37, 1}, rng);
  auto s = b.call("squeeze", {param("y", {1, n, 1})}, {{"axes", AttrValue::ints({0, 2})}});
  expect_elements(run(s, {y}, {{37}}, {{"n", 37}})[0], [&](const Idx& i) { return at(y, {0, i[0], 0}); });
  Tensor z = random_f32({3, 1}, rng);
  auto bc = b.call("broadcast_to", {param("z", {3, 1}), graph::ShapeExpr::make({2, 3, n})});
  expect_elements(run(bc, {z}, {{2, 3, 37}}, {{"n", 37}})[0], [&](const Idx& i) { return at(z, {i[1], 0}); });
}

TEST_F(TransformKernels, ConcatStaticAndSymbolic) {
  Tensor a = random_f32({4, 2}, rng), c = random_f32({4, 37}, rng), d = random_f32({4, 5}, rng);
  auto e = b.call("concat", {param("a", {4, 2}), param("c", {4, 37}), param("d", {4, 5})}, {{"axis", 1}});
  expect_elements(run(e, {a, c, d}, {{4, 44}})[0], [&](const Idx& i) {
    return i[1] < 2 ? at(a, i) : i[1] < 39 ? at(c, {i[0], i[1] - 2}) : at(d, {i[0], i[1] - 39});
  });
  Tensor p = random_f32({13, 3}, rng), q = random_f32({3, 3}, rng);
  auto s = b.call("concat", {param("p", {n, 3}), param("q", {3, 3})}, {{"axis", 0}});
  expect_elements(run(s, {p, q}, {{16, 3}}, {{"n", 13}})[0],
                  [&](const Idx& i) { return i[0] < 13 ? at(p, i) : at(q, {i[0] - 13, i[1]}); });
}

TEST_F(TransformKernels, SplitIntoThree) {
  Tensor x = random_f32({37, 4}, rng);
  auto e = b.call("split", {param("x", {n, 4})}, {{"axis", 0}, {"indices", AttrValue::ints({10, 20})}});
  std::vector<Tensor> outs = run(e, {x}, {{10, 4}, {10, 4}, {17, 4}}, {{"n", 37}});
  for (int f = 0; f < 3; ++f) expect_elements(outs[f], [&](const Idx& i) { return at(x, {i[0] + 10 * f, i[1]}); });
}

TEST_F(TransformKernels, StridedSlicePositiveNegativeAndSymbolic) {
  Tensor x = random_f32({37, 10}, rng);
  auto e = b.call("strided_slice", {param("x", {37, 10})},
                  {{"begin", AttrValue::ints({3, -1})}, {"end", AttrValue::ints({30, -100})},
                   {"strides", AttrValue::ints({4, -3})}, {"axes", AttrValue::ints({0, 1})}});
  // axis 0: 3, 7, ..., 27 (7 elements); axis 1: 9, 6, 3, 0 (4 elements).
  expect_elements(run(e, {x}, {{7, 4}})[0], [&](const Idx& i) { return at(x, {3 + 4 * i[0], 9 - 3 * i[1]}); });
  auto s = b.call("strided_slice", {param("y", {n, 10})},
                  {{"begin", AttrValue::ints({1})}, {"end", AttrValue::ints({INT64_MAX})}, {"axes", AttrValue::ints({0})}});
  expect_elements(run(s, {x}, {{36, 10}}, {{"n", 37}})[0], [&](const Idx& i) { return at(x, {i[0] + 1, i[1]}); });
  auto r = b.call("strided_slice", {param("y", {n, 10})},
                  {{"begin", AttrValue::ints({-1})}, {"end", AttrValue::ints({INT64_MIN})},
                   {"strides", AttrValue::ints({-2})}, {"axes", AttrValue::ints({0})}});
  expect_elements(run(r, {x}, {{19, 10}}, {{"n", 37}})[0], [&](const Idx& i) { return at(x, {36 - 2 * i[0], i[1]}); });
}

TEST_F(TransformKernels, StridedSliceWithASymbolicEnd) {
  Tensor x = random_f32({3, 40}, rng);
  auto e = b.call("strided_slice", {param("x", {3, 40}), graph::ShapeExpr::make({n})},
                  {{"begin", AttrValue::ints({2})}, {"end", AttrValue::ints({0})}, {"axes", AttrValue::ints({1})},
                   {"strides", AttrValue::ints({3})}, {"end_from_shape", AttrValue::ints({0})}});
  EXPECT_EQ(graph::to_string(e.type()), "Tensor[(3, n // 3), float32]");
  // n = 37: columns 2, 5, ..., 35 (12 of them).
  expect_elements(run(e, {x}, {{3, 12}}, {{"n", 37}})[0], [&](const Idx& i) { return at(x, {i[0], 2 + 3 * i[1]}); });
}

TEST_F(TransformKernels, TakeWithNegativeIndices) {
  Tensor x = random_f32({3, 37}, rng);
  Tensor ind = ints({2, 2}, {0, -1, 36, 5});
  auto e = b.call("take", {param("x", {3, n}), param("i", {2, 2}, kI64)}, {{"axis", 1}});
  expect_elements(run(e, {x, ind}, {{3, 2, 2}}, {{"n", 37}})[0], [&](const Idx& i) {
    int64_t k = static_cast<int64_t>(at(ind, {i[1], i[2]}));
    return at(x, {i[0], k < 0 ? k + 37 : k});
  });
}

TEST_F(TransformKernels, TileAndPadModes) {
  Tensor x = random_f32({3, 5}, rng);
  auto t = b.call("tile", {param("x", {3, 5})}, {{"reps", AttrValue::ints({2, 3})}});
  expect_elements(run(t, {x}, {{6, 15}})[0], [&](const Idx& i) { return at(x, {i[0] % 3, i[1] % 5}); });
  for (std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    auto p = b.call("pad", {param("x", {3, n})},
                    {{"pads", AttrValue::ints({1, 2, 2, 4})}, {"mode", mode}, {"pad_value", 0.5}});
    expect_elements(run(p, {x}, {{6, 11}}, {{"n", 5}})[0], [&](const Idx& i) {
      int64_t r = i[0] - 1, c = i[1] - 2;
      auto fix = [&](int64_t j, int64_t d) {
        if (mode == "reflect") return j < 0 ? -j : j >= d ? 2 * (d - 1) - j : j;
        if (mode == "wrap") return ((j % d) + d) % d;
        return std::clamp<int64_t>(j, 0, d - 1);
      };
      if (mode == "constant" && (r < 0 || r >= 3 || c < 0 || c >= 5)) return 0.5;
      return at(x, {fix(r, 3), fix(c, 5)});
    });
  }
}

TEST_F(TransformKernels, PadWithARunTimeValue) {
  // ONNX Pad's constant_value as a graph input: a 0-d argument read by the kernel.
  Tensor x = random_f32({3, 5}, rng), v = random_f32({}, rng);
  auto p = b.call("pad", {param("x", {3, 5}), param("v", {})}, {{"pads", AttrValue::ints({0, -1, 2, 1})}, {"mode", "constant"}});
  expect_elements(run(p, {x, v}, {{5, 5}})[0], [&](const Idx& i) {
    int64_t c = i[1] + 1;
    return i[0] >= 3 || c >= 5 ? at(v, {}) : at(x, {i[0], c});
  });
}

TEST_F(TransformKernels, FullArangeCopy) {
  auto f = b.call("full", {graph::ShapeExpr::make({n, 3})}, {{"value", 2.5}, {"dtype", kF32}});
  expect_elements(run(f, {}, {{37, 3}}, {{"n", 37}})[0], [](const Idx&) { return 2.5; });
  auto a = b.call("arange", {}, {{"start", 2.0}, {"limit", 39.0}, {"delta", 3.0}, {"dtype", kI64}});
  expect_elements(run(a, {}, {{13}})[0], [](const Idx& i) { return 2.0 + 3 * i[0]; });
  auto sa = b.call("arange", {graph::ShapeExpr::make({n})}, {{"start", 0.5}, {"delta", -0.25}, {"dtype", kF32}});
  expect_elements(run(sa, {}, {{37}}, {{"n", 37}})[0], [](const Idx& i) { return 0.5 - 0.25 * i[0]; });
  Tensor x = random_f32({37}, rng);
  auto c = b.call("copy", {param("x", {n})});
  expect_elements(run(c, {x}, {{37}}, {{"n", 37}})[0], [&](const Idx& i) { return at(x, i); });
}

TEST_F(TransformKernels, GatherElementsTriluOneHot) {
  Tensor x = random_f32({3, 4}, rng);
  Tensor ind = ints({2, 4}, {0, 2, -1, 1, 2, 0, 1, -3});
  auto g = b.call("gather_elements", {param("x", {3, 4}), param("i", {2, 4}, kI64)}, {{"axis", 0}});
  expect_elements(run(g, {x, ind}, {{2, 4}})[0], [&](const Idx& i) {
    int64_t k = static_cast<int64_t>(at(ind, i));
    return at(x, {k < 0 ? k + 3 : k, i[1]});
  });
  Tensor m = random_f32({2, 5, 37}, rng);
  for (int upper : {0, 1}) {
    auto t = b.call("trilu", {param("m", {2, 5, n})}, {{"k", 1}, {"upper", upper}});
    expect_elements(run(t, {m}, {{2, 5, 37}}, {{"n", 37}})[0], [&](const Idx& i) {
      bool keep = upper ? i[2] - i[1] >= 1 : i[2] - i[1] <= 1;
      return keep ? at(m, i) : 0.0;
    });
  }
  Tensor oi = ints({4}, {0, 3, -1, 2});
  Tensor vals = Tensor::empty({2}, kF32);
  static_cast<float*>(vals.data())[0] = -0.25f, static_cast<float*>(vals.data())[1] = 1.5f;
  auto o = b.call("one_hot", {param("oi", {4}, kI64), param("v", {2})}, {{"depth", 5}, {"axis", 0}});
  expect_elements(run(o, {oi, vals}, {{5, 4}})[0], [&](const Idx& i) {
    int64_t k = static_cast<int64_t>(at(oi, {i[1]}));
    return (k < 0 ? k + 5 : k) == i[0] ? 1.5 : -0.25;
  });
}

TEST_F(TransformKernels, DepthToSpaceAndBack) {
  Tensor x = random_f32({2, 8, 3, 5}, rng);
  for (std::string mode : {"DCR", "CRD"}) {
    SCOPED_TRACE(mode);
    auto e = b.call("depth_to_space", {param("x", {2, 8, 3, 5})}, {{"blocksize", 2}, {"mode", mode}});
    expect_elements(run(e, {x}, {{2, 2, 6, 10}})[0], [&](const Idx& i) {
      int64_t bh = i[2] % 2, bw = i[3] % 2;
      int64_t c = mode == "DCR" ? (bh * 2 + bw) * 2 + i[1] : i[1] * 4 + bh * 2 + bw;
      return at(x, {i[0], c, i[2] / 2, i[3] / 2});
    });
  }
  Tensor y = random_f32({1, 3, 4, 6}, rng);
  auto s = b.call("space_to_depth", {param("y", {1, 3, 4, 6})}, {{"blocksize", 2}});
  expect_elements(run(s, {y}, {{1, 12, 2, 3}})[0], [&](const Idx& i) {
    int64_t off = i[1] / 3;
    return at(y, {i[0], i[1] % 3, i[2] * 2 + off / 2, i[3] * 2 + off % 2});
  });
}

// ONNX Resize on one axis in double: source coordinate, then nearest / linear / cubic taps.
struct ResizeRef {
  std::string mode, ct, nm;
  double A = -0.75;
  bool exclude = false;
  double coord(int64_t x, int64_t in, int64_t out) const {
    double s = double(out) / in;
    if (ct == "half_pixel") return (x + 0.5) / s - 0.5;
    if (ct == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / s - 0.5 : 0;
    if (ct == "align_corners") return out > 1 ? x * double(in - 1) / (out - 1) : 0;
    if (ct == "asymmetric") return x / s;
    return (x + 0.5) / s;  // tf_half_pixel_for_nn
  }
  // (index, weight) taps of output x.
  std::vector<std::pair<int64_t, double>> taps(int64_t x, int64_t in, int64_t out) const {
    double xo = coord(x, in, out);
    auto cl = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    if (mode == "nearest") {
      double r = nm == "round_prefer_floor" ? std::ceil(xo - 0.5) : nm == "round_prefer_ceil" ? std::floor(xo + 0.5)
                 : nm == "floor"            ? std::floor(xo) : std::ceil(xo);
      return {{cl(static_cast<int64_t>(r)), 1.0}};
    }
    if (mode == "linear") {
      xo = std::clamp<double>(xo, 0, in - 1);
      double x0 = std::floor(xo), t = xo - x0;
      return {{cl(int64_t(x0)), 1 - t}, {cl(int64_t(x0) + 1), t}};
    }
    double x0 = std::floor(xo), t = xo - x0;
    auto far = [&](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
    auto near = [&](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
    double w[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)}, total = 0;
    std::vector<std::pair<int64_t, double>> out_taps;
    for (int k = 0; k < 4; ++k) {
      int64_t i = int64_t(x0) + k - 1;
      if (exclude && (i < 0 || i >= in)) w[k] = 0;
      total += w[k];
      out_taps.push_back({cl(i), w[k]});
    }
    if (exclude)
      for (auto& p : out_taps) p.second /= total;
    return out_taps;
  }
};

TEST_F(TransformKernels, Resize2dModesAndCoordinateTransforms) {
  Tensor x = random_f32({1, 2, 5, 7}, rng);
  struct Case {
    std::string mode, ct, nm;
    bool exclude;
    int64_t oh, ow;
  };
  for (const Case& c : std::vector<Case>{{"nearest", "asymmetric", "floor", false, 10, 14},
                                         {"nearest", "half_pixel", "round_prefer_floor", false, 9, 3},
                                         {"nearest", "tf_half_pixel_for_nn", "round_prefer_ceil", false, 11, 7},
                                         {"nearest", "align_corners", "ceil", false, 3, 13},
                                         {"linear", "half_pixel", "", false, 10, 14},
                                         {"linear", "pytorch_half_pixel", "", false, 1, 37},
                                         {"linear", "align_corners", "", false, 9, 4},
                                         {"cubic", "half_pixel", "", false, 10, 14},
                                         {"cubic", "asymmetric", "", true, 8, 5}}) {
    SCOPED_TRACE(c.mode + " " + c.ct + " " + c.nm);
    Attrs a{{"mode", c.mode}, {"coordinate_transformation_mode", c.ct}, {"exclude_outside", int(c.exclude)}};
    if (!c.nm.empty()) a["nearest_mode"] = c.nm;
    auto e = b.call("resize2d", {param("x", {1, 2, 5, n}), graph::ShapeExpr::make({ir::int_imm(c.oh), ir::int_imm(c.ow)})}, a);
    ResizeRef ref{c.mode, c.ct, c.nm, -0.75, c.exclude};
    expect_elements(run(e, {x}, {{1, 2, c.oh, c.ow}}, {{"n", 7}})[0], [&](const Idx& i) {
      double v = 0;
      for (auto [yi, wy] : ref.taps(i[2], 5, c.oh))
        for (auto [xi, wx] : ref.taps(i[3], 7, c.ow)) v += wy * wx * at(x, {i[0], i[1], yi, xi});
      return v;
    }, 2e-5);
  }
}

TEST_F(TransformKernels, Resize2dCropAndResizeWithARunTimeRoi) {
  // ONNX's roi input read by the kernel (roi_index picks h/w start/end out of 8 values), against
  // the tf_crop_and_resize reference: linear taps, extrapolation_value outside the input.
  Tensor x = random_f32({1, 2, 5, 7}, rng);
  Tensor roi = Tensor::empty({8}, kF32);
  const float rv[8] = {0, 0, 0.1f, -0.2f, 1, 1, 0.85f, 1.3f};
  for (int i = 0; i < 8; ++i) static_cast<float*>(roi.data())[i] = rv[i];
  Attrs a{{"mode", "linear"}, {"coordinate_transformation_mode", "tf_crop_and_resize"}, {"extrapolation_value", 2.5},
          {"roi_index", AttrValue::ints({2, 3, 6, 7})}};
  auto e = b.call("resize2d", {param("x", {1, 2, 5, n}), graph::ShapeExpr::make({ir::int_imm(4), ir::int_imm(9)}),
                               param("roi", {8})}, a);
  auto coord = [&](int64_t o, int64_t in, int64_t out, double s, double t) {
    return out > 1 ? s * (in - 1) + o * (t - s) * (in - 1) / double(out - 1) : 0.5 * (s + t) * (in - 1);
  };
  expect_elements(run(e, {x, roi}, {{1, 2, 4, 9}}, {{"n", 7}})[0], [&](const Idx& i) {
    double yo = coord(i[2], 5, 4, rv[2], rv[6]), xo = coord(i[3], 7, 9, rv[3], rv[7]);
    if (yo < 0 || yo > 4 || xo < 0 || xo > 6) return 2.5;
    int64_t y0 = int64_t(std::floor(yo)), x0 = int64_t(std::floor(xo));
    double ty = yo - y0, tx = xo - x0, v = 0;
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx)
        v += (dy ? ty : 1 - ty) * (dx ? tx : 1 - tx) *
             at(x, {i[0], i[1], std::min<int64_t>(y0 + dy, 4), std::min<int64_t>(x0 + dx, 6)});
    return v;
  }, 2e-5);
  // A roi argument needs tf_crop_and_resize and four in-range positions.
  Attrs bad = a;
  bad["roi_index"] = AttrValue::ints({2, 3, 6, 8});
  EXPECT_THROW(b.call("resize2d", {param("x", {1, 2, 5, 7}), graph::ShapeExpr::make({ir::int_imm(4), ir::int_imm(9)}),
                                   param("roi", {8})}, bad), Error);
}

}  // namespace
}  // namespace anvil::ops
