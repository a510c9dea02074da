// Path confinement of the session directory (including symbolic links that lead out) and the
// session functions called in-process.
#include "anvil/rpc/server_functions.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "anvil/rpc/handshake.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"

namespace anvil::rpc {
namespace {

namespace fs = std::filesystem;

class WorkDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/anvil-rpc-fn-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = fs::canonical(pattern);
    outside_ = dir_.string() + "-outside";
    fs::create_directories(outside_);
    register_runtime_functions();
    register_server_functions(dir_, 1 << 20);
    register_test_functions();
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove_all(outside_);
  }
  fs::path dir_;
  fs::path outside_;
};

TEST_F(WorkDir, RelativeAndInsideAbsolutePathsResolve) {
  EXPECT_EQ(resolve_in_workdir(dir_, "a.txt"), dir_ / "a.txt");
  EXPECT_EQ(resolve_in_workdir(dir_, "sub/b.txt"), dir_ / "sub/b.txt");
  EXPECT_EQ(resolve_in_workdir(dir_, (dir_ / "c").string()), dir_ / "c");
  EXPECT_EQ(resolve_in_workdir(dir_, "./d"), dir_ / "d");
}

TEST_F(WorkDir, EscapesAreRefused) {
  for (std::string bad : {"", "..", "../x", "a/../../x", "a/..", "/etc/passwd", "/"}) {
    EXPECT_THROW(resolve_in_workdir(dir_, bad), Error) << bad;
  }
  EXPECT_THROW(resolve_in_workdir(dir_, outside_.string() + "/f"), Error);
}

TEST_F(WorkDir, SymlinksOutAreRefused) {
  fs::create_symlink(outside_, dir_ / "out");
  fs::create_symlink("/etc/passwd", dir_ / "passwd");
  fs::create_directories(dir_ / "in");
  fs::create_symlink(dir_ / "in", dir_ / "in_link");
  EXPECT_THROW(resolve_in_workdir(dir_, "out/f"), Error);
  EXPECT_THROW(resolve_in_workdir(dir_, "passwd"), Error);
  EXPECT_EQ(resolve_in_workdir(dir_, "in_link/f"), dir_ / "in/f");
  Function download = Registry::get("tvm.rpc.server.download");
  EXPECT_THROW(download("passwd"), Error);
  Function upload = Registry::get("tvm.rpc.server.upload");
  EXPECT_THROW(upload("out/evil", Value::bytes("x")), Error);
  EXPECT_FALSE(fs::exists(outside_ / "evil"));
}

TEST_F(WorkDir, FileFunctionsWorkInside) {
  Registry::get("tvm.rpc.server.upload")("f.bin", Value::bytes(std::string("\0ab", 3)));
  EXPECT_EQ(Registry::get("tvm.rpc.server.download")("f.bin").as_bytes(), std::string("\0ab", 3));
  EXPECT_EQ(Registry::get("tvm.rpc.server.listdir")(".").as_string(), "./f.bin,");
  EXPECT_EQ(Registry::get("tvm.rpc.server.listdir")("missing").as_string(), "");
  Registry::get("tvm.rpc.server.remove")("f.bin");
  EXPECT_FALSE(fs::exists(dir_ / "f.bin"));
  EXPECT_EQ(Registry::get("tvm.rpc.server.GetCRTMaxPacketSize")().as_int(), 1 << 20);
  EXPECT_THROW(Registry::get("tvm.rpc.server.download_linked_module")("x.bin"), Error);
}

TEST_F(WorkDir, TimeEvaluatorReturnsPackedDoubles) {
  Function make = Registry::get("runtime.RPCTimeEvaluator");
  Function eval = make(Value(), "testing.nop", int64_t{1}, int64_t{0}, int64_t{5}, int64_t{3}, int64_t{0}, int64_t{100},
                       int64_t{0}, int64_t{1}, int64_t{0}, std::string())
                      .as_function();
  Value blob = eval();
  EXPECT_EQ(blob.as_bytes().size(), 3 * sizeof(double));
  EXPECT_THROW(make(Value(), "no.such", int64_t{1}, int64_t{0}, int64_t{5}, int64_t{3}, int64_t{0}, int64_t{100},
                    int64_t{0}, int64_t{1}, int64_t{0}, std::string()),
               Error);
}

TEST_F(WorkDir, TestHelpersBehaveAsTVMs) {
  EXPECT_EQ(Registry::get("rpc.test.addone")(int64_t{10}).as_int(), 11);
  EXPECT_EQ(Registry::get("rpc.test.strcat")("abc", int64_t{11}).as_string(), "abc:11");
  EXPECT_EQ(Registry::get("rpc.test.runtime_str_concat")("abc", "def").as_string(), "abcdef");
  EXPECT_THROW(Registry::get("rpc.test.except")("abc"), Error);
  try {
    Registry::get("testing.test_raise_error")("ValueError", "msg");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
  }
}

TEST(HandshakeTest, ParsesTimeoutsLikePython) {
  EXPECT_EQ(parse_client_key("client:x1 -timeout=10").session_timeout, 10.0);
  EXPECT_EQ(parse_client_key("client:x1 -timeout=10.0").session_timeout, 10.0);
  EXPECT_EQ(parse_client_key("client: -timeout=0.01").session_timeout, 0.01);
  EXPECT_FALSE(parse_client_key("client:x1").session_timeout);
  EXPECT_FALSE(parse_client_key("client:x1 -timeout=0").session_timeout);
  std::vector<std::string> warnings;
  EXPECT_FALSE(parse_client_key("client:x1 -timeout=abc", &warnings).session_timeout);
  EXPECT_FALSE(parse_client_key("client:x1 -timeout=-3", &warnings).session_timeout);
  EXPECT_FALSE(parse_client_key("client:x1 -timeout=inf", &warnings).session_timeout);
  EXPECT_EQ(warnings.size(), 3u);
  EXPECT_EQ(client_key_string("x1", 0), "client:x1");
  EXPECT_EQ(client_key_string("x1", 10), "client:x1 -timeout=10");
  EXPECT_EQ(client_key_string("", 1.5), "client: -timeout=1.5");
}

}  // namespace
}  // namespace anvil::rpc
