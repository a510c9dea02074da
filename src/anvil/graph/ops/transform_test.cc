// Type inference of the transform and shape operators: static and symbolic dims, and the
// errors a bad call gets (kind and a message naming the problem).
#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/ops/transform.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::graph {
namespace {

const DataType kF32 = DataType::float32();

class TransformTypes : public ::testing::Test {
 protected:
  Var x(std::vector<PrimExpr> shape, DataType dt = DataType::float32()) { return Var::make("x", Type::tensor(std::move(shape), dt)); }
  std::string type_of(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
    return to_string(b.call(op, std::move(args), std::move(attrs)).type());
  }
  ErrorKind error_of(const std::string& op, std::vector<Expr> args, Attrs attrs = {}) {
    try {
      b.call(op, std::move(args), std::move(attrs));
    } catch (const Error& e) {
      return e.kind();
    }
    ADD_FAILURE() << op << " accepted a bad call";
    return ErrorKind::kInternal;
  }
  BlockBuilder b;
  ir::Var n = ir::size_var("n");
};

TEST_F(TransformTypes, Reshape) {
  EXPECT_EQ(type_of("reshape", {x({2, 3, 4}), ShapeExpr::make({6, 4})}), "Tensor[(6, 4), float32]");
  EXPECT_EQ(type_of("reshape", {x({n, 12}), ShapeExpr::make({n, 3, 4})}), "Tensor[(n, 3, 4), float32]");
  EXPECT_EQ(error_of("reshape", {x({2, 3}), ShapeExpr::make({7})}), ErrorKind::kValue);
  EXPECT_EQ(error_of("reshape", {x({n, 3}), ShapeExpr::make({n, 4})}), ErrorKind::kValue);
  EXPECT_EQ(error_of("reshape", {x({2, 3}), x({2})}), ErrorKind::kType);
}

TEST_F(TransformTypes, TransposeExpandSqueeze) {
  EXPECT_EQ(type_of("transpose", {x({n, 3, 5})}, {{"axes", AttrValue::ints({2, 0, 1})}}), "Tensor[(5, n, 3), float32]");
  EXPECT_EQ(type_of("transpose", {x({n, 3})}), "Tensor[(3, n), float32]");
  EXPECT_EQ(error_of("transpose", {x({n, 3})}, {{"axes", AttrValue::ints({0, 0})}}), ErrorKind::kValue);
  EXPECT_EQ(type_of("expand_dims", {x({n, 3})}, {{"axes", AttrValue::ints({0, -1})}}), "Tensor[(1, n, 3, 1), float32]");
  EXPECT_EQ(type_of("squeeze", {x({1, n, 1})}), "Tensor[(n,), float32]");
  EXPECT_EQ(type_of("squeeze", {x({1, n, 1})}, {{"axes", AttrValue::ints({-1})}}), "Tensor[(1, n), float32]");
  EXPECT_EQ(error_of("squeeze", {x({2, 3})}, {{"axes", AttrValue::ints({0})}}), ErrorKind::kValue);
  EXPECT_EQ(error_of("squeeze", {x({2, 3})}, {{"axes", AttrValue::ints({2})}}), ErrorKind::kIndex);
}

TEST_F(TransformTypes, BroadcastConcatSplit) {
  EXPECT_EQ(type_of("broadcast_to", {x({3, 1}), ShapeExpr::make({n, 1, 4})}), "Tensor[(n, 3, 4), float32]");
  EXPECT_EQ(error_of("broadcast_to", {x({3, 2}), ShapeExpr::make({4})}), ErrorKind::kValue);
  EXPECT_EQ(type_of("concat", {x({n, 3}), x({5, 3}), x({n, 3})}, {{"axis", 0}}), "Tensor[(n * 2 + 5, 3), float32]");
  EXPECT_EQ(error_of("concat", {x({2, 3}), x({2, 4})}, {{"axis", 0}}), ErrorKind::kValue);
  EXPECT_EQ(error_of("concat", {x({2, 3}), x({2, 3}, DataType::int64())}, {{"axis", 0}}), ErrorKind::kType);
  EXPECT_EQ(type_of("split", {x({n, 4})}, {{"axis", 0}, {"indices", AttrValue::ints({2, 5})}}),
            "Tuple[Tensor[(2, 4), float32], Tensor[(3, 4), float32], Tensor[(n - 5, 4), float32]]");
  EXPECT_EQ(error_of("split", {x({4, 4})}, {{"axis", 0}, {"indices", AttrValue::ints({3, 2})}}), ErrorKind::kValue);
}

TEST_F(TransformTypes, StridedSlice) {
  Attrs a{{"begin", AttrValue::ints({1, -1})}, {"end", AttrValue::ints({INT64_MAX, -100})},
          {"strides", AttrValue::ints({2, -1})}, {"axes", AttrValue::ints({0, 1})}};
  EXPECT_EQ(type_of("strided_slice", {x({37, 10})}, a), "Tensor[(18, 10), float32]");
  Attrs s{{"begin", AttrValue::ints({0})}, {"end", AttrValue::ints({-1})}, {"axes", AttrValue::ints({1})}};
  EXPECT_EQ(type_of("strided_slice", {x({4, n})}, s), "Tensor[(4, max(n - 1, 0)), float32]");
  Attrs z{{"begin", AttrValue::ints({0})}, {"end", AttrValue::ints({1})}, {"strides", AttrValue::ints({0})}};
  EXPECT_EQ(error_of("strided_slice", {x({4})}, z), ErrorKind::kValue);
  ops::SliceRange r = ops::normalize_slice(ir::int_imm(5), 10, 20, 1);
  EXPECT_EQ(ir::as_const_int(r.extent), 0);
}

TEST_F(TransformTypes, TakeTilePad) {
  EXPECT_EQ(type_of("take", {x({n, 8}), x({2, 3}, DataType::int64())}, {{"axis", 1}}), "Tensor[(n, 2, 3), float32]");
  EXPECT_EQ(error_of("take", {x({n, 8}), x({2}, kF32)}, {{"axis", 0}}), ErrorKind::kType);
  EXPECT_EQ(type_of("tile", {x({n, 3})}, {{"reps", AttrValue::ints({2, 1})}}), "Tensor[(n * 2, 3), float32]");
  EXPECT_EQ(type_of("pad", {x({n, 3})}, {{"pads", AttrValue::ints({1, 0, 2, 3})}}), "Tensor[(n + 3, 6), float32]");
  EXPECT_EQ(error_of("pad", {x({2, 3})}, {{"pads", AttrValue::ints({1, 0})}}), ErrorKind::kValue);
  EXPECT_EQ(error_of("pad", {x({2, 3})}, {{"pads", AttrValue::ints({0, 0, 0, 0})}, {"mode", "symmetric"}}), ErrorKind::kValue);
  // A run-time fill: one element of the data's dtype, mode constant only.
  Attrs p{{"pads", AttrValue::ints({1, 0, 0, 0})}};
  EXPECT_EQ(type_of("pad", {x({2, 3}), x({})}, p), "Tensor[(3, 3), float32]");
  EXPECT_EQ(type_of("pad", {x({2, 3}), x({1})}, p), "Tensor[(3, 3), float32]");
  EXPECT_EQ(error_of("pad", {x({2, 3}), x({2})}, p), ErrorKind::kValue);
  EXPECT_EQ(error_of("pad", {x({2, 3}), x({}, DataType::int64())}, p), ErrorKind::kValue);
  EXPECT_EQ(error_of("pad", {x({2, 3}), x({})}, {{"pads", AttrValue::ints({1, 0, 0, 0})}, {"mode", "edge"}}), ErrorKind::kValue);
}

// Split sizes, Pad amounts and Range's length known only at run time: a Shape argument of Vars
// (tensor_to_shape / range_length results) that the result's dims are made of.
TEST_F(TransformTypes, SplitPadArangeByRunTimeValues) {
  ir::Var a("a", DataType::int32()), c("c", DataType::int32()), p0("p0", DataType::int32()), p1("p1", DataType::int32());
  Var sizes = Var::make("sizes", Type::shape({a, c}));
  EXPECT_EQ(type_of("split", {x({5, n}), sizes}, {{"axis", 1}}),
            "Tuple[Tensor[(5, a), float32], Tensor[(5, c), float32]]");
  Var pads = Var::make("pads", Type::shape({p0, 0, p1, 2}));
  EXPECT_EQ(type_of("pad", {x({n, 3}), pads}, {{"mode", "reflect"}}), "Tensor[(n + p0 + p1, 5), float32]");
  EXPECT_EQ(type_of("pad", {x({n, 3}), x({}), pads}), "Tensor[(n + p0 + p1, 5), float32]");  // and a run-time fill
  EXPECT_EQ(error_of("pad", {x({n, 3}), Var::make("p", Type::shape({p0, p1}))}), ErrorKind::kValue);  // not 2 * rank
  Var len = Var::make("len", Type::shape({n}));
  EXPECT_EQ(type_of("arange", {len, x({}), x({})}, {{"dtype", kF32}}), "Tensor[(n,), float32]");
  EXPECT_EQ(error_of("arange", {len, x({}), x({}, DataType::int64())}, {{"dtype", kF32}}), ErrorKind::kValue);
}

TEST_F(TransformTypes, FullArangeAndShapes) {
  EXPECT_EQ(type_of("full", {ShapeExpr::make({n, 2})}, {{"value", 1.0}, {"dtype", DataType::int64()}}),
            "Tensor[(n, 2), int64]");
  EXPECT_EQ(type_of("arange", {}, {{"start", 0.0}, {"limit", 10.0}, {"delta", 3.0}, {"dtype", kF32}}),
            "Tensor[(4,), float32]");
  Expr s = b.call("shape_of", {x({n, 3})});
  EXPECT_EQ(to_string(s.type()), "Shape[2]");
  EXPECT_EQ(type_of("shape_to_tensor", {ShapeExpr::make({n, 3, 4})}), "Tensor[(3,), int64]");
  EXPECT_EQ(error_of("shape_to_tensor", {x({3})}), ErrorKind::kType);
}

TEST_F(TransformTypes, GatherElementsOneHotDepthToSpace) {
  EXPECT_EQ(type_of("gather_elements", {x({3, n}), x({2, 5}, DataType::int64())}, {{"axis", 1}}), "Tensor[(2, 5), float32]");
  EXPECT_EQ(type_of("one_hot", {x({n}, DataType::int64()), x({2})}, {{"depth", 7}}), "Tensor[(n, 7), float32]");
  EXPECT_EQ(type_of("depth_to_space", {x({n, 8, 3, 5})}, {{"blocksize", 2}}), "Tensor[(n, 2, 6, 10), float32]");
  EXPECT_EQ(error_of("depth_to_space", {x({1, 6, 3, 5})}, {{"blocksize", 2}}), ErrorKind::kValue);
  EXPECT_EQ(type_of("space_to_depth", {x({n, 3, 4, 6})}, {{"blocksize", 2}}), "Tensor[(n, 12, 2, 3), float32]");
  EXPECT_EQ(type_of("trilu", {x({n, 4})}, {{"k", 0}}), "Tensor[(n, 4), float32]");
}

TEST_F(TransformTypes, Resize2dWithRunTimeScalesAndTaps) {
  // Scales known only at run time: a last float32 argument read at scale_index; the size a Shape of Vars.
  ir::Var oh("oh", DataType::int32()), ow("ow", DataType::int32()), th("th", DataType::int32()), tw("tw", DataType::int32());
  Var size = Var::make("size", Type::shape({oh, ow})), taps = Var::make("taps", Type::shape({th, tw}));
  Var scales = x({4});
  Attrs at{{"mode", "linear"}, {"scale_index", AttrValue::ints({2, 3})}};
  EXPECT_EQ(type_of("resize2d", {x({n, 3, 5, 7}), size, scales}, at), "Tensor[(n, 3, oh, ow), float32]");
  EXPECT_EQ(type_of("resize2d_antialias", {x({n, 3, 5, 7}), size, scales, taps}, at), "Tensor[(n, 3, oh, ow), float32]");
  EXPECT_EQ(type_of("resize2d_antialias", {x({1, 3, 5, 7}), size, taps}, {{"mode", "cubic"}}), "Tensor[(1, 3, oh, ow), float32]");
  EXPECT_EQ(error_of("resize2d", {x({1, 3, 5, 7}), size, scales}, {{"scale_index", AttrValue::ints({2, 4})}}), ErrorKind::kValue);
  EXPECT_EQ(error_of("resize2d", {x({1, 3, 5, 7}), size, x({4}, DataType::int64())}, at), ErrorKind::kType);
  EXPECT_EQ(error_of("resize2d", {x({1, 3, 5, 7}), size}, {{"nearest_mode", "legacy"}}), ErrorKind::kValue);
  EXPECT_EQ(error_of("resize2d_antialias", {x({1, 3, 5, 7}), size, Var::make("t", Type::shape({th}))}, {{"mode", "linear"}}),
            ErrorKind::kValue);
}

}  // namespace
}  // namespace anvil::graph
