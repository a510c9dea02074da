// .npy/.npz round trips, corrupt files, and --input-shapes parsing.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "anvil/base/error.h"
#include "anvil/tools/anvil_commands.h"
#include "anvil/tools/npz.h"

namespace anvil::tools {
namespace {

Tensor random_tensor(std::vector<int64_t> shape, DataType dtype, uint64_t seed) {
  Tensor t = Tensor::empty(shape, dtype);
  std::mt19937_64 rng(seed);
  auto* p = static_cast<unsigned char*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<unsigned char>(rng());
  if (dtype == DataType::boolean())
    for (size_t i = 0; i < t.nbytes(); ++i) p[i] &= 1;
  return t;
}

TEST(Npz, RoundTripsEveryDtypeAndShape) {
  std::vector<NamedTensor> ts = {
      {"x", random_tensor({2, 3}, DataType::float32(), 1)},
      {"ids", random_tensor({4}, DataType::int64(), 2)},
      {"mask", random_tensor({1, 5}, DataType::boolean(), 3)},
      {"scalar", random_tensor({}, DataType::float64(), 4)},
      {"h", random_tensor({7}, DataType::float16(), 5)},
      {"q", random_tensor({3, 1}, DataType::int8(), 6)},
      {"empty", random_tensor({0, 4}, DataType::uint8(), 7)},
  };
  std::vector<NamedTensor> back = parse_npz(format_npz(ts), "t.npz");
  ASSERT_EQ(back.size(), ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    EXPECT_EQ(back[i].name, ts[i].name);
    EXPECT_EQ(back[i].tensor.shape(), ts[i].tensor.shape());
    EXPECT_EQ(back[i].tensor.dtype(), ts[i].tensor.dtype());
    EXPECT_EQ(std::memcmp(back[i].tensor.data(), ts[i].tensor.data(), ts[i].tensor.nbytes()), 0) << ts[i].name;
  }
}

TEST(Npz, CorruptFilesAreValueErrorsNamingTheProblem) {
  std::string good = format_npz({{"x", random_tensor({2, 3}, DataType::float32(), 9)}});
  auto message = [](const std::string& bytes) {
    try {
      parse_npz(bytes, "in.npz");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("hello").find("in.npz"), std::string::npos);
  EXPECT_NE(message(good.substr(0, good.size() - 30)).find("in.npz"), std::string::npos);
  // Every truncation and every single-byte flip fails cleanly or parses (no crash, no hang).
  for (size_t n = 0; n < good.size(); n += 7) {
    try {
      parse_npz(good.substr(0, n), "t");
    } catch (const Error&) {
    }
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    try {
      parse_npz(bad, "t");
    } catch (const Error&) {
    }
  }
}

TEST(Npz, DeflateEntryClaimingMoreThanDeflateCanExpandIsRefusedBeforeAllocating) {
  // A zip whose deflate entry claims 4 GiB from 2 compressed bytes (found by fuzz_npz: the
  // reader allocated the claimed size first).
  std::string local = std::string("PK\3\4", 4) + std::string("\x14\0\0\0\x08\0", 6) + std::string(8, '\0');
  const std::string name = "x.npy", payload("\x03\0", 2);  // an empty final deflate block
  auto le = [](uint64_t v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return s;
  };
  std::string file = local + le(payload.size(), 4) + le(0xfffffff0u, 4) + le(name.size(), 2) + le(0, 2) + name + payload;
  std::string cd = std::string("PK\1\2", 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(8, 2) + le(0, 4) + le(0, 4) +
       le(payload.size(), 4) + le(0xfffffff0u, 4) + le(name.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) +
       le(0, 4) + le(0, 4) + name;
  uint64_t cd_offset = file.size();
  file += cd + std::string("PK\5\6", 4) + le(0, 2) + le(0, 2) + le(1, 2) + le(1, 2) + le(cd.size(), 4) +
          le(cd_offset, 4) + le(0, 2);
  try {
    parse_npz(file, "big.npz");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("more than deflate can expand"), std::string::npos) << e.what();
  }
}

TEST(Npz, AZip64LocalHeaderOffsetNearTwoToThe64IsAValueError) {
  // fuzz_npz: a zip64 extra field gave the local header offset 2^64 - 1; the bounds check added
  // the read size to it and wrapped (undefined behaviour, then a read before the buffer).
  std::string good = format_npz({{"x", random_tensor({2}, DataType::float32(), 5)}});
  size_t cd = good.find(std::string("PK\1\2", 4));
  ASSERT_NE(cd, std::string::npos);
  std::string bad = good;
  for (int i = 0; i < 4; ++i) bad[cd + 42 + i] = '\xff';  // local offset 0xffffffff: read from zip64
  const std::string name = "x.npy";
  std::string extra = std::string("\x01\x00\x08\x00", 4) + std::string(8, '\xff');  // id 1, 8 bytes
  bad[cd + 30] = static_cast<char>(extra.size());
  bad.insert(cd + 46 + name.size(), extra);
  // The end-of-directory record's central directory size grows by the extra field.
  size_t eocd = bad.rfind(std::string("PK\5\6", 4));
  bad[eocd + 12] = static_cast<char>(static_cast<unsigned char>(bad[eocd + 12]) + extra.size());
  try {
    parse_npz(bad, "big.npz");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("bad offset"), std::string::npos) << e.what();
  }
}

TEST(Npy, FortranOrderAndBigEndianAreRefused) {
  std::string npy = format_npy(random_tensor({2, 2}, DataType::float32(), 3));
  std::string fortran = npy;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_THROW(parse_npy(fortran, "a.npy"), Error);
  std::string big = npy;
  big.replace(big.find("<f4"), 3, ">f4");
  EXPECT_THROW(parse_npy(big, "a.npy"), Error);
}

TEST(InputShapes, BothSpellingsAndErrors) {
  auto s = parse_input_shapes("x:1x3x224x224,mask:2x128");
  EXPECT_EQ(s["x"], (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(s["mask"], (std::vector<int64_t>{2, 128}));
  auto t = parse_input_shapes("input:0:[1,3,-1] y:[]");
  EXPECT_EQ(t["input:0"], (std::vector<int64_t>{1, 3, -1}));
  EXPECT_TRUE(t["y"].empty());
  EXPECT_THROW(parse_input_shapes("x1x3"), Error);
  EXPECT_THROW(parse_input_shapes("x:1xax3"), Error);
  EXPECT_THROW(parse_input_shapes("x:1,x:2"), Error);
}

}  // namespace
}  // namespace anvil::tools
