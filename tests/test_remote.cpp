// Two processes on 127.0.0.1: mm_node serves an instance set through CAF's
// network layer; this test process finds opponents through it with the same
// typed interface a local game actor uses.
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include "mm/actors/client.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/testing/child_process.hpp"
#include "mm/testing/temp_dir.hpp"
#include "test_certificates.hpp"

using namespace mm;
using namespace mm::actors;

using test::certificates;
using test::child_process;

namespace {
// This test process as a game server: an actor system with CAF's network
// layer, connected to a published matchmaker client.
struct game_process {
  using handle = client_interface<generic_profile>::type;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  handle remote;

  explicit game_process(std::uint16_t port, const actor_tls& tls = {}) {
    auto r = connect(port, tls);
    REQUIRE(r);
    remote = *r;
  }
  // No REQUIRE: for the connections that must fail.
  struct unconnected {};
  explicit game_process(unconnected) {}

  caf::expected<handle> connect(std::uint16_t port, const actor_tls& tls) {
    use_network(cfg, tls);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    add_message_types<generic_profile>(cfg, "generic");
    sys = std::make_unique<caf::actor_system>(cfg);
    return connect_actor<handle>(*sys, "127.0.0.1", port, tls.enabled());
  }
};

// Queries through `game` until one is a Success (the other process's scan
// fills its caches meanwhile); false when none is within ~10 s.
bool finds_an_opponent(game_process& game) {
  caf::scoped_actor self{*game.sys};
  for (int attempt = 0; attempt < 200; ++attempt) {
    match_request<generic_query> req;
    req.query = generic_query{1'000'000, 1500, {2, 1, 0, 0}};
    req.num_retries = 9;
    bool found = false;
    self->request(game.remote, std::chrono::seconds(10), find_atom::value, req)
        .receive(
            [&](const match_reply<generic_model>& r) {
              found = r.type == match_type::success;
              if (found) CHECK(r.model.attributes[0] == 2);
            },
            [&](caf::error& e) { FAIL(game.sys->render(e)); });
    if (found) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the scan runs in another process
  }
  return false;
}

}  // namespace

