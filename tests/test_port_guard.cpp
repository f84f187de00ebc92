// The plain actor port's guard with real CAF network layers in this process:
// one actor system publishes an echo actor behind the guard, another connects
// to it as a game node would, and raw sockets play the attacker.
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "basp_frames.hpp"
#include "mm/actors/remote.hpp"
#include "raw_http.hpp"
#include "test_certificates.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

using echo_actor = caf::typed_actor<caf::replies_to<std::int32_t>::with<std::int32_t>>;

echo_actor::behavior_type echo() {
  return {[](std::int32_t x) { return x; }};
}

caf::actor_system_config& quiet(caf::actor_system_config& cfg) {
  cfg.load<caf::io::middleman>();
  cfg.set("logger.verbosity", caf::atom("quiet"));
  return cfg;
}

caf::actor_system_config& quiet(caf::actor_system_config& cfg, const actors::actor_tls& tls) {
  actors::use_network(cfg, tls);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  return cfg;
}

// A server with an echo actor published as matchmakerd publishes its client
// (behind the gate and the guard; over mutual TLS with `tls`).
struct guarded_server {
  explicit guarded_server(const actors::port_limits& limits, const actors::actor_tls& tls = {})
      : sys(quiet(cfg, tls)) {
    whom = sys.spawn(echo);
    auto published = actors::publish_actor(sys, whom, 0, "127.0.0.1", tls.enabled(), limits);
    REQUIRE(published);
    port = (*published)->port();
    published_port = std::move(*published);
  }
  ~guarded_server() {
    published_port.reset();
    caf::anon_send_exit(whom, caf::exit_reason::user_shutdown);
  }
  actors::port_guard_counters counters() const { return published_port->counters(); }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  echo_actor whom;
  std::uint16_t port = 0;
  std::unique_ptr<actors::published_port> published_port;
};

// A game node in its own actor system: connects, asks once, answers whether
// the echo came back.
bool game_node_is_served(std::uint16_t port, const actors::actor_tls& tls = {}) {
  caf::actor_system_config cfg;
  caf::actor_system sys(quiet(cfg, tls));
  auto remote = actors::connect_actor<echo_actor>(sys, "127.0.0.1", port, tls.enabled());
  if (!remote) return false;
  caf::scoped_actor self{sys};
  bool answered = false;
  self->request(*remote, 10s, std::int32_t{41})
      .receive([&](std::int32_t x) { answered = x == 41; }, [](caf::error&) {});
  return answered;
}

// Whether the server accepted the connection: it sends its handshake at once.
bool accepted(raw_connection& c) {
  return !c.receive(5s, [](const std::string& got) { return !got.empty(); }).empty();
}

// `n` connections that say nothing, each accepted.
std::vector<raw_connection> silent_connections(std::uint16_t port, int n) {
  std::vector<raw_connection> held;
  for (int i = 0; i < n; ++i) {
    held.emplace_back(port);
    REQUIRE(accepted(held.back()));
  }
  return held;
}

// A peer with a certificate of the deployment, speaking raw bytes inside TLS:
// the attacker who holds a good certificate.
class tls_raw_connection {
 public:
  tls_raw_connection(std::uint16_t port, const actors::actor_tls& tls) : tcp_(port) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    REQUIRE(ctx_ != nullptr);
    REQUIRE(SSL_CTX_use_certificate_chain_file(ctx_, tls.certificate.c_str()) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey_file(ctx_, tls.key.c_str(), SSL_FILETYPE_PEM) == 1);
    REQUIRE(SSL_CTX_load_verify_locations(ctx_, tls.ca.c_str(), nullptr) == 1);
    timeval five{5, 0};
    ::setsockopt(tcp_.fd(), SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, tcp_.fd());
    connected_ = SSL_connect(ssl_) == 1;
  }
  ~tls_raw_connection() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }
  bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    return SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) ==
           static_cast<int>(bytes.size());
  }
  // Reads (and drops) what the server sends until it ends the connection:
  // true if it did within 5 s, false if it kept it open.
  bool closed_by_peer() {
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < deadline) {
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n > 0) continue;
      const int why = SSL_get_error(ssl_, n);
      if (why == SSL_ERROR_ZERO_RETURN || why == SSL_ERROR_SSL) return true;
      if (why == SSL_ERROR_SYSCALL) return errno != EAGAIN && errno != EWOULDBLOCK;
    }
    return false;
  }

 private:
  raw_connection tcp_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  bool connected_ = false;
};

}  // namespace

