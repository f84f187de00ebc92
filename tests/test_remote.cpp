// Two processes on 127.0.0.1: mm_node serves an instance set through CAF's
// network layer; this test process finds opponents through it with the same
// typed interface a local game actor uses.
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "child_process.hpp"
#include "client.hpp"
#include "registration.hpp"
#include "temp_dir.hpp"

using namespace mm;
using namespace mm::actors;

using test::child_process;

namespace {
// This test process as a game server: an actor system with CAF's network
// layer, connected to a published matchmaker client.
struct game_process {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  client_interface<generic_profile>::type remote;

  explicit game_process(std::uint16_t port) {
    cfg.load<caf::io::middleman>();
    cfg.set("logger.verbosity", caf::atom("quiet"));
    add_message_types<generic_profile>(cfg, "generic");
    sys = std::make_unique<caf::actor_system>(cfg);
    auto r = sys->middleman().remote_actor<client_interface<generic_profile>::type>("127.0.0.1", port);
    REQUIRE(r);
    remote = *r;
  }
};
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
  self->send_exit(game.remote, caf::exit_reason::user_shutdown);  // drops our proxy only
  CHECK(node.stop() == 0);
  CHECK(node.read_line() == "stopped");
}

TEST_CASE("a game process finds opponents through matchmakerd's actor port", "[remote][server]") {
  test::temp_dir dir;
  child_process server({MATCHMAKERD_BINARY, "--database.path", dir.file("mm.db"), "--demo.players",
                        "5000", "--http.port", "0", "--actor.port", "0",
                        "--matchmaker.database_scan_first_delay", "0s",
                        "--matchmaker.database_scan_tick", "200ms"});
  const std::string line = server.wait_for_line("actor port listening on 127.0.0.1:");
  REQUIRE_FALSE(line.empty());
  game_process game(test::port_of(line));
  auto& sys = *game.sys;
  caf::scoped_actor self{sys};
  // The caches fill with the first scans; a query is answered either way.
  bool found = false;
  for (int attempt = 0; attempt < 200 && !found; ++attempt) {
    match_request<generic_query> req;
    req.query = generic_query{1'000'000, 1500, {2, 1, 0, 0}};
    req.num_retries = 9;
    self->request(game.remote, std::chrono::seconds(10), find_atom::value, req)
        .receive(
            [&](const match_reply<generic_model>& r) {
              found = r.type == match_type::success;
              if (found) CHECK(r.model.attributes[0] == 2);
            },
            [&](caf::error& e) { FAIL(sys.render(e)); });
    if (!found) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the scan runs in another process
  }
  CHECK(found);
  self->send_exit(game.remote, caf::exit_reason::user_shutdown);  // drops our proxy only
  CHECK(server.stop() == 0);
  CHECK_FALSE(server.wait_for_line("matchmakerd: stopped", std::chrono::seconds(5)).empty());
}
