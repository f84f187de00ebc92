// The session matchmaker through the real matchmakerd over HTTP: tickets
// long-polled to their match, cancelled and expired; queues and their waiting
// tickets; lobbies found fullest first and auto-created; bad tickets refused
// naming the field while the server serves on.
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <limits>
#include <mutex>

#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/actors/session_forwarders.hpp"
#include "server_fixture.hpp"
#include "session_http.hpp"

using namespace mm;
using player_id = std::uint64_t;
using namespace mm::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

TEST_CASE("an HTTP client long-polls its ticket to a match, cancel and expiry reach it",
          "[server][session]") {
  live_server s(session_patch(), 100);
  const auto a = create(s, solo("duel", 1, 1500));
  const json waiting = s.get_json("/api/tickets/" + a, test_token);
  CHECK(waiting["state"] == "waiting");
  CHECK(waiting["queue"] == "duel");
  // Another client's ticket is one that does not exist, for reading and
  // cancelling; an admin sees and cancels every ticket.
  CHECK(s.get_json("/api/tickets/" + a, other_test_token, 404)["error"] ==
        "ticket: no ticket " + a);
  CHECK(s.get_json("/api/tickets/" + a, view_token, 404).contains("error"));
  CHECK(del(s, "/api/tickets/" + a, other_test_token)->status == 404);
  CHECK(s.get_json("/api/tickets/" + a, admin_token)["state"] == "waiting");

  // The poll is answered when the match forms, not at the end of its wait.
  auto poll = std::async(std::launch::async, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    json j = s.get_json("/api/tickets/" + a + "?wait=20", test_token);
    return std::make_pair(j, std::chrono::steady_clock::now() - t0);
  });
  const auto b = create(s, solo("duel", 2, 1550));
  const auto [matched, took] = poll.get();
  CHECK(took < 10s);
  CHECK(matched["state"] == "matched");
  CHECK(matched["match"]["tickets"].size() == 2);
  CHECK(matched["match"]["datacenter"] == "paris");
  const json teams = matched["match"]["teams"];
  const bool one_each = teams == json({{1}, {2}}) || teams == json({{2}, {1}});
  CHECK(one_each);
  CHECK(matched["match"]["mmr_spread"] == 50.0);
  const json other = s.get_json("/api/tickets/" + b, test_token);
  CHECK(other["match"]["id"] == matched["match"]["id"]);

  // Cancel: the ticket leaves, a second cancel changes nothing.
  const auto c = create(s, solo("duel", 3, 4000));
  auto r = del(s, "/api/tickets/" + c, test_token);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(json::parse(r->body)["cancelled"] == true);
  r = del(s, "/api/tickets/" + c, test_token);
  CHECK(json::parse(r->body)["cancelled"] == false);
  CHECK(s.get_json("/api/tickets/" + c, test_token)["state"] == "cancelled");
  r = del(s, "/api/tickets/" + c, view_token);
  CHECK(r->status == 403);  // cancelling takes the test role

  // Expiry: alone in its MMR range for its 2 s.
  const auto d = create(s, solo("duel", 4, 9000));
  const json expired = s.get_json("/api/tickets/" + d + "?wait=10", test_token);
  CHECK(expired["state"] == "expired");

  // The queue's counts and histograms.
  const json queues = s.get_json("/api/queues", view_token)["queues"];
  REQUIRE(queues.size() == 2);
  const json duel = queues[0];
  CHECK(duel["queue"] == "duel");
  CHECK(duel["created"] == 4);
  CHECK(duel["matched"] == 2);
  CHECK(duel["cancelled"] == 1);
  CHECK(duel["expired"] == 1);
  CHECK(duel["matches"] == 1);
  CHECK(duel["players_matched"] == 2);
  CHECK(duel["wait_seconds"]["count"] == 2);
  CHECK(duel["mmr_spread"]["count"] == 1);
  CHECK(duel["worst_rtt_ms"]["count"] == 1);
  CHECK(duel["worst_rtt_ms"]["mean"] == 20.0);
  // The loop ran at least once a tick until now, and says how long it took.
  CHECK(duel["tick_ms"]["count"] > 0);
  CHECK(duel["last_tick_ms"] >= 0.0);
  CHECK(s.get_json("/api/tickets/12345", test_token, 404)["error"] == "ticket: no ticket '12345'");
  CHECK(s.get_json("/api/tickets/0000000000003039", test_token, 404)["error"] ==
        "ticket: no ticket 0000000000003039");

  // The same figures on /metrics.
  const auto metrics = s.get("/metrics", view_token);
  REQUIRE(metrics);
  CHECK_THAT(metrics->body,
             Contains("mm_session_tickets_total{queue=\"duel\",event=\"matched\"} 2"));
  CHECK_THAT(metrics->body,
             Contains("mm_session_tickets_total{queue=\"duel\",event=\"expired\"} 1"));
  CHECK_THAT(metrics->body, Contains("mm_session_matches_total{queue=\"duel\"} 1"));
  CHECK_THAT(metrics->body,
             Contains("mm_session_match_worst_rtt_ms_bucket{queue=\"duel\",le=\"25\"} 1"));
  CHECK_THAT(metrics->body, Contains("mm_session_time_to_match_seconds_count{queue=\"duel\"} 2"));
  CHECK_THAT(metrics->body, Contains("mm_session_tick_ms_bucket{queue=\"duel\",le=\"+Inf\"}"));
  CHECK_THAT(metrics->body, Contains("mm_session_waiting{queue=\"coop\"} 0"));
  CHECK_THAT(metrics->body, Contains("mm_lobbies_up 1"));
  // The polls the books could answer at once were answered where they
  // arrived: the six of the waiting, matched and cancelled tickets without
  // a wait; the long-polls of waiting tickets and the unknown id were not.
  CHECK_THAT(metrics->body, Contains("mm_http_ticket_polls_answered_inline_total 6\n"));
}

