#include "mm/actors/port_guard.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <caf/atom.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/doorman_impl.hpp>
#include <caf/io/network/native_socket.hpp>
#include <caf/io/network/scribe_impl.hpp>
#include <caf/send.hpp>
#include <chrono>
#include <mutex>
#include <type_traits>
#include <vector>

#include "mm/actors/basp_frame_check.hpp"
#include "mm/actors/tls_connection.hpp"
#include "mm/engine/log.hpp"

namespace mm::actors {

namespace {

using caf::io::network::default_multiplexer;
using caf::io::network::native_socket;
using clock_type = std::chrono::steady_clock;

class greeting_connection;

// What every connection of one port shares.
struct guard_context {
  port_limits limits;
  bool tls = false;  // connections speak TLS (tls_connection.hpp)
  // Who each connection is (identity.hpp); none: the port does not tell.
  std::shared_ptr<identity_book> identities;
  std::shared_ptr<port_guard_stats> stats = std::make_shared<port_guard_stats>();
  // Connections still waiting for their whole handshake. Not owned: each
  // takes itself out once greeted or detached from the broker (which CAF
  // does before it lets go of a connection).
  std::mutex greeting_mutex;
  std::vector<greeting_connection*> greeting;
  std::mutex log_mutex;
  clock_type::time_point last_warning{};
  std::uint64_t unlogged = 0;

  void forget(greeting_connection* c) {
    std::lock_guard<std::mutex> lock(greeting_mutex);
    greeting.erase(std::remove(greeting.begin(), greeting.end(), c), greeting.end());
  }

  bool still_greeting(greeting_connection* c) {
    std::lock_guard<std::mutex> lock(greeting_mutex);
    return std::find(greeting.begin(), greeting.end(), c) != greeting.end();
  }

  // Refusals are logged at most once a second, so that a flood of bad
  // connections cannot flood the log; the counters count every one.
  void warn(const std::string& what) {
    std::lock_guard<std::mutex> lock(log_mutex);
    const auto now = clock_type::now();
    if (now - last_warning < std::chrono::seconds(1) && last_warning != clock_type::time_point{}) {
      ++unlogged;
      return;
    }
    last_warning = now;
    std::string line = "actor port: " + what;
    if (unlogged > 0) line += " (and " + std::to_string(unlogged) + " more not logged)";
    unlogged = 0;
    log(log_level::warning, "actor_port", line);
  }
};

// What the acceptor needs of a connection still waiting for its handshake.
class greeting_connection {
 public:
  virtual ~greeting_connection() = default;
  virtual bool late(clock_type::time_point now) const = 0;
  virtual void cut(caf::execution_unit* unit) = 0;
};

// One connection: CAF's own plain one (or a TLS one), with every frame checked
// between CAF's read and CAF's use of it. CAF reads a frame's 32-byte header,
// hands it to consume(), and only then sizes its buffer for the payload: a
// refused header never gets that far. Over TLS, consume() sees the bytes
// OpenSSL decrypted, so the checks are the same.
template <class Connection>
class guarded final : public Connection, public greeting_connection {
 public:
  template <class... Transport>
  guarded(std::shared_ptr<guard_context> ctx, default_multiplexer& mpx, native_socket fd,
          Transport&&... transport)
      : Connection(mpx, fd, std::forward<Transport>(transport)...),
        ctx_(std::move(ctx)),
        check_(ctx_->limits.max_frame_bytes),
        greet_by_(clock_type::now() + ctx_->limits.handshake_timeout) {
    ++ctx_->stats->open;
    std::lock_guard<std::mutex> lock(ctx_->greeting_mutex);
    ctx_->greeting.push_back(this);
  }

  ~guarded() override {
    if (!counted_out_) --ctx_->stats->open;  // never attached to the broker
    ctx_->forget(this);
    unbind();
  }

  bool consume(caf::execution_unit* unit, const void* data, std::size_t n) override {
    const bool was_greeted = check_.greeted();
    if (const char* why = check_.feed(static_cast<const unsigned char*>(data), n)) {
      ++ctx_->stats->cut_bad_frame;
      ctx_->warn(std::string("connection cut: ") + why);
      cut(unit);
      return false;
    }
    const bool greeted_now = !was_greeted && check_.greeted();
    if (greeted_now) ctx_->forget(this);
    const bool more = Connection::consume(unit, data, n);
    // CAF handled the handshake within that call (on this thread, before
    // any later frame): its routing table now names this connection's node.
    if (greeted_now && more && !bind_identity()) {
      ++ctx_->stats->cut_node_taken;
      ctx_->warn("connection cut: its node id is connected already (or is this server's)");
      cut(unit);
      return false;
    }
    return more;
  }

  bool late(clock_type::time_point now) const override {
    return !check_.greeted() && now >= greet_by_;
  }

  // Ends the connection as a read error would: the broker is told and forgets
  // the connection. The socket is shut at once (it is closed when CAF lets go
  // of the connection), so the peer sees the end now.
  void cut(caf::execution_unit* unit) override {
    if (this->detached()) return;
    ::shutdown(this->stream_.fd(), SHUT_RDWR);
    this->io_failure(unit, caf::io::network::operation::read);
  }

 protected:
  void detach_from(caf::io::abstract_broker* broker) override {
    unbind();
    Connection::detach_from(broker);
    if (!counted_out_) --ctx_->stats->open;
    counted_out_ = true;
    ctx_->forget(this);
  }