TEST_CASE("a game node is served through the guarded port", "[actor-port]") {
  guarded_server s({});
  CHECK(game_node_is_served(s.port));
  CHECK(game_node_is_served(s.port));
  const auto c = s.counters();
  CHECK(c.accepted == 2);
  CHECK(c.cut_bad_frame == 0);
}

TEST_CASE("the guard cuts a connection at a bad frame and the port keeps serving", "[actor-port]") {
  actors::port_limits limits;
  limits.max_frame_bytes = 1 << 20;
  guarded_server s(limits);
  caf::actor_system_config cfg;
  caf::actor_system local(quiet(cfg));
  const std::string hello = basp_client_handshake(local.node());
  const std::vector<std::string> attacks = {
      basp_frame(message_type::client_handshake, ""),  // crashed CAF 0.17.6
      hello + basp_frame(message_type::direct_message, "", 0, 0, 7, (1 << 20) + 1),
      hello + basp_frame(message_type::direct_message, "", 0, 0, 7, 0xffffffffu),
      basp_frame(message_type::direct_message, "x", 0, 0, 7)};
  for (const auto& bytes : attacks) {
    raw_connection c(s.port);
    REQUIRE(c.send(bytes + std::string(100, '\0')));
    CHECK(c.closed_by_peer(5s));
  }
  CHECK(game_node_is_served(s.port));
  const auto counters = s.counters();
  CHECK(counters.cut_bad_frame == attacks.size());
  CHECK(counters.accepted == attacks.size() + 1);
}