TEST_CASE("a queue's waiting tickets, oldest first, by latency stage", "[server][session]") {
  live_server s(session_patch(), 100);
  const auto first = create(s, solo("coop", 10, 1500));
  json duo = solo("coop", 11, 1500);
  duo["players"].push_back(json{{"id", 12}, {"mmr", 1700}, {"rtt_ms", {{"paris", 30}}}});
  const auto second = create(s, duo);
  const json view = s.get_json("/api/queues/coop?limit=10", test_token);
  REQUIRE(view["waiting_tickets"].size() == 2);
  // Oldest first, ties (created in the same millisecond, as these two may
  // be: the test's old flake) by id: the 16 hex digits compare as numbers.
  const json& older = view["waiting_tickets"][0];
  const json& newer = view["waiting_tickets"][1];
  CHECK(older["waited_ms"] >= newer["waited_ms"]);
  if (older["waited_ms"] == newer["waited_ms"])
    CHECK(older["ticket"].get<std::string>() < newer["ticket"].get<std::string>());
  const std::size_t duo_at = view["waiting_tickets"][0]["ticket"] == second ? 0 : 1;
  CHECK(view["waiting_tickets"][1 - duo_at]["ticket"] == first);
  // Another client sees that tickets wait, not whose.
  const json others = s.get_json("/api/queues/coop?limit=10", other_test_token);
  CHECK(others["waiting_tickets"][duo_at]["ticket"] == nullptr);
  CHECK(others["waiting_tickets"][duo_at]["players"] == nullptr);
  CHECK(others["waiting_tickets"][duo_at]["mmr"] == 1600.0);
  CHECK(view["waiting_tickets"][duo_at]["ticket"] == second);
  CHECK(view["waiting_tickets"][duo_at]["players"] == json({11, 12}));
  CHECK(view["waiting_tickets"][duo_at]["mmr"] == 1600.0);
  CHECK(view["waiting_tickets"][0]["stage"] == "ideal");
  CHECK(view["queue"]["waiting"] == 2);
  CHECK(view["queue"]["waiting_by_stage"]["ideal"] == 2);
  CHECK(s.get_json("/api/queues/coop?offset=1", view_token)["waiting_tickets"].size() == 1);
  CHECK_THAT(s.get_json("/api/queues/nope", view_token, 404)["error"].get<std::string>(),
             Contains("queue: no queue 'nope'"));
}

