// Blocking tracker client over POSIX sockets with poll() timeouts (see tracker_client.h).
#include "anvil/rpc/tracker/tracker_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "anvil/base/error.h"
#include "anvil/rpc/tracker/messages.h"

namespace anvil::rpc::tracker {
namespace {

void wait_ready(int fd, short events, std::chrono::milliseconds timeout, const std::string& where) {
  pollfd pfd{fd, events, 0};
  int rc;
  do {
    rc = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  } while (rc < 0 && errno == EINTR);
  if (rc == 0) io_error("tracker ", where, ": timed out after ", timeout.count(), " ms");
  if (rc < 0) io_error("tracker ", where, ": poll failed: ", std::strerror(errno));
}

// Non-blocking connect bounded by `timeout`, then back to blocking mode; false with errno set.
bool connect_with_timeout(int fd, const addrinfo* ai, std::chrono::milliseconds timeout) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return false;
    pollfd pfd{fd, POLLOUT, 0};
    int rc;
    do {
      rc = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      errno = ETIMEDOUT;
      return false;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (rc < 0 || err != 0) {
      errno = err ? err : errno;
      return false;
    }
  }
  ::fcntl(fd, F_SETFL, flags);
  return true;
}

}  // namespace

TrackerClient::TrackerClient(const std::string& host, int port, std::chrono::milliseconds timeout)
    : where_(str_cat(host, ":", port)), timeout_(timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) io_error("tracker ", where_, ": cannot resolve host: ", gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai && fd_ < 0; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    if (connect_with_timeout(fd, ai, timeout)) {
      fd_ = fd;
    } else {
      last_error = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) io_error("cannot connect to tracker ", where_, ": ", last_error);
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  send_raw(encode_i32_le(kTrackerMagic));
  char magic[4];
  recv_exact(magic, 4);
  if (read_i32_le(reinterpret_cast<unsigned char*>(magic)) != kTrackerMagic) {
    io_error(where_, " is not an RPC tracker (wrong magic in its reply)");
  }
}

TrackerClient::~TrackerClient() {
  if (fd_ >= 0) ::close(fd_);
}

void TrackerClient::send_raw(const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    wait_ready(fd_, POLLOUT, timeout_, where_ + " send");
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) io_error("tracker ", where_, ": send failed: ", std::strerror(errno));
    sent += static_cast<std::size_t>(n);
  }
}

void TrackerClient::recv_exact(char* data, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    wait_ready(fd_, POLLIN, timeout_, where_ + " receive");
    ssize_t r = ::recv(fd_, data + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) io_error("tracker ", where_, ": connection closed by the tracker");
    if (r < 0) io_error("tracker ", where_, ": receive failed: ", std::strerror(errno));
    got += static_cast<std::size_t>(r);
  }
}

std::string TrackerClient::recv_frame() {
  char header[4];
  recv_exact(header, 4);
  int32_t size = read_i32_le(reinterpret_cast<unsigned char*>(header));
  if (size <= 0 || static_cast<std::size_t>(size) > max_reply_bytes_) {
    io_error("tracker ", where_, ": invalid reply size ", size);
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  recv_exact(text.data(), text.size());
  return text;
}

Json TrackerClient::call(const Json& request) {
  send_raw(make_frame(py_dumps(request)));
  std::string text = recv_frame();
  Json reply = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded()) io_error("tracker ", where_, ": reply is not JSON: ", text.substr(0, 200));
  return reply;
}

Json TrackerClient::summary() {
  Json reply = call(Json::array({static_cast<int>(TrackerCode::kSummary)}));
  if (!reply.is_array() || reply.size() != 2 || reply[0] != 0 || !reply[1].is_object()) {
    io_error("Invalid return value ", reply.dump(), " from tracker ", where_);
  }
  return reply[1];
}

}  // namespace anvil::rpc::tracker
