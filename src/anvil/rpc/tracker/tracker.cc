// The tracker server: accepts connections, feeds their frames to TrackerState and routes the
// replies back (see tracker.h). Everything runs on the io_context's one thread.
#include "anvil/rpc/tracker/tracker.h"

#include <random>
#include <unordered_map>

#include "anvil/base/error.h"
#include "anvil/rpc/address.h"
#include "anvil/rpc/asio_listen.h"
#include "anvil/rpc/log.h"
#include "anvil/rpc/tracker/http_status.h"
#include "anvil/rpc/tracker/status_render.h"

namespace anvil::rpc::tracker {
namespace {

// TVM's random_key("tracker"): "tracker:0.<digits>".
std::string random_stop_key() {
  std::random_device device;
  std::mt19937_64 gen(device());
  return str_cat("tracker:", std::uniform_real_distribution<double>(0.0, 1.0)(gen));
}

std::string peer_ip_of(const asio::ip::tcp::socket& socket) {
  asio::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "";
  auto address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string();
  }
  return address.to_string();
}

}  // namespace

struct Tracker::Impl : ConnectionOwner {
  explicit Impl(TrackerOptions opts)
      : options(std::move(opts)),
        acceptor(io),
        signals(io),
        stop_timer(io),
        state(options.stop_key, options.state),
        started(std::chrono::steady_clock::now()) {}

  void bind() {
    auto address = resolve_host(io, options.host, "tracker");
    bound_port = listen_on_first_free_port(acceptor, address, options.host, options.port, options.port_end, "tracker");
    log_info("bind to ", format_host_port(options.host, bound_port));
    if (options.http_port) {
      asio::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(*options.http_port));
      try {
        http = std::make_unique<HttpStatusServer>(io, endpoint, status_source());
      } catch (const asio::system_error& err) {
        io_error("tracker: cannot serve the status page on ", options.host, ":", *options.http_port, ": ",
                 err.what());
      }
      log_info("status page on http://", format_host_port(options.host, http->port()), "/");
    }
    accept_next();
    if (options.handle_signals) {
      signals.add(SIGINT);
      signals.add(SIGTERM);
      signals.async_wait([this](const asio::error_code& ec, int signal) {
        if (ec) return;
        log_info("signal ", signal, ": stopping");
        begin_stop();
      });
    }
  }

  StatusSource status_source() {
    return StatusSource{[this] { return render_status_html(state.summary(), bound_port); },
                        [this] { return py_dumps(state.summary()); },
                        [this] { return render_metrics(state.summary(), metrics()); }};
  }

  MetricsSnapshot metrics() const {
    MetricsSnapshot m;
    m.state = state.counters();
    m.connections_accepted = accepted;
    m.connections_open = connections.size();
    m.closes_by_reason = closes_by_reason;
    m.uptime_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return m;
  }

  void accept_next() {
    acceptor.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
      if (stopping || ec == asio::error::operation_aborted) return;
      if (!ec) on_accept(std::move(socket));
      accept_next();
    });
  }

  void on_accept(asio::ip::tcp::socket socket) {
    ++accepted;
    std::string peer = peer_ip_of(socket);
    if (connections.size() >= options.max_connections) {
      ++closes_by_reason["too_many_connections"];
      log_warning("refusing connection from ", peer, ": ", connections.size(), " connections open (limit)");
      asio::error_code ec;
      socket.close(ec);
      return;
    }
    ConnId id = next_id++;
    auto conn = std::make_shared<Connection>(std::move(socket), id, peer, *this, options.connection);
    connections.emplace(id, conn);
    state.open(id, peer);
    conn->start();
  }

  void on_frame(ConnId id, std::string_view payload) override {
    HandleResult result = state.handle(id, payload);
    for (auto& out : result.out) {
      auto it = connections.find(out.conn);
      if (it != connections.end()) it->second->send(make_frame(out.text));
    }
    if (result.close_sender) {
      auto it = connections.find(id);
      if (it != connections.end()) {
        it->second->close("malformed", str_cat("Error handling message from ", it->second->peer_ip(), " (conn ",
                                               id, "): ", result.close_reason, "; closing connection"));
      }
    }
    if (result.stop) {
      log_info("STOP received: stopping");
      begin_stop();
    }
  }

  void on_closed(ConnId id, std::string_view category) override {
    ++closes_by_reason[std::string(category)];
    state.close(id);
    connections.erase(id);
  }

  void begin_stop() {
    if (stopping) return;
    stopping = true;
    asio::error_code ec;
    acceptor.close(ec);
    signals.cancel(ec);
    if (http) http->close();
    // Copy: closing a connection erases it from the map.
    std::vector<std::shared_ptr<Connection>> open;
    for (auto& [id, conn] : connections) open.push_back(conn);
    for (auto& conn : open) conn->close_after_flush();
    stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    wait_for_flush();
  }

  // Replies (STOP's "0") get up to a second to leave before the loop ends.
  void wait_for_flush() {
    if (connections.empty() || std::chrono::steady_clock::now() >= stop_deadline) {
      io.stop();
      return;
    }
    stop_timer.expires_after(std::chrono::milliseconds(10));
    stop_timer.async_wait([this](const asio::error_code&) { wait_for_flush(); });
  }

  TrackerOptions options;
  asio::io_context io{1};
  asio::ip::tcp::acceptor acceptor;
  asio::signal_set signals;
  asio::steady_timer stop_timer;
  std::unique_ptr<HttpStatusServer> http;
  TrackerState state;
  std::unordered_map<ConnId, std::shared_ptr<Connection>> connections;
  std::map<std::string, uint64_t> closes_by_reason;
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point stop_deadline;
  uint64_t accepted = 0;
  ConnId next_id = 1;
  int bound_port = 0;
  bool stopping = false;
};

Tracker::Tracker(TrackerOptions options) {
  if (options.stop_key.empty()) options.stop_key = random_stop_key();
  impl_ = std::make_unique<Impl>(std::move(options));
  impl_->bind();
}

Tracker::~Tracker() = default;

int Tracker::port() const { return impl_->bound_port; }
int Tracker::http_port() const { return impl_->http ? impl_->http->port() : 0; }
const std::string& Tracker::stop_key() const { return impl_->options.stop_key; }

void Tracker::run() {
  impl_->io.run();
  // Drop what is left (connections that did not flush in time) on this thread.
  for (auto& [id, conn] : std::unordered_map<ConnId, std::shared_ptr<Connection>>(impl_->connections)) {
    conn->close("closed", "");
  }
}

void Tracker::stop() {
  asio::post(impl_->io, [impl = impl_.get()] { impl->begin_stop(); });
}

}  // namespace anvil::rpc::tracker