TEST_CASE("bad tickets get a 4xx naming the field and the server serves on", "[server][session]") {
  live_server s(session_patch(), 100);
  const auto refused = [&](const json& body, int status = 400) {
    return s.post_json("/api/tickets", body, test_token, status)["error"].get<std::string>();
  };
  CHECK_THAT(refused(solo("ranked", 1, 1500)), Contains("queue: no queue 'ranked'"));
  json five = solo("coop", 1, 1500);
  for (player_id id = 2; id <= 5; ++id)
    five["players"].push_back(json{{"id", id}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}});
  CHECK_THAT(refused(five), Contains("players: a party of 5 is more than the queue's "
                                     "max_party_size of 4"));
  json nan = solo("duel", 1, 0);
  nan["players"][0]["mmr"] = "NaN";
  CHECK_THAT(refused(nan), Contains("players[0].mmr must be a number"));
  json twice = solo("coop", 7, 1500);
  twice["players"].push_back(twice["players"][0]);
  CHECK_THAT(refused(twice), Contains("players[1].id: player 7 is in the party twice"));
  json far = solo("duel", 1, 1500);
  far["players"][0]["rtt_ms"]["mars"] = 10;
  CHECK_THAT(refused(far), Contains("players[0].rtt_ms"));
  json long_name = solo("duel", 1, 1500);
  long_name["players"][0]["strings"] = {{std::string(65, 'x'), "a"}};
  CHECK_THAT(refused(long_name), Contains("players[0].strings: a name must be 1 to 64 bytes"));
  json long_text = solo("duel", 1, 1500);
  long_text["players"][0]["strings"] = {{"mode", std::string(300, 'x')}};
  CHECK_THAT(refused(long_text), Contains("players[0].strings.mode must be 1 to 256 bytes"));
  json many = solo("duel", 1, 1500);
  for (int i = 0; i < 40; ++i) many["players"][0]["numbers"]["n" + std::to_string(i)] = i;
  CHECK_THAT(refused(many), Contains("players[0].numbers has 40 entries, at most 32"));
  json unknown = solo("duel", 1, 1500);
  unknown["color"] = "red";
  CHECK_THAT(refused(unknown), Contains("unknown field 'color'"));
  json no_give_up = solo("duel", 1, 1500);
  no_give_up["give_up_after_ms"] = 0;
  CHECK_THAT(refused(no_give_up), Contains("give_up_after_ms must be an integer from 1"));
  CHECK_THAT(s.get_json("/api/tickets/0000000000000001?wait=61", view_token, 400)["error"]
                 .get<std::string>(),
             Contains("'wait' must be at most 60"));
  CHECK(s.post("/api/tickets", solo("duel", 1, 1500).dump(), view_token)->status == 403);
  // The request's own field, in the form it used.
  json listed = solo("duel", 1, 1500);
  listed.erase("queue");
  listed["queues"] = {"duel", "nope"};
  CHECK_THAT(refused(listed), Contains("queues[1]: no queue 'nope'"));
  listed["queues"] = {"nope"};
  CHECK_THAT(refused(listed), Contains("queues[0]: no queue 'nope'"));
  // And it serves on.
  const auto mine = create(s, solo("duel", 1, 1500));
  // Another token cannot replace it, nor learn its id.
  json theirs = solo("duel", 1, 1500);
  for (const bool replace : {false, true}) {
    theirs["replace_existing"] = replace;
    const std::string why =
        s.post_json("/api/tickets", theirs, other_test_token, 409)["error"].get<std::string>();
    CHECK_THAT(why, Contains("player 1 already waits in a ticket of another owner"));
    CHECK_THAT(why, !Contains(mine));
  }
  // A replacement its queue refuses changes nothing.
  json refused_replacement = solo("coop", 1, 1500);
  refused_replacement["players"][0].erase("rtt_ms");
  refused_replacement["replace_existing"] = true;
  CHECK_THAT(refused(refused_replacement), Contains("players[0]: needs rtt_ms or a location"));
  CHECK(s.get_json("/api/tickets/" + mine, test_token)["state"] == "waiting");
}

