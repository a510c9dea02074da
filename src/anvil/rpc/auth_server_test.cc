// --auth-token on a real server process: the right token works, a wrong or missing one is
// refused with a logged reason while the server keeps serving, the token can come from
// $ANVIL_RPC_AUTH_TOKEN, and the warning about listening on a non-loopback address without one.
#include <gtest/gtest.h>

#include <cstdlib>

#include "anvil/rpc/client.h"
#include "anvil/rpc/test_process.h"
#include "anvil/runtime/register.h"

namespace anvil::rpc {
namespace {

using testing::ChildProcess;

struct TokenServer {
  explicit TokenServer(std::vector<std::string> extra, const std::string& host = "127.0.0.1")
      : child(argv(std::move(extra), host)) {
    std::string pattern = host == "0.0.0.0" ? R"(bind to 0\.0\.0\.0:(\d+))" : R"(bind to 127\.0\.0\.1:(\d+))";
    std::optional<std::string> p = child.wait_for(pattern);
    if (!p) throw std::runtime_error("the server did not start:\n" + child.log());
    port = std::stoi(*p);
  }
  static std::vector<std::string> argv(std::vector<std::string> extra, const std::string& host) {
    std::vector<std::string> a = {ANVIL_RPC_SERVER_BIN, "--host", host, "--port", "0", "--port-end", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  RPCSession connect(std::optional<std::string> token) {
    ConnectOptions o;
    o.auth_token = token ? *token : std::string();
    return RPCSession::connect("127.0.0.1", port, "", 0, o);
  }
  ChildProcess child;
  int port = 0;
};

class AuthServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_runtime_functions(); }
};

std::string refusal(TokenServer& s, std::optional<std::string> token) {
  try {
    s.connect(std::move(token));
  } catch (const RPCError& e) {
    return e.what();
  }
  return "(connected)";
}

TEST_F(AuthServerTest, RightTokenWorksWrongAndMissingAreRefused) {
  TokenServer s({"--auth-token", "correct horse"});
  EXPECT_NE(refusal(s, "battery staple").find("wrong auth token"), std::string::npos);
  EXPECT_NE(refusal(s, std::nullopt).find("requires an auth token"), std::string::npos);
  EXPECT_TRUE(s.child.wait_for("refused: authentication failed: wrong auth token").has_value()) << s.child.log();
  // Still serving, and the right token gets a session.
  RPCSession remote = s.connect("correct horse");
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
  remote.close();
  EXPECT_TRUE(s.child.wait_for("authenticated").has_value()) << s.child.log();
}

// Sets an environment variable for one scope (the server child inherits it).
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name); }
  const char* name;
};

TEST_F(AuthServerTest, TokenFromTheEnvironment) {
  std::optional<ScopedEnv> env(std::in_place, "ANVIL_RPC_AUTH_TOKEN", "from-env");
  TokenServer s({});
  // The client reads the same variable when given no token.
  RPCSession remote = RPCSession::connect("127.0.0.1", s.port);
  env.reset();
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{5}).as_int(), 6);
  remote.close();
  EXPECT_NE(refusal(s, "other").find("wrong auth token"), std::string::npos);
}

TEST_F(AuthServerTest, ClientWithATokenRefusesAServerWithout) {
  TokenServer s({});
  EXPECT_NE(refusal(s, "mine").find("offers no authentication"), std::string::npos);
  RPCSession remote = s.connect(std::nullopt);  // "" = no token: a plain session
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
}

TEST_F(AuthServerTest, WarnsWhenListeningBeyondLoopbackWithoutAToken) {
  TokenServer open({}, "0.0.0.0");
  EXPECT_NE(open.child.log().find("without --auth-token"), std::string::npos) << open.child.log();
  TokenServer local({});
  EXPECT_EQ(local.child.log().find("without --auth-token"), std::string::npos) << local.child.log();
  TokenServer guarded({"--auth-token", "t"}, "0.0.0.0");
  EXPECT_EQ(guarded.child.log().find("without --auth-token"), std::string::npos) << guarded.child.log();
}

}  // namespace
}  // namespace anvil::rpc
