// Type inference of the nn operators: static shapes, a symbolic batch (and symbolic spatial
// dims where the output size is an expression), and the errors for bad operands/attributes.
#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/ir/expr.h"

namespace anvil::graph {
namespace {

const DataType f32 = DataType::float32();

Type ts(const std::vector<int64_t>& s, DataType d) { return Type::tensor(s, d); }

Type call_type(const std::string& op, const std::vector<Type>& types, const Attrs& attrs = {}) {
  BlockBuilder b;
  std::vector<Expr> args;
  for (size_t i = 0; i < types.size(); ++i) args.push_back(b.add_param("a" + std::to_string(i), types[i]));
  return b.call(op, args, attrs).type();
}

std::string str(const std::string& op, const std::vector<Type>& types, const Attrs& attrs = {}) {
  return to_string(call_type(op, types, attrs));
}

Attrs conv_attrs(std::vector<int64_t> strides, std::vector<int64_t> pad, std::vector<int64_t> dil, int64_t groups) {
  return {{"strides", AttrValue::ints(strides)},
          {"padding", AttrValue::ints(pad)},
          {"dilation", AttrValue::ints(dil)},
          {"groups", AttrValue(groups)}};
}

TEST(GraphNnOps, Conv2dStaticAndSymbolicBatch) {
  EXPECT_EQ(str("nn.conv2d", {ts({1, 3, 224, 224}, f32), ts({64, 3, 7, 7}, f32)},
                conv_attrs({2, 2}, {3, 3, 3, 3}, {1, 1}, 1)),
            "Tensor[(1, 64, 112, 112), float32]");
  ir::Var n = ir::size_var("n");
  EXPECT_EQ(str("nn.conv2d", {Type::tensor({n, 32, 56, 56}, f32), ts({32, 1, 3, 3}, f32)},
                conv_attrs({2, 2}, {0, 0, 1, 1}, {1, 1}, 32)),
            "Tensor[(n, 32, 28, 28), float32]");
  // Dilation 2: a 3x3 window spans 5.
  EXPECT_EQ(str("nn.conv2d", {ts({2, 4, 9, 9}, f32), ts({6, 2, 3, 3}, f32)},
                conv_attrs({1, 1}, {0, 0, 0, 0}, {2, 2}, 2)),
            "Tensor[(2, 6, 5, 5), float32]");
  // Symbolic spatial dims: an expression.
  ir::Var h = ir::size_var("h");
  Type t = call_type("nn.conv2d", {Type::tensor(std::vector<ir::PrimExpr>{ir::int_imm(1), ir::int_imm(3), h, ir::int_imm(8)}, f32), ts({4, 3, 3, 3}, f32)},
                     conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1));
  EXPECT_EQ(ir::as_const_int(t.dim(3)), std::optional<int64_t>(8));
  EXPECT_FALSE(ir::as_const_int(t.dim(2)).has_value());
}

TEST(GraphNnOps, Conv2dErrors) {
  EXPECT_THROW(call_type("nn.conv2d", {ts({1, 4, 8, 8}, f32), ts({4, 3, 3, 3}, f32)}), Error);
  EXPECT_THROW(call_type("nn.conv2d", {ts({1, 4, 8, 8}, f32), ts({5, 2, 3, 3}, f32)},
                         conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 2)),
               Error);  // 5 output channels, 2 groups
  EXPECT_THROW(call_type("nn.conv2d", {ts({1, 4, 2, 2}, f32), ts({4, 4, 3, 3}, f32)}), Error);
  EXPECT_THROW(call_type("nn.conv2d", {ts({1, 4, 8}, f32), ts({4, 4, 3, 3}, f32)}), Error);
  try {
    call_type("nn.conv2d", {ts({1, 4, 8, 8}, f32), ts({4, 4, 3, 3}, f32)},
              {{"strides", AttrValue::ints({1})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("strides"), std::string::npos) << e.what();
  }
}

TEST(GraphNnOps, Conv2dPackedWeightLayout) {
  EXPECT_EQ(str("nn.conv2d_pack_weight", {ts({64, 37, 3, 3}, f32)}, {{"block", AttrValue(32)}}),
            "Tensor[(2, 37, 3, 3, 32), float32]");
  EXPECT_THROW(call_type("nn.conv2d_pack_weight", {ts({48, 37, 3, 3}, f32)}, {{"block", AttrValue(32)}}), Error);
  ir::Var n = ir::size_var("n");
  EXPECT_EQ(str("nn.conv2d", {Type::tensor({n, 37, 8, 8}, f32), ts({2, 37, 3, 3, 32}, f32)},
                {{"kernel_layout", AttrValue("OIHW32o")}, {"padding", AttrValue::ints({1, 1, 1, 1})}}),
            "Tensor[(n, 64, 8, 8), float32]");
  EXPECT_THROW(call_type("nn.conv2d", {ts({1, 37, 8, 8}, f32), ts({2, 37, 3, 3, 16}, f32)},
                         {{"kernel_layout", AttrValue("OIHW32o")}}),
               Error);
  EXPECT_THROW(call_type("nn.conv2d", {ts({1, 37, 8, 8}, f32), ts({64, 37, 3, 3}, f32)},
                         {{"kernel_layout", AttrValue("NCHW")}}),
               Error);
}

TEST(GraphNnOps, Conv2dTranspose) {
  Attrs a = conv_attrs({2, 2}, {1, 1, 1, 1}, {1, 1}, 1);
  a["output_padding"] = AttrValue::ints({1, 1});
  EXPECT_EQ(str("nn.conv2d_transpose", {ts({1, 8, 5, 5}, f32), ts({8, 3, 3, 3}, f32)}, a),
            "Tensor[(1, 3, 10, 10), float32]");
  // 3-d: padding begins then ends; (in - 1) * s + d * (k - 1) + 1 + opad - pads per axis.
  Attrs b{{"strides", AttrValue::ints({2, 1, 3})}, {"padding", AttrValue::ints({1, 0, 0, 0, 1, 0})},
          {"dilation", AttrValue::ints({1, 2, 1})}, {"output_padding", AttrValue::ints({1, 0, 0})}, {"groups", AttrValue(2)}};
  ir::Var n = ir::size_var("n");
  EXPECT_EQ(str("nn.conv3d_transpose", {Type::tensor({n, 4, 3, 4, 5}, f32), ts({4, 3, 2, 3, 2}, f32)}, b),
            "Tensor[(n, 6, 6, 7, 14), float32]");
  b["padding"] = AttrValue::ints({0, 0, 0, -1, 0, 0});
  EXPECT_THROW(call_type("nn.conv3d_transpose", {ts({1, 4, 3, 4, 5}, f32), ts({4, 3, 2, 3, 2}, f32)}, b), Error);
}

TEST(GraphNnOps, DenseAndMatmul) {
  ir::Var n = ir::size_var("n");
  EXPECT_EQ(str("nn.dense", {Type::tensor({n, 128, 384}, f32), ts({1536, 384}, f32)}),
            "Tensor[(n, 128, 1536), float32]");
  EXPECT_THROW(call_type("nn.dense", {ts({4, 10}, f32), ts({10, 4}, f32)}), Error);
  EXPECT_EQ(str("matmul", {Type::tensor({n, 12, 128, 64}, f32), Type::tensor({n, 12, 64, 128}, f32)}),
            "Tensor[(n, 12, 128, 128), float32]");
  EXPECT_EQ(str("matmul", {ts({3, 1, 4, 5}, f32), ts({2, 5, 6}, f32)}),
            "Tensor[(3, 2, 4, 6), float32]");
  EXPECT_EQ(str("matmul", {ts({5}, f32), ts({2, 5, 6}, f32)}), "Tensor[(2, 6), float32]");
  EXPECT_EQ(str("matmul", {ts({4, 5}, f32), ts({5}, f32)}), "Tensor[(4,), float32]");
  EXPECT_THROW(call_type("matmul", {ts({4, 5}, f32), ts({6, 5}, f32)}), Error);
}

// nn.dense_pack_weight: [N, K] or KN [K, N] -> [ceil(N/b), K, b]; nn.dense reads it with
// weight_layout "packed" and units N (checked against the panel count).
TEST(GraphNnOps, DensePackedWeight) {
  ir::Var n = ir::size_var("n");
  EXPECT_EQ(str("nn.dense_pack_weight", {ts({100, 70}, f32)}, {{"block", AttrValue(32)}}), "Tensor[(4, 70, 32), float32]");
  EXPECT_EQ(str("nn.dense_pack_weight", {ts({70, 100}, f32)}, {{"block", AttrValue(32)}, {"layout", AttrValue("KN")}}),
            "Tensor[(4, 70, 32), float32]");
  EXPECT_THROW(call_type("nn.dense_pack_weight", {ts({70, 100}, f32)}, {{"block", AttrValue(0)}}), Error);
  EXPECT_THROW(call_type("nn.dense_pack_weight", {ts({70, 100}, f32)}, {{"block", AttrValue(8)}, {"layout", AttrValue("KK")}}),
               Error);
  Attrs packed{{"weight_layout", AttrValue("packed")}, {"units", AttrValue(100)}};
  EXPECT_EQ(str("nn.dense", {Type::tensor({n, 7, 70}, f32), ts({4, 70, 32}, f32)}, packed), "Tensor[(n, 7, 100), float32]");
  EXPECT_THROW(call_type("nn.dense", {ts({3, 70}, f32), ts({3, 70, 32}, f32)}, packed), Error);  // 3 panels < 100
  EXPECT_THROW(call_type("nn.dense", {ts({3, 71}, f32), ts({4, 70, 32}, f32)}, packed), Error);  // K differs
  EXPECT_THROW(call_type("nn.dense", {ts({3, 70}, f32), ts({100, 70}, f32)}, packed), Error);    // not 3-d
}

TEST(GraphNnOps, Pools) {
  Attrs a = conv_attrs({2, 2}, {1, 1, 1, 1}, {1, 1}, 1);
  a.erase("groups");
  a["pool_size"] = AttrValue::ints({3, 3});
  ir::Var n = ir::size_var("n");
  EXPECT_EQ(str("nn.max_pool2d", {Type::tensor({n, 64, 112, 112}, f32)}, a), "Tensor[(n, 64, 56, 56), float32]");
  // ceil_mode: (6 - 3) / 2 + 1 = 2 floor, 3 ceil; the last window must start inside.
  Attrs b{{"pool_size", AttrValue::ints({3, 3})}, {"strides", AttrValue::ints({2, 2})}, {"ceil_mode", AttrValue(1)}};
  EXPECT_EQ(str("nn.avg_pool2d", {ts({1, 2, 6, 6}, f32)}, b), "Tensor[(1, 2, 3, 3), float32]");
  b["ceil_mode"] = AttrValue(0);
  EXPECT_EQ(str("nn.avg_pool2d", {ts({1, 2, 6, 6}, f32)}, b), "Tensor[(1, 2, 2, 2), float32]");
  EXPECT_EQ(str("nn.global_avg_pool2d", {Type::tensor({n, 512, 7, 7}, f32)}), "Tensor[(n, 512, 1, 1), float32]");
  EXPECT_THROW(call_type("nn.max_pool2d", {ts({1, 2, 6, 6}, f32)}), Error);  // no pool_size
  // Integer max pooling; Indices of the pooled result: int64 of its shape.
  EXPECT_EQ(str("nn.max_pool2d", {ts({1, 2, 6, 6}, DataType::uint8())}, b), "Tensor[(1, 2, 2, 2), uint8]");
  EXPECT_THROW(call_type("nn.avg_pool2d", {ts({1, 2, 6, 6}, DataType::uint8())}, b), Error);
  EXPECT_EQ(str("nn.max_pool2d_indices", {ts({1, 2, 6, 6}, f32), ts({1, 2, 2, 2}, f32)}, b), "Tensor[(1, 2, 2, 2), int64]");
  EXPECT_THROW(call_type("nn.max_pool2d_indices", {ts({1, 2, 6, 6}, f32), ts({1, 2, 3, 3}, f32)}, b), Error);
}

TEST(GraphNnOps, NormsAndSoftmax) {
  ir::Var n = ir::size_var("n");
  Type x = Type::tensor({n, 16, 5, 5}, f32), v = ts({16}, f32);
  EXPECT_EQ(str("nn.batch_norm", {x, v, v, v, v}), to_string(x));
  EXPECT_THROW(call_type("nn.batch_norm", {x, v, v, v, ts({15}, f32)}), Error);
  EXPECT_EQ(str("nn.instance_norm", {x, v, v}), to_string(x));
  EXPECT_EQ(str("nn.group_norm", {x, v, v}, {{"num_groups", AttrValue(4)}}), to_string(x));
  EXPECT_THROW(call_type("nn.group_norm", {x, v, v}, {{"num_groups", AttrValue(3)}}), Error);
  Type s = Type::tensor({n, 128, 384}, f32), g = ts({384}, f32);
  EXPECT_EQ(str("nn.layer_norm", {s, g, g}, {{"axis", AttrValue(-1)}}), to_string(s));
  EXPECT_EQ(str("nn.rms_norm", {s, g}, {{"axis", AttrValue(2)}}), to_string(s));
  EXPECT_EQ(str("nn.softmax", {s}, {{"axis", AttrValue(-1)}}), to_string(s));
  EXPECT_THROW(call_type("nn.softmax", {s}, {{"axis", AttrValue(3)}}), Error);
  EXPECT_THROW(call_type("nn.log_softmax", {ts({4}, DataType::int32())}), Error);
  EXPECT_EQ(str("nn.lrn", {x}, {{"size", AttrValue(5)}}), to_string(x));
}

}  // namespace
}  // namespace anvil::graph