 private:
  // Binds the node id the peer's handshake announced to this connection's
  // identity (its certificate's, over TLS; else the anonymous one until a
  // hello). False when the node cannot be told apart: no node, this
  // server's own, or one another connection holds (CAF would route both
  // connections' messages as one peer's).
  bool bind_identity() {
    if (!ctx_->identities) return true;
    auto* basp = dynamic_cast<caf::io::basp_broker*>(this->parent());
    if (basp == nullptr) return false;
    const caf::node_id node = basp->instance.tbl().lookup_direct(this->hdl());
    if (node == caf::none || node == basp->this_node()) return false;
    caller_identity who = ctx_->identities->anonymous();
    if constexpr (std::is_same_v<Connection, tls_connection>)
      who = ctx_->identities->by_common_name(this->peer_common_name());
    if (!ctx_->identities->bind(node, std::move(who), this)) return false;
    node_ = node;
    return true;
  }

  void unbind() {
    if (ctx_->identities && node_ != caf::none) ctx_->identities->unbind(node_, this);
    node_ = caf::node_id{};
  }

  std::shared_ptr<guard_context> ctx_;
  basp_frame_check check_;
  clock_type::time_point greet_by_;
  bool counted_out_ = false;  // no longer counted as open
  caf::node_id node_;         // bound in the identity book while set
};

// The port's acceptor: CAF's own, making guarded connections, and refusing
// connections past the cap.
class guarded_doorman final : public caf::io::network::doorman_impl {
 public:
  guarded_doorman(default_multiplexer& mpx, native_socket fd, std::shared_ptr<guard_context> ctx)
      : doorman_impl(mpx, fd), ctx_(std::move(ctx)) {}

  bool new_connection() override {
    if (detached()) return false;
    auto& mpx = acceptor_.backend();
    const native_socket fd = acceptor_.accepted_socket();
    close_late_ones(&mpx);
    if (ctx_->stats->open.load() >= ctx_->limits.max_connections) {
      ++ctx_->stats->refused_full;
      caf::io::network::close_socket(fd);
      ctx_->warn("connection refused: actor.max_connections (" +
                 std::to_string(ctx_->limits.max_connections) + ") reached");
      return true;
    }
    caf::io::network::keepalive(fd, true);  // as CAF's own connections
    auto connection = make_connection(mpx, fd);
    if (!connection) return true;
    ++ctx_->stats->accepted;
    const auto hdl = connection->hdl();
    parent()->add_scribe(std::move(connection));
    return doorman::new_connection(&mpx, hdl);
  }

 private:
  caf::io::scribe_ptr make_connection(default_multiplexer& mpx, native_socket fd) {
    if (!ctx_->tls) return caf::make_counted<guarded<caf::io::network::scribe_impl>>(ctx_, mpx, fd);
    caf::io::network::nonblocking(fd, true);
    auto session = caf::openssl::make_session(parent()->system(), fd, true);
    if (!session) {  // OpenSSL could not start the handshake on this socket
      caf::io::network::close_socket(fd);
      ctx_->warn("connection closed: no TLS session could start");
      return nullptr;
    }
    return caf::make_counted<guarded<tls_connection>>(ctx_, mpx, fd, std::move(session));
  }

  // Cuts the connections whose handshake is late. A connection leaves the
  // list before it is destroyed, and only this thread (CAF's network thread)
  // detaches them: one still listed right before its cut is alive.
  void close_late_ones(caf::execution_unit* unit) {
    const auto now = clock_type::now();
    std::vector<greeting_connection*> late;
    {
      std::lock_guard<std::mutex> lock(ctx_->greeting_mutex);
      for (greeting_connection* c : ctx_->greeting)
        if (c->late(now)) late.push_back(c);
    }
    for (greeting_connection* c : late) {  // cut() takes each out of the list
      if (!ctx_->still_greeting(c)) continue;
      ++ctx_->stats->cut_slow_handshake;
      ctx_->warn("connection cut: no handshake within actor.handshake_timeout");
      c->cut(unit);
    }
  }

  std::shared_ptr<guard_context> ctx_;
};

}  // namespace

caf::expected<guarded_port> publish_guarded(caf::actor_system& sys, caf::strong_actor_ptr whom,
                                            std::set<std::string> sigs, std::uint16_t port,
                                            const std::string& host, const port_limits& limits,
                                            bool tls, std::shared_ptr<identity_book> identities) {
  if (!whom) return caf::make_error(caf::sec::cannot_publish_invalid_actor);
  auto* mpx = dynamic_cast<default_multiplexer*>(&sys.middleman().backend());
  if (mpx == nullptr)
    return caf::make_error(caf::sec::runtime_error,
                           "the guarded actor port needs CAF's default network backend");
  auto fd = caf::io::network::new_tcp_acceptor_impl(port, host.c_str(), true);
  if (!fd) return std::move(fd.error());
  auto ctx = std::make_shared<guard_context>();
  ctx->limits = limits;
  ctx->tls = tls;
  ctx->identities = std::move(identities);
  auto doorman = caf::make_counted<guarded_doorman>(*mpx, *fd, ctx);
  const std::uint16_t bound = doorman->port();
  // As CAF's publish does: the BASP broker adopts the acceptor and answers
  // its connections with `whom` and its interface.
  auto broker = sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  caf::anon_send(broker, caf::publish_atom::value, caf::io::doorman_ptr{std::move(doorman)}, bound,
                 std::move(whom), std::move(sigs));
  return guarded_port{bound, ctx->stats};
}

}  // namespace mm::actors
