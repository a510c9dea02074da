// The module-tree blob: round trips, every truncation, corruption and hostile trees.
#include "anvil/runtime/module/blob.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "anvil/runtime/module/byte_io.h"
#include "anvil/runtime/module/params_module.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor_io.h"
#include "anvil/runtime/test_util.h"

namespace anvil {
namespace {

// A stand-in for host code in these tests: a module that is never serialised itself.
class HostStub final : public ModuleNode {
 public:
  std::string kind() const override { return "host_stub"; }
  std::optional<Function> get_local_function(const std::string& name) override {
    if (name == "host_fn") return Function::from_typed([]() { return 7; });
    return std::nullopt;
  }
};
bool is_stub(const Module& m) { return m.kind() == "host_stub"; }

Module sample_tree(Tensor* weight) {
  *weight = testing::random_float_tensor({2, 3});
  Module root = make_params_module({{"w", *weight}});
  Module host(make_object<HostStub>());
  host.import_module(make_params_module({{"b", testing::random_float_tensor({3})}}));
  root.import_module(host);
  return root;
}

class BlobTest : public ::testing::Test {
 protected:
  void SetUp() override { register_runtime_functions(); }
};

TEST_F(BlobTest, RoundTripRebuildsTheTree) {
  Tensor w;
  Module root = sample_tree(&w);
  std::string blob = pack_module_tree(root, is_stub);
  Module host(make_object<HostStub>());
  Module back = unpack_module_tree(blob, host);
  EXPECT_EQ(back.kind(), "params");
  Tensor w2 = back.get_function("get_param")("w").as_tensor();
  EXPECT_EQ(std::memcmp(w2.data(), w.data(), w.nbytes()), 0);
  ASSERT_EQ(back.imports().size(), 1u);
  EXPECT_TRUE(back.imports()[0].same_as(host));
  EXPECT_EQ(back.get_function("host_fn")().as_int(), 7);  // found through the imports
  EXPECT_EQ(host.imports().size(), 1u);
  EXPECT_EQ(host.imports()[0].kind(), "params");
}

TEST_F(BlobTest, EveryTruncationIsRejected) {
  Tensor w;
  std::string blob = pack_module_tree(sample_tree(&w), is_stub);
  Module host(make_object<HostStub>());
  for (size_t n = 0; n < blob.size(); ++n) {
    EXPECT_THROW(unpack_module_tree(std::string_view(blob).substr(0, n), host), Error) << n;
  }
}

TEST_F(BlobTest, CorruptionIsDetected) {
  Tensor w;
  std::string blob = pack_module_tree(sample_tree(&w), is_stub);
  Module host(make_object<HostStub>());
  // Flip one bit at every position, header words included: magic, version, flags, size,
  // checksum and reserved checks must catch it.
  for (size_t i = 0; i < blob.size(); ++i) {
    std::string bad = blob;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    EXPECT_THROW(unpack_module_tree(bad, host), Error) << "flip at " << i;
  }
}

TEST_F(BlobTest, NonZeroFlagsAndReservedAreRejected) {
  Tensor w;
  std::string blob = pack_module_tree(sample_tree(&w), is_stub);
  Module host(make_object<HostStub>());
  auto expect_error = [&](size_t offset, uint32_t value, const std::string& fragment) {
    std::string bad = blob;
    std::memcpy(bad.data() + offset, &value, 4);
    try {
      unpack_module_tree(bad, host);
      FAIL() << "accepted " << fragment << " = " << value;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error(12, 1, "flags word is 1");
  expect_error(12, 0x80000000u, "flags word is 2147483648");
  expect_error(28, 1, "reserved word is 1");
  expect_error(28, 0xFFFFFFFFu, "reserved word is 4294967295");
}

TEST_F(BlobTest, VersionMismatchSaysSo) {
  Tensor w;
  std::string blob = pack_module_tree(sample_tree(&w), is_stub);
  blob[8] = 1;  // version 1 had unaligned payloads
  try {
    unpack_module_tree(blob, Module(make_object<HostStub>()));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("version 1"), std::string::npos) << e.what();
  }
}

// Builds a syntactically valid blob around a hand-made payload.
std::string wrap_payload(const std::string& payload) {
  ByteWriter out;
  out.put_bytes(std::string_view(kBlobMagic, 8));
  out.put<uint32_t>(kBlobVersion);
  out.put<uint32_t>(0);
  out.put<uint64_t>(payload.size());
  out.put<uint32_t>(crc32(payload));
  out.put<uint32_t>(0);
  out.put_bytes(payload);
  return out.str();
}

// A module payload as pack_module_tree writes it: length, zeros to a multiple of 64 from the
// blob start (32 header bytes before `out`), the bytes.
void put_payload(ByteWriter& out, std::string_view bytes) {
  out.put<uint64_t>(bytes.size());
  out.put_bytes(std::string((64 - (32 + out.str().size()) % 64) % 64, '\0'));
  out.put_bytes(bytes);
}

TEST_F(BlobTest, PayloadsStartAlignedAndPaddingIsChecked) {
  Tensor w;
  std::string blob = pack_module_tree(sample_tree(&w), is_stub);
  Module host(make_object<HostStub>());
  EXPECT_NO_THROW(unpack_module_tree(blob, host));
  // Hand-made: one params module; its payload starts at a multiple of 64.
  ByteWriter one;
  one.put<uint64_t>(1);
  one.put_string("params");
  put_payload(one, save_params({}));
  one.put<uint64_t>(0);
  std::string good = wrap_payload(one.str());
  EXPECT_EQ(unpack_module_tree(good, host).kind(), "params");
  size_t pad_at = 32 + 8 + 8 + 6 + 8;  // header, count, kind string, payload length
  std::string dirty = one.str();
  dirty[pad_at - 32] = 1;
  try {
    unpack_module_tree(wrap_payload(dirty), host);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("padding before the module payload of kind 'params' is not zero"),
              std::string::npos) << e.what();
  }
}

TEST_F(BlobTest, HostileTreesAreRejected) {
  Module host(make_object<HostStub>());
  // Two modules importing each other: a cycle.
  ByteWriter cycle;
  cycle.put<uint64_t>(2);
  cycle.put_string("_lib");
  cycle.put_string("params");
  put_payload(cycle, save_params({}));
  cycle.put<uint64_t>(1);
  cycle.put<uint64_t>(1);
  cycle.put<uint64_t>(1);
  cycle.put<uint64_t>(0);
  EXPECT_THROW(unpack_module_tree(wrap_payload(cycle.str()), host), Error);
  // A child index out of range.
  ByteWriter range;
  range.put<uint64_t>(1);
  range.put_string("_lib");
  range.put<uint64_t>(1);
  range.put<uint64_t>(5);
  EXPECT_THROW(unpack_module_tree(wrap_payload(range.str()), host), Error);
  // An unknown module kind names the kind.
  ByteWriter unknown;
  unknown.put<uint64_t>(1);
  unknown.put_string("quantum");
  put_payload(unknown, "xx");
  unknown.put<uint64_t>(0);
  try {
    unpack_module_tree(wrap_payload(unknown.str()), host);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotImplemented);
    EXPECT_NE(std::string(e.what()).find("quantum"), std::string::npos);
  }
  // A module count far beyond the data.
  ByteWriter huge;
  huge.put<uint64_t>(uint64_t{1} << 60);
  EXPECT_THROW(unpack_module_tree(wrap_payload(huge.str()), host), Error);
}

TEST_F(BlobTest, UnserialisableModuleCannotBePacked) {
  Module root(make_object<HostStub>());
  root.import_module(Module(make_object<HostStub>()));
  EXPECT_THROW(pack_module_tree(root, [](const Module&) { return false; }), Error);
}

// crc32 (slice-by-8) against the check value of CRC-32/IEEE and against a bit-at-a-time
// reference at every length 0..299 and start offset 0..8 (seed 5).
TEST(Crc32, MatchesTheStandardAndABitwiseReference) {
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc32(""), 0u);
  auto reference = [](std::string_view d) {
    uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : d) {
      c ^= b;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
  };
  std::mt19937 gen(5);
  std::string bytes(400, '\0');
  for (char& c : bytes) c = static_cast<char>(gen());
  for (size_t offset = 0; offset < 9; ++offset)
    for (size_t n = 0; n < 300; ++n) {
      std::string_view piece = std::string_view(bytes).substr(offset, n);
      ASSERT_EQ(crc32(piece), reference(piece)) << "offset " << offset << ", length " << n;
    }
}

}  // namespace
}  // namespace anvil
