// connect_local and connect_popen: calls, tensors and files through both; the work directory
// goes with the session; a child that dies mid-session gives an error naming how it died (not a
// hang); closing reaps the child; a command that cannot run is an IOError.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "anvil/rpc/spawn_session.h"
#include "anvil/runtime/register.h"

namespace anvil::rpc {
namespace {

namespace fs = std::filesystem;
constexpr uint32_t kSeed = 20240611;

class SpawnSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_runtime_functions(); }
};

Tensor random_tensor(std::mt19937& gen, std::initializer_list<int64_t> shape) {
  std::uniform_real_distribution<float> dist(0.5f, 2.0f);
  Tensor t = Tensor::empty(shape, DataType::float32());
  auto* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(gen);
  return t;
}

std::string random_bytes(std::mt19937& gen, size_t n) {
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(gen() & 0xff);
  return out;
}

// Calls, a tensor round trip and the file functions: the same on every kind of session.
void exercise(RPCSession& s, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> ints(-1000, 1000);
  int64_t x = ints(gen);
  EXPECT_EQ(s.get_function("rpc.test.addone")(x).as_int(), x + 1);
  EXPECT_FALSE(s.find_function("no.such.function").has_value());

  Tensor host = random_tensor(gen, {3, 17});
  RemoteTensor remote = s.upload_tensor(host, s.cpu());
  Tensor back = remote.to_host();
  EXPECT_EQ(std::memcmp(back.data(), host.data(), host.nbytes()), 0);

  std::string blob = random_bytes(gen, 100'000);
  s.upload_bytes(blob, "blob.bin");
  EXPECT_EQ(s.download("blob.bin"), blob);
  EXPECT_EQ(s.listdir("."), std::vector<std::string>{"./blob.bin"});
  s.remove("blob.bin");
  EXPECT_TRUE(s.listdir(".").empty());
}

TEST_F(SpawnSessionTest, LocalSessionServesInProcessAndRemovesItsDirectory) {
  std::printf("seed %u\n", kSeed);
  RPCSession s = connect_local();
  exercise(s, kSeed);
  fs::path dir = s.get_function("tvm.rpc.server.workpath")(".").as_string();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  s.close();
  EXPECT_FALSE(fs::exists(dir)) << dir;
}

TEST_F(SpawnSessionTest, LocalSessionsHaveSeparateDirectories) {
  RPCSession a = connect_local(), b = connect_local();
  a.upload_bytes("a", "only_a.txt");
  EXPECT_EQ(a.listdir(".").size(), 1u);
  EXPECT_TRUE(b.listdir(".").empty());
  EXPECT_NE(a.get_function("tvm.rpc.server.workpath")(".").as_string(),
            b.get_function("tvm.rpc.server.workpath")(".").as_string());
}

TEST_F(SpawnSessionTest, PopenSessionServesOverPipesAndReapsTheChild) {
  int pid = 0;
  RPCSession s = connect_popen({ANVIL_RPC_SERVER_BIN}, {}, &pid);
  ASSERT_GT(pid, 0);
  exercise(s, kSeed + 1);
  fs::path dir = s.get_function("tvm.rpc.server.workpath")(".").as_string();
  ASSERT_TRUE(fs::is_directory(dir));
  s.close();
  // Reaped: no longer our child (not even a zombie), and its directory is gone.
  errno = 0;
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  EXPECT_FALSE(fs::exists(dir)) << dir;
}

TEST_F(SpawnSessionTest, PopenChildDeathIsAClearErrorNotAHang) {
  int pid = 0;
  RPCSession s = connect_popen({ANVIL_RPC_SERVER_BIN}, {}, &pid);
  Function addone = s.get_function("rpc.test.addone");
  EXPECT_EQ(addone(1).as_int(), 2);
  ASSERT_EQ(::kill(-pid, SIGKILL), 0);  // the server and its session process
  auto start = std::chrono::steady_clock::now();
  try {
    addone(2);
    FAIL() << "a call to a dead server succeeded";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("killed by signal 9"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(pid)), std::string::npos) << what;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_FALSE(s.is_open());
  errno = 0;
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);  // reaped when the session closed
}

TEST_F(SpawnSessionTest, PopenWithTvmStyleArguments) {
  // TVM's convention passes the descriptors as the last two arguments: a shell wrapper turns
  // them into anvil-rpc's flag.
  fs::path script = fs::temp_directory_path() / ("anvil-popen-tvm-" + std::to_string(::getpid()) + ".sh");
  {
    std::ofstream out(script);
    out << "#!/bin/sh\nexec '" << ANVIL_RPC_SERVER_BIN << "' --pipe-fds \"$1,$2\"\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  PopenOptions o;
  o.pipe_args = PipeArgs::kTvm;
  RPCSession s = connect_popen({script.string()}, o);
  EXPECT_EQ(s.get_function("rpc.test.addone")(41).as_int(), 42);
  s.close();
  fs::remove(script);
}

TEST_F(SpawnSessionTest, PopenCommandThatCannotRunIsAnIOError) {
  try {
    connect_popen({"/nonexistent/anvil-rpc"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIO);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/anvil-rpc"), std::string::npos) << e.what();
  }
}

TEST_F(SpawnSessionTest, PopenChildThatExitsAtOnceReportsItsStatus) {
  try {
    connect_popen({"/bin/sh", "-c", "exit 7"}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 7"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace anvil::rpc