TEST_CASE("lobbies over HTTP: registered, updated, found fullest first, auto-created, closed",
          "[server][session]") {
  live_server s(session_patch(), 100);
  const auto reg = [&](const char* id, const char* dc, int max, int players, int status = 201) {
    return s.post_json("/api/lobbies",
                       {{"id", id},
                        {"mode", "ctf"},
                        {"datacenter", dc},
                        {"max_players", max},
                        {"players", players}},
                       admin_token, status);
  };
  reg("p1", "paris", 10, 2);
  reg("p2", "paris", 10, 6);
  CHECK_THAT(reg("p2", "paris", 10, 6, 400)["error"].get<std::string>(),
             Contains("id: lobby 'p2' is already registered"));
  CHECK_THAT(reg("p3", "mars", 10, 6, 400)["error"].get<std::string>(),
             Contains("datacenter: no datacenter 'mars'"));
  // Registering takes role test (a game server's); a viewer may not.
  CHECK(s.post("/api/lobbies", "{}", view_token)->status == 403);
  const json find = {{"modes", {"ctf"}}, {"party_size", 3}, {"rtt_ms", {{"paris", 12}}}};
  json placed = s.post_json("/api/lobbies/find", find, test_token);
  CHECK(placed["lobby"] == "p2");
  CHECK(placed["players"] == 9);
  placed = s.post_json("/api/lobbies/find", find, test_token);
  CHECK(placed["lobby"] == "p1");  // p2 has one seat left
  const json made = s.post_json(
      "/api/lobbies/find",
      {{"modes", {"race"}}, {"location", {{"latitude", 36}, {"longitude", 140}}}}, test_token);
  CHECK(made["created"] == true);
  CHECK(made["datacenter"] == "tokyo");
  const json none = s.post_json(
      "/api/lobbies/find", {{"modes", {"golf"}}, {"region", "eu"}, {"prevent_auto_create", true}},
      test_token, 409);
  CHECK_THAT(none["error"].get<std::string>(), Contains("no available lobby"));
  CHECK_THAT(s.post_json("/api/lobbies/find", {{"modes", json::array()}, {"region", "eu"}},
                         test_token, 400)["error"]
                 .get<std::string>(),
             Contains("modes"));

  httplib::Client c("127.0.0.1", s.port());
  const httplib::Headers admin{{"Authorization", "Bearer " + admin_token}};
  auto r = c.Put("/api/lobbies/p1", admin, R"({"players": 1})", "application/json");
  REQUIRE(r);
  CHECK(r->status == 200);
  r = c.Put("/api/lobbies/p1", admin, R"({"players": 11})", "application/json");
  CHECK(r->status == 400);
  CHECK_THAT(r->body, Contains("players: 11 is more than max_players (10)"));
  r = c.Put("/api/lobbies/zz", admin, R"({"players": 1})", "application/json");
  CHECK(r->status == 404);
  const json all = s.get_json("/api/lobbies", view_token);
  CHECK(all["lobbies"] == 3);
  CHECK(all["players"] == 1 + 9 + 1);
  CHECK(all["found"] == 3);
  CHECK(all["created"] == 1);
  CHECK(all["list"].size() == 3);
  // A lobby is its registrant's: another test token can neither update nor
  // close it (as if it did not exist), its owner and an admin can.
  const httplib::Headers owner{{"Authorization", "Bearer " + test_token}};
  const httplib::Headers other{{"Authorization", "Bearer " + other_test_token}};
  s.post_json("/api/lobbies",
              {{"id", "own"}, {"mode", "ffa"}, {"datacenter", "paris"}, {"max_players", 4}},
              test_token, 201);
  CHECK(c.Put("/api/lobbies/own", other, R"({"players": 2})", "application/json")->status == 404);
  CHECK(c.Delete("/api/lobbies/own", other)->status == 404);
  CHECK(c.Put("/api/lobbies/own", owner, R"({"players": 2})", "application/json")->status == 200);
  CHECK(c.Put("/api/lobbies/p2", owner, R"({"players": 2})", "application/json")->status == 404);
  CHECK(c.Delete("/api/lobbies/own", owner)->status == 200);
  r = c.Delete("/api/lobbies/p1", admin);
  CHECK(r->status == 200);
  r = c.Delete("/api/lobbies/p1", admin);
  CHECK(r->status == 404);
}

