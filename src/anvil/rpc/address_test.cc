// Ports and host:port strings as the command lines check them, and names/IPv6 literals for
// binding and connecting (loopback only).
#include "anvil/rpc/address.h"

#include <gtest/gtest.h>

#include <thread>

#include "anvil/base/error.h"
#include "anvil/rpc/protocol.h"
#include "anvil/rpc/transport.h"

namespace anvil::rpc {
namespace {

TEST(Address, PortProblemAcceptsOnlyDecimalPortsInRange) {
  EXPECT_EQ(port_problem("0"), "");
  EXPECT_EQ(port_problem("65535"), "");
  EXPECT_EQ(port_problem("65536", 0, 65536), "");
  EXPECT_EQ(port_problem("70000"), "70000 is out of range 0..65535");
  EXPECT_EQ(port_problem("-5"), "-5 is out of range 0..65535");
  EXPECT_EQ(port_problem("0", 1), "0 is out of range 1..65535");
  EXPECT_EQ(port_problem("abc"), "'abc' is not a port number (0..65535)");
  for (const char* bad : {"", "0x10", "9090x", " 80", "+5", "1e3", "-", "99999999999999"}) {
    EXPECT_NE(port_problem(bad), "") << bad;
  }
}

TEST(Address, HostPortSyntax) {
  HostPort a = parse_host_port("tracker-host:9190", "--tracker");
  EXPECT_EQ(a.host, "tracker-host");
  EXPECT_EQ(a.port, 9190);
  HostPort b = parse_host_port("[::1]:9190", "--tracker");
  EXPECT_EQ(b.host, "::1");
  EXPECT_EQ(b.port, 9190);
  HostPort c = parse_host_port("fe80::1:80", "--tracker");  // unbracketed: the last colon
  EXPECT_EQ(c.host, "fe80::1");
  EXPECT_EQ(c.port, 80);
  EXPECT_EQ(host_port_problem("localhost"),
            "'localhost' has no port (expected host:port, e.g. 127.0.0.1:9190 or [::1]:9190)");
  for (const char* bad : {"localhost:", ":9190", "h:0", "h:65536", "h:abc", "[::1]", "[::1", "[::1]9190"}) {
    EXPECT_NE(host_port_problem(bad), "") << bad;
  }
  try {
    parse_host_port("localhost", "--tracker");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("--tracker: 'localhost' has no port"), std::string::npos) << e.what();
  }
  EXPECT_EQ(format_host_port("::1", 5), "[::1]:5");
  EXPECT_EQ(format_host_port("127.0.0.1", 5), "127.0.0.1:5");
}

void expect_round_trip(const std::string& bind_host, const std::string& connect_host, const std::string& peer_prefix) {
  TcpListener listener = TcpListener::bind(bind_host, 0, 0);
  ASSERT_GT(listener.port(), 0);
  std::thread client([&] {
    Channel ch = tcp_connect(connect_host, listener.port(), 2000);
    ch.write_all("ping", 4, 2000);
  });
  std::optional<Channel> conn = listener.accept(5000);
  client.join();
  ASSERT_TRUE(conn.has_value());
  char buf[4];
  conn->read_exact(buf, 4, 2000, 2000);
  EXPECT_EQ(std::string(buf, 4), "ping");
  EXPECT_EQ(conn->peer().rfind(peer_prefix, 0), 0u) << conn->peer();
}

TEST(Address, BindsAndConnectsOverIPv6LoopbackAndNames) {
  expect_round_trip("::1", "::1", "[::1]:");
  expect_round_trip("localhost", "localhost", "127.0.0.1:");
  expect_round_trip("127.0.0.1", "localhost", "127.0.0.1:");
  expect_round_trip("::", "127.0.0.1", "127.0.0.1:");  // dual-stack wildcard; a v4 peer prints as v4
}

TEST(Address, UnresolvableHostAndBadPortsSayWhat) {
  try {
    TcpListener::bind("no-such-host.invalid", 0, 0);
    FAIL() << "bound an unresolvable host";
  } catch (const ChannelError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot resolve host 'no-such-host.invalid'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(TcpListener::bind("127.0.0.1", 70000, 0), ChannelError);
  EXPECT_THROW(TcpListener::bind("127.0.0.1", -5, 0), ChannelError);
  EXPECT_THROW(tcp_connect("127.0.0.1", 70000, 1000), ChannelError);
}

}  // namespace
}  // namespace anvil::rpc