TEST_CASE("the guard holds at most max_connections, and a silent one past its time gives way",
          "[actor-port]") {
  actors::port_limits limits;
  limits.max_connections = 3;
  SECTION("silent connections within their time: a fourth is refused") {
    limits.handshake_timeout = std::chrono::hours(1);
    guarded_server s(limits);
    std::vector<raw_connection> held = silent_connections(s.port, 3);
    raw_connection fourth(s.port);
    CHECK_FALSE(accepted(fourth));
    CHECK(fourth.closed_by_peer(5s));
    CHECK(s.counters().refused_full == 1);
    CHECK(s.counters().open == 3);
    held.clear();  // they leave: room again, once the server has seen them go
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (s.counters().open > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    CHECK(game_node_is_served(s.port));
  }
  SECTION("silent connections past their time are cut when the next one arrives") {
    limits.handshake_timeout = std::chrono::milliseconds(0);
    guarded_server s(limits);
    // (Not silent_connections(): each is cut as the next one arrives, maybe
    // before the server's handshake to it went out.)
    std::vector<raw_connection> held;
    for (int i = 0; i < 3; ++i) held.emplace_back(s.port);
    raw_connection fourth(s.port);
    CHECK(accepted(fourth));
    for (auto& c : held) CHECK(c.closed_by_peer(5s));
    CHECK(s.counters().cut_slow_handshake == 3);
    CHECK(s.counters().refused_full == 0);
  }
}

TEST_CASE("a game node cannot stop the published actor: its exit messages are dropped",
          "[actor-port]") {
  guarded_server s({});
  for (auto reason : {caf::exit_reason::user_shutdown, caf::exit_reason::kill}) {
    caf::actor_system_config cfg;
    caf::actor_system game(quiet(cfg));
    auto remote = game.middleman().remote_actor<echo_actor>("127.0.0.1", s.port);
    REQUIRE(remote);
    caf::scoped_actor self{game};
    self->send_exit(*remote, reason);
    self->send(caf::actor_cast<caf::actor>(*remote),
               caf::down_msg{self->address(), caf::exit_reason::kill});
    // A request after them on the same connection is answered: they were
    // handled (dropped) first.
    bool answered = false;
    self->request(*remote, 10s, std::int32_t{5})
        .receive([&](std::int32_t x) { answered = x == 5; }, [](caf::error&) {});
    CHECK(answered);
  }
  CHECK(game_node_is_served(s.port));
  CHECK(s.counters().dropped_runtime_messages == 4);
}

TEST_CASE("over mutual TLS the guard cuts a certified peer's bad frame and keeps serving",
          "[actor-port][tls]") {
  test::certificates certs;
  actors::port_limits limits;
  limits.max_frame_bytes = 1 << 20;
  guarded_server s(limits, certs.node("server"));
  CHECK(game_node_is_served(s.port, certs.node("game")));
  caf::actor_system_config cfg;
  caf::actor_system local(quiet(cfg));
  const std::string hello = basp_client_handshake(local.node());
  const std::vector<std::string> attacks = {
      basp_frame(message_type::client_handshake, ""),
      hello + basp_frame(message_type::direct_message, "", 0, 0, 7, 0xffffffffu)};
  for (const auto& bytes : attacks) {
    tls_raw_connection c(s.port, certs.node("game"));
    REQUIRE(c.connected());
    REQUIRE(c.send(bytes + std::string(100, '\0')));
    CHECK(c.closed_by_peer());
  }
  CHECK(game_node_is_served(s.port, certs.node("game")));
  const auto counters = s.counters();
  CHECK(counters.cut_bad_frame == attacks.size());
  CHECK(counters.accepted == attacks.size() + 2);
}

TEST_CASE("over mutual TLS the guard holds at most max_connections", "[actor-port][tls]") {
  test::certificates certs;
  actors::port_limits limits;
  limits.max_connections = 2;
  limits.handshake_timeout = std::chrono::hours(1);
  guarded_server s(limits, certs.node("server"));
  const auto open_becomes = [&](std::uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (s.counters().open != n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    return s.counters().open == n;
  };
  std::vector<raw_connection> held;  // not even a TLS hello
  for (int i = 0; i < 2; ++i) held.emplace_back(s.port);
  REQUIRE(open_becomes(2));
  CHECK_FALSE(game_node_is_served(s.port, certs.node("game")));
  CHECK(s.counters().refused_full == 1);
  held.clear();
  REQUIRE(open_becomes(0));
  CHECK(game_node_is_served(s.port, certs.node("game")));
}

TEST_CASE("identities: a reload's tokens reach the port's connections that said hello",
          "[port][auth]") {
  using actors::role;
  actors::identity_book book({{"old-secret-0123456789", "game-a", role::test},
                              {"ops-secret-0123456789", "ops", role::admin}},
                             {}, role::view);
  const auto node = [](std::uint32_t pid) {
    return *caf::make_node_id(pid, "0102030405060708090a0b0c0d0e0f1011121314");
  };
  const int conn_a = 0, conn_b = 0, conn_c = 0;
  REQUIRE(book.bind(node(1), book.anonymous(), &conn_a));
  REQUIRE(book.bind(node(2), book.anonymous(), &conn_b));
  REQUIRE(book.bind(node(3), book.anonymous(), &conn_c));
  CHECK(book.present(node(1), "old-secret-0123456789"));
  CHECK(book.present(node(2), "ops-secret-0123456789"));
  CHECK_FALSE(book.present(node(3), "not-a-secret-0123456"));
  CHECK_FALSE(book.present(node(4), "old-secret-0123456789"));  // no connection
  CHECK(book.of(node(1)).name == "game-a");
  CHECK(book.of(node(3)).granted == role::view);  // anonymous

  // game-a's secret is rotated, ops becomes a viewer.
  book.replace_tokens({{"new-secret-0123456789", "game-a", role::test},
                       {"ops-secret-0123456789", "ops", role::view}});
  CHECK(book.of(node(1)).granted == role::none);  // its token is gone: refused everything
  CHECK(book.of(node(1)).name == "game-a");
  CHECK(book.of(node(2)).granted == role::view);  // its token's new role
  CHECK(book.of(node(3)).granted == role::view);  // not by token: untouched
  CHECK_FALSE(book.by_token("old-secret-0123456789"));
  CHECK(book.present(node(1), "new-secret-0123456789"));  // hello again
  CHECK(book.of(node(1)).granted == role::test);
  const auto names = book.token_identities();
  REQUIRE(names.size() == 2);
  CHECK(names[1].name == "ops");
}