TEST_CASE("a long-poll does not hold the server's stop", "[server][session]") {
  live_server s(session_patch(), 100);
  const auto a = create(s, solo("duel", 1, 1500));
  auto poll = std::async(std::launch::async,
                         [&] { return s.get("/api/tickets/" + a + "?wait=60", test_token); });
  // The poll is owed once the server has its request; then stop.
  std::this_thread::sleep_for(300ms);  // a real client's request in flight, not a sync point
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(s.stop() == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);
  const auto r = poll.get();
  REQUIRE(r);
  CHECK(json::parse(r->body)["state"] == "waiting");
}

TEST_CASE("SIGTERM and kill -9 keep every acknowledged ticket, lobbies survive SIGTERM",
          "[server][session]") {
  json patch = session_patch();
  patch["sessions"]["queue_template"] = "duel";
  live_server s(patch, 100);
  const auto a = create(s, solo("coop", 1, 1500));
  json duo = solo("coop", 2, 1500);
  duo["players"].push_back(
      json{{"id", 3}, {"mmr", 1510}, {"location", {{"latitude", 48}, {"longitude", 2}}}});
  duo["give_up_after_ms"] = 600'000;
  const auto b = create(s, duo);
  json ranked = solo("ranked", 4, 1500);  // a queue made on first use
  ranked["give_up_after_ms"] = 600'000;
  const auto r = create(s, ranked);
  // Past its give-up time by the next start. Alone in its queue: in the
  // co-op queue it would complete a's and b's match once their latency
  // stage widens, which a slow run (ASan) reached before the stop.
  json brief = solo("duel", 5, 1500);
  brief["give_up_after_ms"] = 1500;
  const auto gone = create(s, brief);
  s.post_json("/api/lobbies",
              {{"id", "ctf-9"},
               {"mode", "ctf"},
               {"datacenter", "tokyo"},
               {"max_players", 12},
               {"players", 5}},
              test_token, 201);
  CHECK(s.stop() == 0);
  std::this_thread::sleep_for(1600ms);  // real time for `brief` to pass its give-up time

  s.start();
  for (const auto& id : {a, b, r}) {
    const json t = s.get_json("/api/tickets/" + id, test_token);
    CHECK(t["state"] == "waiting");
  }
  // Its give-up time passed while the server was down: it expires at the first tick.
  CHECK(s.get_json("/api/tickets/" + gone + "?wait=10", test_token)["state"] == "expired");
  const json view = s.get_json("/api/queues/coop", test_token);
  REQUIRE(view["waiting_tickets"].size() == 2);
  CHECK(view["waiting_tickets"][1]["players"] == json({2, 3}));
  CHECK(view["waiting_tickets"][0]["waited_ms"].get<std::int64_t>() >= 1600);  // from its creation
  const json lobbies = s.get_json("/api/lobbies", view_token);
  REQUIRE(lobbies["list"].size() == 1);
  CHECK(lobbies["list"][0]["id"] == "ctf-9");
  CHECK(lobbies["list"][0]["players"] == 5);
  {  // still its registrant's: another token may not change it, its owner may
    httplib::Client http("127.0.0.1", s.port());
    const auto put = [&](const std::string& token) {
      return http
          .Put("/api/lobbies/ctf-9", {{"Authorization", "Bearer " + token}}, R"({"players": 6})",
               "application/json")
          ->status;
    };
    CHECK(put(other_test_token) == 404);
    CHECK(put(test_token) == 200);
  }
  // A new player completes the co-op match with the restored tickets.
  const auto c = create(s, solo("coop", 6, 1500));
  CHECK(c != b);
  const json matched = s.get_json("/api/tickets/" + c + "?wait=10", test_token);
  CHECK(matched["state"] == "matched");
  CHECK(matched["match"]["tickets"].size() == 3);
  // kill -9: the waiting ticket waits on, the outcomes are kept; the lobbies,
  // written only at a graceful stop, are gone (their servers register again).
  s.kill_hard();
  s.start();
  CHECK(s.get_json("/api/tickets/" + r, test_token)["state"] == "waiting");
  CHECK(s.get_json("/api/tickets/" + a, test_token)["state"] == "matched");
  CHECK(s.get_json("/api/tickets/" + c, test_token)["match"] == matched["match"]);
  CHECK(s.get_json("/api/lobbies", view_token)["lobbies"] == 0);
  // New ids never repeat one of the last runs.
  const auto next = create(s, solo("duel", 7, 1500));
  for (const auto& old : {a, b, r, gone, c}) CHECK(next != old);
}

