// Path confinement of the session directory (including symbolic links that lead out) and the
// session functions called in-process.
#include "anvil/rpc/server_functions.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

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

// GNU ld reads an input that is not an object as a linker script: this one links the bytes of
// `file` into the output.
std::string leaking_script(const fs::path& file) {
  return "TARGET(binary)\nINPUT(" + file.string() + ")\nTARGET(elf64-x86-64)\n";
}

// The error of calling `f` with `arg`, or a failure naming what it returned instead.
std::string refusal_of(const Function& f, const std::string& arg, const std::string& secret) {
  try {
    Value v = f(arg);
    bool leaked = v.kind() == ValueKind::kBytes && v.as_bytes().find(secret) != std::string::npos;
    ADD_FAILURE() << "'" << arg << "' was accepted" << (leaked ? " and the result holds the outside file's bytes" : "");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
    return e.what();
  }
  return "";
}

TEST_F(WorkDir, LinkerScriptsDisguisedAsObjectsAreRefused) {
  const std::string secret = "anvil-secret-" + std::to_string(::getpid());
  std::ofstream(outside_ / "secret.txt") << secret;
  Function upload = Registry::get("tvm.rpc.server.upload");
  Function linked = Registry::get("tvm.rpc.server.download_linked_module");
  Function load = Registry::get("tvm.rpc.server.load_module");
  upload("evil.o", Value::bytes(leaking_script(outside_ / "secret.txt")));
  std::string why = refusal_of(linked, "evil.o", secret);
  EXPECT_NE(why.find("'evil.o' is not accepted as linker input: it is text, not an object file"), std::string::npos) << why;
  EXPECT_NE(refusal_of(load, "evil.o", secret).find("not accepted as linker input"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "evil.o.so"));
  // The same script as a member of a tar, as TVM's export_library packs objects.
  fs::path staging = outside_ / "staging";
  fs::create_directories(staging);
  std::ofstream(staging / "lib0.o") << leaking_script(outside_ / "secret.txt");
  std::string pack = "tar -C " + staging.string() + " -cf " + (outside_ / "evil.tar").string() + " lib0.o";
  ASSERT_EQ(std::system(pack.c_str()), 0) << pack;
  std::ifstream tar_in(outside_ / "evil.tar", std::ios::binary);
  upload("evil.tar", Value::bytes(std::string(std::istreambuf_iterator<char>(tar_in), {})));
  why = refusal_of(linked, "evil.tar", secret);
  EXPECT_NE(why.find("'evil.tar' member 'lib0.o' is not accepted as linker input"), std::string::npos) << why;
}

TEST_F(WorkDir, TarMembersThatAreLinksAreRefusedAndRemoved) {
  fs::path staging = outside_ / "staging";
  fs::create_directories(staging);
  fs::create_symlink(outside_ / "secret.o", staging / "lib0.o");
  std::ofstream(outside_ / "secret.o") << "not an object";
  std::string pack = "tar -C " + staging.string() + " -cf " + (outside_ / "links.tar").string() + " lib0.o";
  ASSERT_EQ(std::system(pack.c_str()), 0) << pack;
  std::ifstream tar_in(outside_ / "links.tar", std::ios::binary);
  Registry::get("tvm.rpc.server.upload")("links.tar", Value::bytes(std::string(std::istreambuf_iterator<char>(tar_in), {})));
  std::string why = refusal_of(Registry::get("tvm.rpc.server.download_linked_module"), "links.tar", "not an object");
  EXPECT_NE(why.find("'links.tar' member 'lib0.o' is a symbolic link"), std::string::npos) << why;
  // No link is left behind to probe outside files with.
  EXPECT_FALSE(fs::exists(dir_ / "links.tar.d"));
}

TEST_F(WorkDir, RuntimeLoadModuleStaysInsideAndSaysNothingAboutOutsideFiles) {
  // The session's runtime.load_module, as a session's GetGlobalFunc finds it (the overlay).
  SessionFunctions session = server_functions(dir_, 1 << 20);
  ASSERT_TRUE(session.count("runtime.load_module"));
  Function load = session.at("runtime.load_module");
  auto message = [&](const std::string& path) {
    try {
      load(path);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  // The same answer for an outside library that exists and one that does not.
  std::string existing = message(ANVIL_TEST_KERNELS);
  std::string missing = message(outside_.string() + "/missing.so");
  EXPECT_EQ(existing, "path '" ANVIL_TEST_KERNELS "' leads outside the session directory");
  EXPECT_EQ(missing, "path '" + outside_.string() + "/missing.so' leads outside the session directory");
  EXPECT_NE(message("../x.so").find("'..' is not allowed"), std::string::npos);
  // Inside the session directory it loads.
  fs::copy_file(ANVIL_TEST_KERNELS, dir_ / "kernels.so");
  EXPECT_EQ(message("kernels.so"), "loaded");
  EXPECT_EQ(message((dir_ / "kernels.so").string()), "loaded");
  // The remote time evaluator finds the session's function, not the registry's unconfined one.
  Function make = session.at("runtime.RPCTimeEvaluator");
  Function timed = make(Value(), "runtime.load_module", int64_t{1}, int64_t{0}, int64_t{1}, int64_t{1}, int64_t{0},
                        int64_t{100}, int64_t{0}, int64_t{1}, int64_t{0}, std::string())
                       .as_function();
  try {
    timed(std::string(ANVIL_TEST_KERNELS));
    ADD_FAILURE() << "the time evaluator loaded an outside library";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("leads outside the session directory"), std::string::npos) << e.what();
  }
}

TEST_F(WorkDir, NamesWithNulOrControlCharactersAreRefused) {
  Function upload = Registry::get("tvm.rpc.server.upload");
  for (std::string bad : {std::string("a.txt\0.so", 9), std::string("\0", 1), std::string("line\nbreak"),
                          std::string("tab\there"), std::string("del\x7f")}) {
    try {
      upload(bad, Value::bytes("x"));
      ADD_FAILURE() << "upload accepted a name with a control character";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
      EXPECT_NE(std::string(e.what()).find("file names may not contain NUL or other control characters"), std::string::npos)
          << e.what();
    }
    EXPECT_THROW(Registry::get("tvm.rpc.server.download")(bad), Error);
    EXPECT_THROW(Registry::get("tvm.rpc.server.remove")(bad), Error);
  }
  // The name is shown with the control character escaped, and nothing was written.
  try {
    upload(std::string("a.txt\0.so", 9), Value::bytes("x"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("path 'a.txt\\x00.so'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "a.txt"));
  EXPECT_EQ(Registry::get("tvm.rpc.server.listdir")(".").as_string(), "");
  EXPECT_NO_THROW(upload("caf\xc3\xa9 b.txt", Value::bytes("x")));  // UTF-8 and spaces are fine
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