TEST_CASE("a game process finds opponents in a matchmaker process over loopback", "[remote]") {
  test::temp_dir dir;
  child_process node({MM_NODE_BINARY, "--db", dir.file("node.db"), "--players", "20000",
                      "--instances", "2", "--port", "0"});
  const std::string line = node.read_line();
  REQUIRE(line.rfind("listening on 127.0.0.1:", 0) == 0);
  game_process game(test::port_of(line));
  auto& sys = *game.sys;
  caf::scoped_actor self{sys};

  int successes = 0;
  for (int i = 0; i < 20; ++i) {
    match_request<generic_query> req;
    req.query = generic_query{1'000'000 + static_cast<player_id>(i), 1500, {0, 1, 2, 3}};
    self->request(game.remote, std::chrono::seconds(10), find_atom::value, req)
        .receive(
            [&](const match_reply<generic_model>& r) {
              if (r.type == match_type::success && r.has_model) {
                ++successes;
                CHECK(r.model.attributes[0] == 0);  // region is a hard rule
                CHECK(std::abs(r.model.mmr - 1500) <= 100);
              }
            },
            [&](caf::error& e) { FAIL(sys.render(e)); });
  }
  CHECK(successes == 20);

  // An update sent over the network is applied by the instance that owns the id,
  // before a query sent after it (messages from one sender stay in order).
  self->send(game.remote, update_atom::value,
             player_update<generic_model>{77'777, {generic_model(77'777, 42'000, {3, 0, 0, 0})}});
  match_request<generic_query> far;
  far.query = generic_query{1, 42'000, {3, 1, 0, 0}};  // another guild (must differ)
  self->request(game.remote, std::chrono::seconds(10), find_atom::value, far)
      .receive([&](const match_reply<generic_model>& r) { CHECK(r.best_candidate_id == 77'777); },
               [&](caf::error& e) { FAIL(sys.render(e)); });
  // A batch of updates crosses the port as one message, each to its owner.
  self->send(game.remote, update_atom::value,
             std::vector<player_update<generic_model>>{
                 {77'778, {generic_model(77'778, 52'000, {3, 0, 0, 0})}},
                 {77'779, {generic_model(77'779, 62'000, {3, 0, 0, 0})}}});
  for (const auto& [mmr, id] : {std::pair{52'000.0f, player_id{77'778}}, {62'000.0f, 77'779}}) {
    match_request<generic_query> near;
    near.query = generic_query{1, mmr, {3, 1, 0, 0}};
    self->request(game.remote, std::chrono::seconds(10), find_atom::value, near)
        .receive([&](const match_reply<generic_model>& r) { CHECK(r.best_candidate_id == id); },
                 [&](caf::error& e) { FAIL(sys.render(e)); });
  }
  // A MMR that is not a finite number is refused over the port as over HTTP:
  // a query gets invalid_request, alone or in a batch, and an update leaves
  // the player as it was.
  const float not_finite[] = {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
  for (const float mmr : not_finite) {
    // 77,777 in the cache at 42,000 first: a bucket replaces one of its
    // players at random on insert, and 77,778 and 77,779 went into the same
    // top bucket (the test's old flake: it was gone in about 1 run in 10).
    self->send(game.remote, update_atom::value,
               player_update<generic_model>{77'777, {generic_model(77'777, 42'000, {3, 0, 0, 0})}});
    self->send(game.remote, update_atom::value,
               player_update<generic_model>{77'777, {generic_model(77'777, mmr, {3, 0, 0, 0})}});
    match_request<generic_query> bad;
    bad.query = generic_query{2, mmr, {0, 1, 2, 3}};
    self->request(game.remote, std::chrono::seconds(10), find_atom::value, bad)
        .receive(
            [&](const match_reply<generic_model>& r) {
              CHECK(r.type == match_type::invalid_request);
            },
            [&](caf::error& e) { FAIL(sys.render(e)); });
    self->request(game.remote, std::chrono::seconds(10), find_atom::value,
                  std::vector<match_request<generic_query>>{far, bad})
        .receive(
            [&](const std::vector<match_reply<generic_model>>& replies) {
              REQUIRE(replies.size() == 2);
              CHECK(replies[0].best_candidate_id == 77'777);
              CHECK(replies[0].model.mmr == 42'000);
              CHECK(replies[1].type == match_type::invalid_request);
            },
            [&](caf::error& e) { FAIL(sys.render(e)); });
  }
  // A batch crosses in one message; the replies come back in order.
  std::vector<match_request<generic_query>> batch(64);
  for (std::size_t i = 0; i < batch.size(); ++i)
    batch[i].query = i % 2 == 0 ? generic_query{2'000'000 + i, 1500, {0, 1, 2, 3}} : far.query;
  self->request(game.remote, std::chrono::seconds(10), find_atom::value, batch)
      .receive(
          [&](const std::vector<match_reply<generic_model>>& replies) {
            REQUIRE(replies.size() == batch.size());
            for (std::size_t i = 0; i < replies.size(); ++i) {
              CHECK(replies[i].type == match_type::success);
              if (i % 2 == 1) CHECK(replies[i].best_candidate_id == 77'777);
              if (i % 2 == 0) CHECK(replies[i].model.attributes[0] == 0);
            }
          },
          [&](caf::error& e) { FAIL(sys.render(e)); });
  self->send_exit(game.remote,
                  caf::exit_reason::user_shutdown);  // dropped by the server's gate
  CHECK(node.stop() == 0);
  CHECK(node.read_line() == "stopped");
}

#ifdef MATCHMAKERD_BINARY  // built with MM_BUILD_SERVER
TEST_CASE("a game process finds opponents through matchmakerd's actor port", "[remote][server]") {
  test::temp_dir dir;
  child_process server({MATCHMAKERD_BINARY, "--database.path", dir.file("mm.db"), "--demo.players",
                        "5000", "--http.port", "0", "--actor.port", "0",
                        "--matchmaker.database_scan_first_delay", "0s",
                        "--matchmaker.database_scan_tick", "200ms"});
  const std::string line = server.wait_for_line("actor port listening on 127.0.0.1:");
  REQUIRE_FALSE(line.empty());
  game_process game(test::port_of(line));
  CHECK(finds_an_opponent(game));
  caf::scoped_actor self{*game.sys};
  self->send_exit(game.remote,
                  caf::exit_reason::user_shutdown);  // drops our proxy only
  CHECK(server.stop() == 0);
  CHECK_FALSE(server.wait_for_line("matchmakerd: stopped", std::chrono::seconds(5)).empty());
}

TEST_CASE("the actor port with mutual TLS serves only certificates of the deployment's CA",
          "[remote][server][tls]") {
  certificates certs;
  test::temp_dir dir;
  const actor_tls server_tls = certs.node("server");
  child_process server({MATCHMAKERD_BINARY, "--database.path", dir.file("mm.db"), "--demo.players",
                        "5000", "--http.port", "0", "--actor.port", "0", "--actor.tls.certificate",
                        server_tls.certificate, "--actor.tls.key", server_tls.key, "--actor.tls.ca",
                        server_tls.ca, "--matchmaker.database_scan_first_delay", "0s",
                        "--matchmaker.database_scan_tick", "200ms"});
  const std::string line = server.wait_for_line("actor port listening on 127.0.0.1:");
  REQUIRE_FALSE(line.empty());
  CHECK(line.find("(mutual TLS)") != std::string::npos);
  const auto port = test::port_of(line);

  // Refused: no TLS at all, and a certificate of another CA. Neither gets a handle.
  game_process plain{game_process::unconnected{}};
  CHECK_FALSE(plain.connect(port, {}));
  game_process stranger{game_process::unconnected{}};
  CHECK_FALSE(stranger.connect(port, certs.node("stranger", "ca")));
  // The deployment's game node is served.
  game_process game(port, certs.node("game"));
  CHECK(finds_an_opponent(game));
  caf::scoped_actor self{*game.sys};
  self->send_exit(game.remote,
                  caf::exit_reason::user_shutdown);  // drops our proxy only
  CHECK(server.stop() == 0);
}

TEST_CASE("the actor port off loopback needs mutual TLS and good certificate files",
          "[server][tls]") {
  certificates certs;
  test::temp_dir dir;
  const auto refused = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {MATCHMAKERD_BINARY,
                                     "--database.path",
                                     dir.file("mm.db"),
                                     "--http.port",
                                     "0",
                                     "--actor.port",
                                     "0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    child_process p(argv, true);
    std::string out;
    const int status = p.finish(&out);
    CHECK(status == 2);
    return out;
  };
  const actor_tls s = certs.node("server");
  CHECK(refused({"--actor.host", "0.0.0.0"}).find("without mutual TLS") != std::string::npos);
  CHECK(refused({"--actor.tls.certificate", s.certificate}).find("needs all three files") !=
        std::string::npos);
  CHECK(refused({"--actor.tls.certificate", s.certificate, "--actor.tls.key",
                 certs.path("game.key"), "--actor.tls.ca", s.ca})
            .find("does not belong to the certificate") != std::string::npos);
  CHECK(refused({"--actor.tls.certificate", s.certificate, "--actor.tls.key", s.key,
                 "--actor.tls.ca", certs.path("rogue-ca.pem")})
            .find("does not verify against") != std::string::npos);
  CHECK(refused({"--actor.tls.certificate", certs.path("nothing.pem"), "--actor.tls.key", s.key,
                 "--actor.tls.ca", s.ca})
            .find("cannot read") != std::string::npos);
}
#endif
