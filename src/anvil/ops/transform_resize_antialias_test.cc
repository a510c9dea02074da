// resize2d_antialias against a naive double reference of ONNX Resize with antialias 1: per axis,
// the source coordinate, then every input index weighed by the filter stretched by 1 / scale
// (scale < 1) and normalised; out-of-input taps read the edge or, with exclude_outside, weigh 0.
// Static and symbolic widths, scales given (scale_h/scale_w) or out / in.
#include "anvil/ops/transform_test_util.h"

namespace anvil::ops {
namespace {

using namespace transform_test;  // NOLINT(google-build-using-namespace)

class ResizeAntialias : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    std::printf("resize antialias seed %u\n", kSeed + 7);
  }
  std::mt19937 rng{kSeed + 7};
  graph::BlockBuilder b;
  ir::Var n = ir::size_var("n");
};

// The taps (index, weight) of output x along one axis, the filter centred on the coordinate:
// every input position p within the stretched support, weight f((p - xo) * s), edge-clamped.
std::vector<std::pair<int64_t, double>> antialias_taps(const std::string& mode, const std::string& ct, bool exclude,
                                                       int64_t x, int64_t in, int64_t out, double scale) {
  const double s = scale > 0 ? scale : double(out) / double(in), fs = std::min(s, 1.0);
  double xo;
  if (ct == "half_pixel") xo = (x + 0.5) / s - 0.5;
  else if (ct == "align_corners") xo = s * in - 1 > 0 ? x * double(in - 1) / (s * in - 1) : 0;
  else xo = x / s;  // asymmetric
  const double support = mode == "cubic" ? 2 : 1, A = -0.75;
  auto f = [&](double d) {
    d = std::fabs(d);
    if (mode == "linear") return std::max(1 - d, 0.0);
    if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
    if (d < 2) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
    return 0.0;
  };
  // Positions p with |p - xo| * fs < support; the ONNX reference's window [base + start, ...]
  // holds these and only adds zero weights beyond.
  std::vector<std::pair<int64_t, double>> taps;
  double total = 0;
  for (int64_t p = int64_t(std::floor(xo - support / fs)) - 1; p <= int64_t(std::ceil(xo + support / fs)) + 1; ++p) {
    double w = f((double(p) - xo) * fs);
    if (w == 0) continue;
    if (exclude && (p < 0 || p >= in)) w = 0;
    total += w;
    taps.push_back({std::clamp<int64_t>(p, 0, in - 1), w});
  }
  for (auto& t : taps) t.second /= total;
  return taps;
}

TEST_F(ResizeAntialias, LinearAndCubicDownsamplingAgainstANaiveReference) {
  Tensor x = random_f32({2, 3, 11, 13}, rng);
  struct Case {
    std::string mode, ct;
    bool exclude;
    int64_t oh, ow;
    double sh, sw;  // 0: out / in
  };
  for (const Case& c : std::vector<Case>{{"linear", "half_pixel", false, 6, 7, 0, 0},
                                         {"linear", "half_pixel", false, 3, 5, 0.3, 0.4},
                                         {"linear", "align_corners", false, 4, 13, 0, 0},
                                         {"linear", "asymmetric", true, 5, 20, 0.5, 1.6},
                                         {"cubic", "half_pixel", false, 6, 7, 0, 0},
                                         {"cubic", "half_pixel", true, 4, 3, 0.4, 0.25},
                                         {"cubic", "asymmetric", false, 11, 9, 0, 0}}) {
    SCOPED_TRACE(c.mode + " " + c.ct + (c.exclude ? " exclude_outside" : ""));
    Attrs a{{"mode", c.mode}, {"coordinate_transformation_mode", c.ct}, {"exclude_outside", int(c.exclude)},
            {"scale_h", c.sh}, {"scale_w", c.sw}};
    // A symbolic width needs the scale as an attribute (the tap count depends on it).
    ir::PrimExpr w = c.sw > 0 ? ir::PrimExpr(n) : ir::PrimExpr(ir::int_imm(13));
    auto e = b.call("resize2d_antialias", {param("x", {2, 3, 11, w}), graph::ShapeExpr::make({ir::int_imm(c.oh), ir::int_imm(c.ow)})}, a);
    expect_elements(run(e, {x}, {{2, 3, c.oh, c.ow}}, {{"n", 13}})[0], [&](const Idx& i) {
      double v = 0;
      for (auto [yi, wy] : antialias_taps(c.mode, c.ct, c.exclude, i[2], 11, c.oh, c.sh))
        for (auto [xi, wx] : antialias_taps(c.mode, c.ct, c.exclude, i[3], 13, c.ow, c.sw)) v += wy * wx * at(x, {i[0], i[1], yi, xi});
      return v;
    }, 2e-5);
  }
}

}  // namespace
}  // namespace anvil::ops
