// The RPC server as a real process on loopback, driven by the C++ client: every argument kind,
// tensor copies in chunks, confined files, loaded kernels, the remote time evaluator, a crashing
// kernel, session timeouts, and the pipe transport.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "anvil/rpc/client.h"
#include "anvil/rpc/test_process.h"
#include "anvil/runtime/register.h"

namespace anvil::rpc {
namespace {

using testing::ChildProcess;

// A server on an ephemeral loopback port; extra flags appended.
class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> extra = {}) : child_(argv(std::move(extra))) {
    std::optional<std::string> port = child_.wait_for(R"(bind to 127\.0\.0\.1:(\d+))");
    if (!port) throw std::runtime_error("the server did not start:\n" + child_.log());
    port_ = std::stoi(*port);
  }
  int port() const { return port_; }
  ChildProcess& child() { return child_; }
  RPCSession connect(const std::string& key = "", double timeout = 0) {
    return RPCSession::connect("127.0.0.1", port_, key, timeout);
  }

 private:
  static std::vector<std::string> argv(std::vector<std::string> extra) {
    std::vector<std::string> a = {ANVIL_RPC_SERVER_BIN, "--host", "127.0.0.1", "--port", "0", "--port-end", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  ChildProcess child_;
  int port_ = 0;
};

Tensor iota(std::initializer_list<int64_t> shape, float scale = 1.f) {
  Tensor t = Tensor::empty(shape, DataType::float32());
  auto* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(i) * scale;
  return t;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_runtime_functions(); }
};

TEST_F(ServerTest, CallsWithEveryArgumentKind) {
  ServerProcess server;
  RPCSession remote = server.connect();
  Function echo = remote.get_function("testing.echo");
  EXPECT_EQ(echo(int64_t{7}).as_int(), 7);
  EXPECT_DOUBLE_EQ(echo(2.5).as_float(), 2.5);
  EXPECT_EQ(echo(true).as_bool(), true);
  EXPECT_EQ(echo(std::string("a longer string than seven")).as_string(), "a longer string than seven");
  EXPECT_EQ(echo(Value::bytes(std::string("\0\1\2", 3))).as_bytes(), std::string("\0\1\2", 3));
  EXPECT_EQ(echo(DataType::bfloat16()).as_dtype(), DataType::bfloat16());
  EXPECT_EQ(echo(Device::cpu(0)).as_device(), Device::cpu(0));
  EXPECT_TRUE(echo(Value()).is_null());
  EXPECT_EQ(remote.get_function("rpc.test.strcat")("abc", int64_t{11}).as_string(), "abc:11");
  Function add10 = remote.get_function("rpc.test.add_to_lhs")(int64_t{10}).as_function();
  EXPECT_EQ(add10(int64_t{12}).as_int(), 22);
  Value shape = remote.get_function("ffi.Shape")(int64_t{2}, int64_t{3});
  EXPECT_EQ(remote.get_function("rpc.testing.GetShapeElem")(shape, int64_t{1}).as_int(), 3);
  EXPECT_EQ(remote.get_function("rpc.testing.GetShapeSize")(shape).as_int(), 2);
  EXPECT_FALSE(remote.find_function("no.such.function").has_value());
  try {
    remote.get_function("rpc.test.except")("boom");
    FAIL();
  } catch (const RPCError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos);
  }
}

TEST_F(ServerTest, TensorsCopyBothWaysInChunks) {
  // A 4 KiB packet limit forces the client to split every copy.
  ServerProcess server({"--max-packet-bytes", "4096"});
  RPCSession remote = server.connect();
  Tensor host = iota({100, 100}, 0.25f);
  RemoteTensor a = remote.upload_tensor(host, remote.cpu());
  EXPECT_TRUE(same_bytes(a.to_host(), host));
  Tensor ones = Tensor::empty({3, 4}, DataType::float64());
  for (int i = 0; i < 12; ++i) static_cast<double*>(ones.data())[i] = 1.0;
  RemoteTensor r = remote.upload_tensor(ones, remote.cpu());
  EXPECT_NO_THROW(remote.get_function("rpc.test.remote_tensor_func")(r.value()));
  // A tensor returned by a function: used as an argument, copied back, freed by handle.
  Function get_arr = remote.get_function("rpc.test.remote_return_nd")("get_arr").as_function();
  std::optional<RemoteTensor> arr = RemoteTensor::from_value(get_arr());
  ASSERT_TRUE(arr);
  EXPECT_EQ(arr->shape(), std::vector<int64_t>{10});
  Function elem = remote.get_function("rpc.test.remote_return_nd")("get_arr_elem").as_function();
  EXPECT_EQ(elem(arr->value(), int64_t{3}).as_float(), 0.0);
  EXPECT_EQ(static_cast<float*>(arr->to_host().data())[9], 0.f);
  Tensor local = Tensor::empty({2}, DataType::float32());
  EXPECT_THROW(remote.get_function("testing.echo")(local), Error);
}

