// The reliability suite's actor port cases (ctest label "reliability"):
// garbage and crafted frames cut before the actor layer reads them, bounded
// connections, and a stranger on the TLS port; a game process keeps being
// served through each.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <unistd.h>

#include <atomic>
#include <caf/io/middleman.hpp>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "basp_frames.hpp"
#include "mm/actors/client.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/engine/random.hpp"
#include "raw_http.hpp"
#include "reliability_rounds.hpp"
#include "server_fixture.hpp"
#include "test_certificates.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

// Whether a game process (its own actor system) connects to the actor port and
// gets an answer to a query.
bool game_is_served(std::uint16_t port, const actors::actor_tls& tls) {
  caf::actor_system_config cfg;
  actors::use_network(cfg, tls);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  actors::add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys(cfg);
  using handle = actors::client_interface<generic_profile>::type;
  auto remote = actors::connect_actor<handle>(sys, "127.0.0.1", port, tls.enabled());
  if (!remote) return false;
  caf::scoped_actor self{sys};
  match_request<generic_query> req;
  req.query = generic_query{1'000'000, 1500, {2, 1, 0, 0}};
  req.num_retries = 9;
  bool answered = false;
  self->request(*remote, 10s, actors::find_atom::value, req)
      .receive([&](const match_reply<generic_model>&) { answered = true; }, [&](caf::error&) {});
  // What a careless game node might do: the server's gate drops it (a peer
  // cannot stop the server's client).
  self->send_exit(*remote, caf::exit_reason::kill);
  return answered;
}

}  // namespace

TEST_CASE("garbage on the actor port does not stop the server or its game clients",
          "[reliability][actor-port]") {
  live_server s({{"actor", {{"port", 0}}}}, 4000);
  REQUIRE(s.actor_port() != 0);
  s.wait_until_filled();
  const std::uint64_t before = rss_kib(s.pid());
  rng r(99);
  for (int i = 0; i < 20; ++i) {
    raw_connection c(s.actor_port());
    std::string bytes(64 * 1024, '\0');
    for (auto& b : bytes) b = static_cast<char>(r.below(256));
    c.send(bytes);
    CHECK(c.closed_by_peer(10s));  // the guard cuts a stream that is not BASP
  }
  CHECK(game_is_served(s.actor_port(), {}));
  CHECK(s.running());
  const std::uint64_t after = rss_kib(s.pid());
  INFO("RSS " << before / 1024 << " -> " << after / 1024 << " MiB");
  CHECK(after < before + 64 * 1024);
}

TEST_CASE("on the plain actor port crafted frames are cut before the actor layer reads them",
          "[reliability][actor-port]") {
  live_server s({{"actor", {{"port", 0}, {"max_frame_bytes", 1 << 20}}}}, 4000);
  REQUIRE(s.actor_port() != 0);
  s.wait_until_filled();
  const std::uint64_t before = rss_kib(s.pid());
  // A genuine handshake, so that the frames after it reach the actor layer's
  // reading of messages (without the guard).
  // (An actor system with the network layer has a node id; one without has
  // none, and the guard cuts a handshake naming no node.)
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  cfg.load<caf::io::middleman>();
  caf::actor_system local(cfg);
  REQUIRE(local.node() != caf::none);
  const std::string hello = basp_client_handshake(local.node());
  REQUIRE(!hello.empty());
  const auto frame = [](message_type op, std::int64_t claimed, std::uint64_t dest) {
    return basp_frame(op, "", 0, 0, dest, claimed);
  };
  // Each of these alone crashed CAF 0.17.6 or made it allocate what the header
  // announced (8 x 1 GiB: 2.6 GB of RSS before the guard).
  const std::vector<std::pair<std::string, std::string>> attacks = {
      {"a handshake without a payload", frame(message_type::client_handshake, 0, 0)},
      {"a handshake announcing 1 GiB", frame(message_type::client_handshake, 1 << 30, 0)},
      {"a message before any handshake", frame(message_type::direct_message, 100, 7)},
      {"a second, empty handshake", hello + frame(message_type::client_handshake, 0, 0)},
      {"a message over actor.max_frame_bytes",
       hello + frame(message_type::direct_message, (1 << 20) + 1, 7)},
      {"a message announcing 1 GiB", hello + frame(message_type::direct_message, 1 << 30, 7)},
      {"a server handshake", hello + basp_frame(message_type::server_handshake, "x", 1)}};
  for (int round = 0; round < 2; ++round)
    for (const auto& [what, bytes] : attacks) {
      INFO(what);
      raw_connection c(s.actor_port());
      REQUIRE(c.send(bytes + std::string(4096, '\0')));
      CHECK(c.closed_by_peer(10s));
      REQUIRE(s.running());
    }
  {  // A second connection naming a node id that is connected already is cut:
     // CAF would take both as one peer, so one identity (docs/security.md).
    raw_connection first(s.actor_port());
    REQUIRE(first.send(hello));
    raw_connection second(s.actor_port());
    REQUIRE(second.send(hello));
    CHECK(second.closed_by_peer(10s));
    CHECK_FALSE(first.closed_by_peer(300ms));
  }
  // Junk payloads inside the limits, after a genuine handshake, reach CAF's
  // own reading of messages: it refuses them and the server keeps serving.
  rng r(7);
  for (int i = 0; i < 40; ++i) {
    raw_connection c(s.actor_port());
    std::string bytes = hello;
    for (int k = 0; k < 5; ++k) {
      std::string junk(1 + r.below(2000), '\0');
      for (auto& b : junk) b = static_cast<char>(r.below(256));
      bytes += basp_frame(message_type::direct_message, junk, 0, 0, 1 + r.below(50));
    }
    REQUIRE(c.send(bytes));
    c.closed_by_peer(200ms);  // CAF may keep such a peer: either is fine
    REQUIRE(s.running());
  }
  CHECK(game_is_served(s.actor_port(), {}));
  const std::uint64_t after = rss_kib(s.pid());
  INFO("RSS " << before / 1024 << " -> " << after / 1024 << " MiB");
  // Without the guard one of these frames alone takes 1 GiB; 64 MiB leaves
  // room for the sanitizer's quarantine of freed memory.
  CHECK(after < before + 64 * 1024);
  const std::string metrics = s.get("/metrics", view_token)->body;
  CHECK(metrics.find("mm_actor_port_connections_total{outcome=\"bad_frame\"} " +
                     std::to_string(2 * attacks.size())) != std::string::npos);
  CHECK(metrics.find("mm_actor_port_connections_total{outcome=\"node_taken\"} 0") ==
        std::string::npos);
  // game_is_served ends with a kill exit sent to the server's client: dropped,
  // so the next game node is served too.
  CHECK(metrics.find("mm_actor_port_dropped_messages_total 1") != std::string::npos);
  CHECK(game_is_served(s.actor_port(), {}));
}

