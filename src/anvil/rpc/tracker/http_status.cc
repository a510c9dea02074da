// HTTP status port of the tracker (see http_status.h).
#include "anvil/rpc/tracker/http_status.h"

#include <array>
#include <chrono>
#include <sstream>

#include "anvil/base/error.h"
#include "anvil/rpc/log.h"

namespace anvil::rpc::tracker {
namespace {

constexpr std::size_t kMaxRequestBytes = 8 * 1024;
constexpr auto kRequestTimeout = std::chrono::seconds(5);

std::string response(int status, const char* reason, const char* content_type, const std::string& body) {
  return str_cat("HTTP/1.0 ", status, " ", reason, "\r\nContent-Type: ", content_type,
                 "\r\nContent-Length: ", body.size(), "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                 body);
}

// One status-port connection: read the head (bounded in size and time), answer, close.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(asio::ip::tcp::socket socket, std::shared_ptr<StatusSource> source)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), source_(std::move(source)) {}

  void start() {
    timer_.expires_after(kRequestTimeout);
    timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
      if (!ec) self->finish();
    });
    read_more();
  }

 private:
  void read_more() {
    socket_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
      if (ec || self->done_) return self->finish();
      self->head_.append(self->chunk_.data(), n);
      if (self->head_.find("\r\n\r\n") != std::string::npos || self->head_.find("\n\n") != std::string::npos) {
        return self->reply(http_status_response(self->head_, *self->source_));
      }
      if (self->head_.size() > kMaxRequestBytes) {
        return self->reply(response(431, "Request Header Fields Too Large", "text/plain", "request too large\n"));
      }
      self->read_more();
    });
  }

  void reply(std::string text) {
    out_ = std::move(text);
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this()](const asio::error_code&, std::size_t) { self->finish(); });
  }

  void finish() {
    if (done_) return;
    done_ = true;
    asio::error_code ec;
    timer_.cancel();
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

  asio::ip::tcp::socket socket_;
  asio::steady_timer timer_;
  std::shared_ptr<StatusSource> source_;
  std::array<char, 2048> chunk_{};
  std::string head_;
  std::string out_;
  bool done_ = false;
};

}  // namespace

std::string http_status_response(const std::string& request_head, const StatusSource& source) {
  std::istringstream in(request_head);
  std::string method, target, version;
  in >> method >> target >> version;
  if (method.empty() || target.empty() || !version.starts_with("HTTP/")) {
    return response(400, "Bad Request", "text/plain", "bad request\n");
  }
  if (method != "GET" && method != "HEAD") {
    return response(405, "Method Not Allowed", "text/plain", "only GET is served\n");
  }
  std::string path = target.substr(0, target.find('?'));
  std::string out;
  if (path == "/" || path == "/index.html") {
    out = response(200, "OK", "text/html; charset=utf-8", source.html());
  } else if (path == "/summary.json") {
    out = response(200, "OK", "application/json", source.summary_json());
  } else if (path == "/metrics") {
    out = response(200, "OK", "text/plain; version=0.0.4", source.metrics());
  } else {
    out = response(404, "Not Found", "text/plain", "not found: try /, /summary.json or /metrics\n");
  }
  if (method == "HEAD") out.erase(out.find("\r\n\r\n") + 4);
  return out;
}

HttpStatusServer::HttpStatusServer(asio::io_context& io, const asio::ip::tcp::endpoint& endpoint,
                                   StatusSource source)
    : acceptor_(io), source_(std::make_shared<StatusSource>(std::move(source))) {
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(asio::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
  accept_next();
}

void HttpStatusServer::accept_next() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) std::make_shared<HttpSession>(std::move(socket), source_)->start();
    accept_next();
  });
}

void HttpStatusServer::close() {
  asio::error_code ec;
  acceptor_.close(ec);
}

}  // namespace anvil::rpc::tracker
