// Tensor and params serialisation, including hostile inputs.
#include "anvil/runtime/tensor_io.h"

#include <gtest/gtest.h>

#include <cstring>

#include "anvil/runtime/test_util.h"

namespace anvil {
namespace {

TEST(TensorIO, ParamsRoundTripExactly) {
  std::map<std::string, Tensor> params{{"w", testing::random_float_tensor({3, 4})},
                                       {"b", testing::random_float_tensor({4})}};
  Tensor ints = Tensor::empty({5}, DataType::int64());
  for (int i = 0; i < 5; ++i) static_cast<int64_t*>(ints.data())[i] = i * 1000003 - 7;
  params["idx"] = ints;
  std::string bytes = save_params(params);
  auto back = load_params(bytes);
  ASSERT_EQ(back.size(), 3u);
  for (const auto& [name, t] : params) {
    ASSERT_EQ(back.at(name).shape(), t.shape());
    ASSERT_EQ(back.at(name).dtype(), t.dtype());
    EXPECT_EQ(std::memcmp(back.at(name).data(), t.data(), t.nbytes()), 0) << name;
  }
}

TEST(TensorIO, EveryTruncationIsRejectedCleanly) {
  std::string bytes = save_params({{"w", testing::random_float_tensor({2, 2})}});
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      load_params(std::string_view(bytes).substr(0, n));
      FAIL() << "accepted a params file truncated to " << n << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
    }
  }
}

TEST(TensorIO, CorruptFieldsNameTheProblem) {
  std::string good = save_params({{"w", testing::random_float_tensor({2, 2})}});
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_THROW(load_params(bad), Error);
  bad = good;
  bad[8] = 9;  // version
  try {
    load_params(bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("version 9"), std::string::npos) << e.what();
  }
  bad = good;
  std::memset(&bad[16], 0xFF, 8);  // a huge param count
  EXPECT_THROW(load_params(bad), Error);
  EXPECT_THROW(load_params(good + "x"), Error);  // trailing garbage
}

}  // namespace
}  // namespace anvil