// One sample of the actor port's figures in /metrics, e.g. "connections_open"
// or "connections_total{outcome=\"accepted\"}"; -1 when absent.
std::int64_t actor_port_figure(const live_server& s, const std::string& name) {
  const std::string metrics = s.get("/metrics", view_token)->body;
  const std::string key = "\nmm_actor_port_" + name + " ";
  const auto at = metrics.find(key);
  return at == std::string::npos ? -1 : std::atoll(metrics.c_str() + at + key.size());
}

// Waits until the server has seen the end of every connection to its actor
// port (closes reach it asynchronously); false after 10 s.
bool actor_port_idle(const live_server& s) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (actor_port_figure(s, "connections_open") != 0)
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

TEST_CASE("the plain actor port holds a bounded number of connections and drops silent ones",
          "[reliability][actor-port]") {
  const auto server_greets = [](raw_connection& c) {
    return !c.receive(5s, [](const std::string& got) { return !got.empty(); }).empty();
  };
  SECTION("at the cap a new connection is closed at once") {
    live_server s({{"actor", {{"port", 0}, {"max_connections", 8}}}}, 4000);
    REQUIRE(s.actor_port() != 0);
    std::vector<raw_connection> silent;
    for (int i = 0; i < 8; ++i) silent.emplace_back(s.actor_port());
    for (auto& c : silent) REQUIRE(server_greets(c));  // accepted: its handshake comes at once
    raw_connection extra(s.actor_port());
    CHECK_FALSE(server_greets(extra));
    CHECK(extra.closed_by_peer(5s));
    CHECK(actor_port_figure(s, "connections_total{outcome=\"refused_full\"}") == 1);
    silent.clear();
    REQUIRE(actor_port_idle(s));
    CHECK(game_is_served(s.actor_port(), {}));
  }
  SECTION("silent connections past the handshake timeout give way to a game node") {
    live_server s({{"actor", {{"port", 0}, {"max_connections", 8}, {"handshake_timeout", "1s"}}}},
                  4000);
    REQUIRE(s.actor_port() != 0);
    std::vector<raw_connection> silent;
    for (int i = 0; i < 8; ++i) silent.emplace_back(s.actor_port());
    for (auto& c : silent) REQUIRE(server_greets(c));
    // The server closes late connections when the next one arrives: let the
    // timeout pass (a wait on the behaviour under test, not a synchronisation).
    std::this_thread::sleep_for(1200ms);
    CHECK(game_is_served(s.actor_port(), {}));
    for (auto& c : silent) CHECK(c.closed_by_peer(5s));
    CHECK(actor_port_figure(s, "connections_total{outcome=\"slow_handshake\"}") == 8);
  }
}

TEST_CASE("on the TLS actor port a stranger's bytes never reach the actor layer",
          "[reliability][actor-port][tls]") {
  certificates certs;
  const actors::actor_tls tls = certs.node("server");
  live_server s(
      json{{"actor",
            {{"port", 0},
             {"tls", {{"certificate", tls.certificate}, {"key", tls.key}, {"ca", tls.ca}}}}}},
      4000);
  REQUIRE(s.actor_port() != 0);
  s.wait_until_filled();
  const std::uint64_t before = rss_kib(s.pid());
  // Frames that CAF 0.17.6 mishandles (a handshake without a payload crashes
  // it; a large announced payload is allocated at once): on the plain port the
  // guard cuts them, here they are not TLS, so they end at the TLS handshake.
  for (int i = 0; i < 8; ++i) {
    raw_connection c(s.actor_port());
    const std::string frame =
        i % 2 ? basp_frame(message_type::client_handshake, std::string(4096, 'x'), 0, 0, 0, 1 << 30)
              : basp_frame(message_type::client_handshake, "");
    c.send(frame);
    CHECK(c.closed_by_peer(10s));
  }
  CHECK(s.running());
  const std::uint64_t after = rss_kib(s.pid());
  INFO("RSS " << before / 1024 << " -> " << after / 1024 << " MiB");
  CHECK(after < before + 32 * 1024);
  CHECK(game_is_served(s.actor_port(), certs.node("game")));
}