namespace {

// What a game's owner actor was told, for the test's thread to wait on.
struct told {
  std::mutex m;
  std::condition_variable cv;
  std::vector<actors::ticket_outcome> outcomes;

  bool wait_for(std::size_t n, std::chrono::seconds timeout = 20s) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, timeout, [&] { return outcomes.size() >= n; });
  }
};

actors::session_player remote_player(player_id id, double mmr) {
  actors::session_player p;
  p.id = id;
  p.mmr = mmr;
  p.rtt_ms = {{"paris", 20}, {"tokyo", 240}};
  return p;
}

}  // namespace

TEST_CASE("a game process over the actor port gets its party's match, cancel and expiry",
          "[server][session]") {
  json patch = session_patch();
  patch["actor"] = {{"port", 0}};
  live_server s(patch, 100);
  REQUIRE(s.actor_port() != 0);

  caf::actor_system_config cfg;
  actors::use_network(cfg, {});
  cfg.set("logger.verbosity", caf::atom("quiet"));
  actors::add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys(cfg);
  auto service = actors::connect_actor<actors::session_interfaces::service>(sys, "127.0.0.1",
                                                                            s.actor_port(), false);
  REQUIRE(service);
  // The async interface is served on the same port.
  auto async = actors::connect_actor<actors::interfaces<generic_profile>::routing_client>(
      sys, "127.0.0.1", s.actor_port(), false);
  REQUIRE(async);

  auto got = std::make_shared<told>();
  actors::session_interfaces::owner owner =
      sys.spawn([got]() -> actors::session_interfaces::owner::behavior_type {
        return {[got](actors::ticket_atom, const actors::ticket_outcome& o) {
          std::lock_guard lock(got->m);
          got->outcomes.push_back(o);
          got->cv.notify_all();
        }};
      });
  caf::scoped_actor self{sys};
  const auto create = [&](const std::string& queue, actors::session_ticket t) {
    std::uint64_t id = 0;
    self->request(*service, 10s, actors::create_atom::value, queue, t, owner)
        .receive([&](std::uint64_t x) { id = x; },
                 [&](caf::error& e) { FAIL_CHECK(sys.render(e)); });
    return id;
  };
  // A duo and two solos fill the co-op queue's match of four.
  actors::session_ticket duo;
  duo.players = {remote_player(1, 1500), remote_player(2, 1520)};
  const auto d = create("coop", duo);
  actors::session_ticket solo1, solo2;
  solo1.players = {remote_player(3, 1490)};
  solo2.players = {remote_player(4, 1510)};
  const auto s1 = create("coop", solo1);
  const auto s2 = create("coop", solo2);
  REQUIRE((d && s1 && s2));
  REQUIRE(got->wait_for(3));
  {
    std::lock_guard lock(got->m);
    std::set<std::uint64_t> tickets;
    for (const auto& o : got->outcomes) {
      CHECK(o.state == session::ticket_state::matched);
      CHECK(o.match.datacenter == "paris");
      CHECK(o.match.id == got->outcomes[0].match.id);
      REQUIRE(o.match.teams.size() == 1);
      CHECK(o.match.teams[0].size() == 4);
      tickets.insert(o.ticket);
    }
    CHECK(tickets == std::set<std::uint64_t>{d, s1, s2});
  }
  // Cancel, and expiry (2 s alone in the duel queue): each told once.
  actors::session_ticket lonely;
  lonely.players = {remote_player(5, 9000)};
  const auto c = create("coop", lonely);
  // Why it waits, across the port (the explanation's bytes cross BASP).
  std::vector<session::explanation> waits;
  self->request(*service, 10s, actors::explain_atom::value, c, std::uint32_t{100},
                std::string("any"))
      .receive([&](std::vector<session::explanation>& e) { waits = std::move(e); },
               [&](caf::error& err) { FAIL_CHECK(sys.render(err)); });
  REQUIRE(waits.size() == 1);
  CHECK(waits[0].queue == "coop");
  CHECK(waits[0].players_needed == 3);
  CHECK(waits[0].stage == session::latency_stage::ideal);
  CHECK_THAT(waits[0].summary, Contains("a match needs 3 more players"));
  bool cancelled = false;
  self->request(*service, 10s, actors::cancel_atom::value, c)
      .receive([&](bool b) { cancelled = b; }, [&](caf::error&) {});
  CHECK(cancelled);
  const auto e = create("duel", lonely);
  REQUIRE(got->wait_for(5));
  {
    std::lock_guard lock(got->m);
    CHECK(got->outcomes[3].ticket == c);
    CHECK(got->outcomes[3].state == session::ticket_state::cancelled);
    CHECK(got->outcomes[4].ticket == e);
    CHECK(got->outcomes[4].state == session::ticket_state::expired);
  }
  // A bad ticket is refused naming the field.
  const auto refusal = [&](const actors::session_ticket& t) {
    std::string why;
    self->request(*service, 10s, actors::create_atom::value, std::string("coop"), t, owner)
        .receive([&](std::uint64_t) {}, [&](caf::error& err) { why = sys.render(err); });
    return why;
  };
  actors::session_ticket twice;
  twice.players = {remote_player(6, 1500), remote_player(6, 1500)};
  CHECK_THAT(refusal(twice), Contains("players[1].id: player 6 is in the party twice"));
  // A NaN or an infinity crosses the port as itself (wire_number.hpp) and is
  // refused as over HTTP; sending an infinity used to hang this process.
  for (const double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    actors::session_ticket t;
    t.players = {remote_player(7, bad)};
    CHECK_THAT(refusal(t), Contains("players[0].mmr: must be a finite number"));
    t.players = {remote_player(7, 1500)};
    t.players[0].rtt_ms[0].value = bad;
    CHECK_THAT(refusal(t), Contains("players[0].rtt_ms"));
  }
  // Backfill over the same handle: a running match registered (under the
  // port's credential, whatever the game sent), a ticket placed into it.
  actors::backfill_registration running;
  running.queue = "coop";
  running.match_id = "port-m1";
  running.datacenter = "paris";
  running.server = "10.0.0.2:7777";
  running.teams = {{remote_player(20, 1500), remote_player(21, 1500), remote_player(22, 1500)}};
  running.credential = "someone-else";
  std::string registered_as;
  self->request(*service, 10s, actors::backfill_atom::value, actors::create_atom::value, running)
      .receive([&](const actors::backfill_state& b) { registered_as = b.registration.credential; },
               [&](caf::error& err) { FAIL_CHECK(sys.render(err)); });
  CHECK(registered_as == actors::anonymous_identity);  // a connection without a token
  actors::session_ticket filler;
  filler.players = {remote_player(23, 1500)};
  const auto f = create("coop", filler);
  REQUIRE(got->wait_for(6));
  {
    std::lock_guard lock(got->m);
    CHECK(got->outcomes[5].ticket == f);
    CHECK(got->outcomes[5].match.running_match == "port-m1");
    CHECK(got->outcomes[5].match.server == "10.0.0.2:7777");
  }
  // Lobbies over the same handle.
  actors::lobby_query q;
  q.modes = {"ctf"};
  q.region = "eu";
  std::string lobby;
  self->request(*service, 10s, actors::lobby_atom::value, actors::find_atom::value, q)
      .receive([&](const actors::lobby_placement& p) { lobby = p.lobby; },
               [&](caf::error& err) { FAIL_CHECK(sys.render(err)); });
  CHECK(lobby == "auto-1");
  caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
}