TEST_F(ServerTest, FilesStayInsideTheSessionDirectory) {
  ServerProcess server;
  RPCSession remote = server.connect();
  remote.upload_bytes("0123456789", "dat.bin");
  remote.upload_bytes("x", "sub/inner.txt");
  EXPECT_EQ(remote.download("dat.bin"), "0123456789");
  EXPECT_EQ(remote.listdir("."), (std::vector<std::string>{"./dat.bin", "./sub"}));
  EXPECT_EQ(remote.listdir("sub"), (std::vector<std::string>{"sub/inner.txt"}));
  remote.remove("dat.bin");
  remote.remove("");  // MetaSchedule does this; it must be harmless
  EXPECT_EQ(remote.listdir("."), (std::vector<std::string>{"./sub"}));
  for (std::string bad : {"../escape.txt", "/etc/passwd", "sub/../../x", "/tmp/anvil-escape"}) {
    EXPECT_THROW(remote.upload_bytes("evil", bad), RPCError) << bad;
    EXPECT_THROW(remote.download(bad), RPCError) << bad;
    EXPECT_THROW(remote.remove(bad), RPCError) << bad;
  }
  EXPECT_THROW(remote.listdir(".."), RPCError);
  EXPECT_FALSE(std::filesystem::exists("/tmp/anvil-escape"));
  std::string workpath = remote.get_function("tvm.rpc.server.workpath")("a.txt").as_string();
  remote.close();
  // The session directory is removed when the session ends.
  std::filesystem::path dir = std::filesystem::path(workpath).parent_path();
  for (int i = 0; i < 200 && std::filesystem::exists(dir); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

TEST_F(ServerTest, LoadedKernelsRunAndTime) {
  ServerProcess server;
  RPCSession remote = server.connect();
  remote.upload(ANVIL_TEST_KERNELS, "kernels.so");
  Module mod = remote.load_module("kernels.so");
  EXPECT_EQ(mod.kind(), "rpc");
  Tensor x = iota({64});
  RemoteTensor rx = remote.upload_tensor(x, remote.cpu());
  RemoteTensor ry = remote.empty(std::vector<int64_t>{64}, DataType::float32(), remote.cpu());
  mod["add_one"](rx.value(), ry.value());
  Tensor y = ry.to_host();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(static_cast<float*>(y.data())[i], static_cast<float*>(x.data())[i] + 1);
  EXPECT_FALSE(mod.find_function("not_there").has_value());
  TimeEvaluatorOptions o;
  o.number = 3;
  o.repeat = 2;
  Value times = remote.time_evaluator(mod, "add_one", remote.cpu(), o)(rx.value(), ry.value());
  ASSERT_EQ(times.as_array().size(), 2u);
  EXPECT_GT(times.as_array()[0].as_float(), 0.0);
}

TEST_F(ServerTest, ObjectFilesAndTarballsAreLinkedOnTheServer) {
  // The kernels as an object file and as a tar of it, as TVM's export_library writes them.
  std::filesystem::path tmp = std::filesystem::temp_directory_path() / ("anvil-rpc-link-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  std::string compile = std::string("cc -c -fPIC -I") + ANVIL_SOURCE_DIR + "/src " + ANVIL_SOURCE_DIR +
                        "/tests/data/test_kernels.c -o " + (tmp / "k.o").string() + " && tar -C " + tmp.string() +
                        " -czf " + (tmp / "k.tar").string() + " k.o";
  ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
  ServerProcess server;
  RPCSession remote = server.connect();
  remote.upload((tmp / "k.o").string());
  remote.upload((tmp / "k.tar").string());
  std::filesystem::remove_all(tmp);
  Module mod = remote.load_module("k.o");
  Tensor x = iota({8});
  RemoteTensor rx = remote.upload_tensor(x, remote.cpu());
  RemoteTensor ry = remote.empty(std::vector<int64_t>{8}, DataType::float32(), remote.cpu());
  mod["add_one"](rx.value(), ry.value());
  EXPECT_EQ(static_cast<float*>(ry.to_host().data())[7], 8.f);
  std::string so = remote.download_linked_module("k.tar");
  ASSERT_GT(so.size(), 4u);
  EXPECT_EQ(so.substr(0, 4), "\x7f" "ELF");
  EXPECT_THROW(remote.download_linked_module("k.txt"), RPCError);
}

TEST_F(ServerTest, OutsideFilesCannotBeLinkedLoadedOrNamedWithControlCharacters) {
  // A file outside the session directory that the server can read.
  std::filesystem::path secret = std::filesystem::temp_directory_path() / ("anvil-rpc-secret-" + std::to_string(::getpid()));
  const std::string marker = "anvil-outside-bytes-" + std::to_string(::getpid());
  std::ofstream(secret) << marker;
  ServerProcess server;
  RPCSession remote = server.connect();
  // An ".o" that is a GNU ld script pulling the file in as data.
  remote.upload_bytes("TARGET(binary)\nINPUT(" + secret.string() + ")\nTARGET(elf64-x86-64)\n", "evil.o");
  try {
    std::string so = remote.download_linked_module("evil.o");
    ADD_FAILURE() << "linked; the library holds the outside file: " << (so.find(marker) != std::string::npos);
  } catch (const RPCError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("'evil.o' is not accepted as linker input"), std::string::npos) << e.what();
  }
  EXPECT_THROW(remote.load_module("evil.o"), RPCError);
  // runtime.load_module: outside paths refused alike, whether they exist or not.
  Function load = remote.get_function("runtime.load_module");
  auto message = [&](const std::string& path) {
    try {
      load(path);
    } catch (const RPCError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  std::string existing = message(ANVIL_TEST_KERNELS);
  std::string missing = message("/nonexistent-dir/x.so");
  EXPECT_NE(existing.find("leads outside the session directory"), std::string::npos) << existing;
  EXPECT_NE(missing.find("leads outside the session directory"), std::string::npos) << missing;
  remote.upload(ANVIL_TEST_KERNELS, "kernels.so");
  EXPECT_EQ(message("kernels.so"), "loaded");
  // A NUL in an upload name used to cut it short and report success.
  try {
    remote.upload_bytes("x", std::string("a.txt\0.so", 9));
    ADD_FAILURE() << "a name with a NUL was accepted";
  } catch (const RPCError& e) {
    EXPECT_NE(std::string(e.what()).find("may not contain NUL or other control characters"), std::string::npos) << e.what();
  }
  EXPECT_THROW(remote.upload_bytes("x", "new\nline"), RPCError);
  EXPECT_EQ(remote.listdir("."), (std::vector<std::string>{"./evil.o", "./kernels.so"}));
  std::filesystem::remove(secret);
}

TEST_F(ServerTest, LoadLibraryRegistersFunctionsInEverySession) {
  ServerProcess server({"--load-library", ANVIL_RPC_INIT_LIBRARY});
  for (int i = 0; i < 2; ++i) {
    RPCSession remote = server.connect();
    EXPECT_EQ(remote.get_function("rpc.test.from_library")(int64_t{6}).as_int(), 42);
  }
}

TEST_F(ServerTest, CrashingKernelEndsOnlyItsSession) {
  ServerProcess server;
  {
    RPCSession remote = server.connect();
    remote.upload(ANVIL_RPC_CRASH_KERNELS, "crash.so");
    Module mod = remote.load_module("crash.so");
    EXPECT_EQ(mod["answer"]().as_int(), 42);
    try {
      mod["segfault"]();
      FAIL() << "the call returned";
    } catch (const RPCError& e) {
      // A sanitizer build reports the fault and exits instead of dying of SIGSEGV.
      std::string what = e.what();
      EXPECT_TRUE(what.find("signal 11") != std::string::npos || what.find("exited with status") != std::string::npos)
          << what;
    }
  }
  RPCSession again = server.connect();
  EXPECT_EQ(again.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
  std::string log = server.child().log();
  EXPECT_TRUE(log.find("died of signal 11") != std::string::npos || log.find("exited with status") != std::string::npos);
}

TEST_F(ServerTest, SessionTimeoutEndsTheSessionAndTellsTheClient) {
  ServerProcess server;
  {
    RPCSession remote = server.connect("", 0.5);
    Function addone = remote.get_function("rpc.test.addone");
    std::this_thread::sleep_for(std::chrono::milliseconds(900));
    EXPECT_THROW(addone(int64_t{1}), RPCSessionTimeoutError);
  }
  {
    // A request still running when the time is up: the hang is cut short.
    RPCSession remote = server.connect("", 1);
    remote.upload(ANVIL_RPC_CRASH_KERNELS, "crash.so");
    Module mod = remote.load_module("crash.so");
    auto start = std::chrono::steady_clock::now();
    try {
      mod["hang"]();
      FAIL();
    } catch (const RPCSessionTimeoutError& e) {
      EXPECT_NE(std::string(e.what()).find("Your 1.0s session has expired"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  }
  RPCSession again = server.connect();
  EXPECT_EQ(again.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
}

TEST_F(ServerTest, KeysMustMatch) {
  ServerProcess server({"--key", "x1"});
  EXPECT_EQ(server.connect("x1").remote_key(), "server:x1");
  try {
    server.connect("other");
    FAIL();
  } catch (const RPCError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot find server that matches key=other"), std::string::npos);
  }
}

TEST_F(ServerTest, PipeTransportServesOneSession) {
  RPCSession remote = RPCSession::spawn({ANVIL_RPC_SERVER_BIN, "--silent"});
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{41}).as_int(), 42);
  Tensor host = iota({5});
  EXPECT_TRUE(same_bytes(remote.upload_tensor(host, remote.cpu()).to_host(), host));
  remote.close();
}

}  // namespace
}  // namespace anvil::rpc
