// Backfill through the real matchmakerd over HTTP: a game server registers
// its running match, a waiting ticket is placed into it and long-polled to
// "joined a running match", the game server sees the placement on its event
// stream, confirms the seats, updates its players and stops; every refusal
// names its field, and another credential's match does not exist for it.
#include "server_fixture.hpp"
#include "session_http.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

json player_at_paris(std::uint64_t id, double mmr) {
  return {{"id", id}, {"mmr", mmr}, {"rtt_ms", {{"paris", 20}, {"tokyo", 240}}}};
}

// Two players of another client as one party: placed by one tick, whatever
// the tick's timing (two solo tickets could be placed by two ticks, as two
// reservations).
json pair_for_coop() {
  return {{"queue", "coop"}, {"players", {player_at_paris(1, 1510), player_at_paris(2, 1490)}}};
}

httplib::Result put(const live_server& s, const std::string& path, const json& body,
                    const std::string& token) {
  httplib::Client c("127.0.0.1", s.port());
  return c.Put(path, {{"Authorization", "Bearer " + token}}, body.dump(), "application/json");
}

}  // namespace

TEST_CASE("a game server backfills its running match over HTTP", "[server][session][backfill]") {
  live_server s(session_patch(), 100);
  const json match = {{"queue", "coop"},
                      {"match_id", "m-1"},
                      {"datacenter", "paris"},
                      {"server", "10.0.0.1:7777"},
                      {"teams", {{player_at_paris(100, 1500), player_at_paris(101, 1520)}}}};
  const json made = s.post_json("/api/backfills", match, test_token, 201);
  CHECK(made["match_id"] == "m-1");
  CHECK(made["open_seats"] == 2);
  CHECK(made["teams"][0]["players"] == json({100, 101}));

  // A party of two of another client: placed into the match at the next tick.
  const auto a = create(s, pair_for_coop(), other_test_token);
  const json placed = s.get_json("/api/tickets/" + a + "?wait=10", other_test_token);
  CHECK(placed["state"] == "matched");
  CHECK(placed["match"]["running_match"] == "m-1");
  CHECK(placed["match"]["server"] == "10.0.0.1:7777");
  CHECK(placed["match"]["reserved_for_ms"] == 30000);
  const std::string reservation = placed["match"]["id"];

  // The game server's view: no seat open, one reservation of both players.
  json now = s.get_json("/api/backfills/m-1", test_token);
  CHECK(now["open_seats"] == 0);
  REQUIRE(now["reservations"].size() == 1);
  CHECK(now["reservations"][0]["id"] == reservation);
  CHECK(now["reservations"][0]["players"].size() == 2);
  CHECK(now["reservations"][0]["expires_in_ms"] > 20000);
  // Its events: the placement, under its own credential.
  const json events = s.get_json("/api/events?after=0&wait=5", test_token);
  bool told = false;
  for (const auto& e : events["events"])
    told = told || (e.value("to_game_server", false) && e["match"]["running_match"] == "m-1");
  CHECK(told);

  // The players joined: the seats are the match's.
  now = s.post_json("/api/backfills/m-1/reservations/" + reservation + "/confirm", json::object(),
                    test_token);
  CHECK(now["teams"][0]["players_in"] == 4);
  CHECK(now["reservations"].empty());
  CHECK(s.post_json("/api/backfills/m-1/reservations/" + reservation + "/release", json::object(),
                    test_token, 404)["error"]
            .get<std::string>()
            .find("reservation") != std::string::npos);

  // The queue's counts, in its report and on /metrics.
  json coop;
  const json queues = s.get_json("/api/queues", view_token);  // named: the loop reads into it
  for (const auto& q : queues["queues"])
    if (q["queue"] == "coop") coop = q;
  CHECK(coop["backfill"]["running_matches"] == 1);
  CHECK(coop["backfill"]["tickets_placed"] == 1);
  CHECK(coop["backfill"]["reservations"]["made"] == 1);
  CHECK(coop["backfill"]["reservations"]["confirmed"] == 1);
  const auto metrics = s.get("/metrics", view_token);
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Contains("mm_session_backfills{queue=\"coop\"} 1"));
  CHECK_THAT(metrics->body, Contains("mm_session_backfilled_tickets_total{queue=\"coop\"} 1"));
  CHECK_THAT(metrics->body,
             Contains("mm_session_reservations_total{queue=\"coop\",event=\"confirmed\"} 1"));

  // Two players left: the update lists who is in now.
  auto r = put(s, "/api/backfills/m-1", {{"teams", {{player_at_paris(100, 1500)}}}}, test_token);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(json::parse(r->body)["open_seats"] == 3);

  // Refusals name their field; another client's match does not exist for it.
  CHECK(s.get_json("/api/backfills/m-1", other_test_token, 404).contains("error"));
  CHECK_THAT(s.post_json("/api/backfills", match, test_token, 409)["error"].get<std::string>(),
             Contains("match_id: match 'm-1' backfills already"));
  json bad = match;
  bad["match_id"] = "m-2";
  bad["teams"][0][0]["mmr"] = "high";
  CHECK_THAT(s.post_json("/api/backfills", bad, test_token, 400)["error"].get<std::string>(),
             Contains("teams[0][0].mmr"));
  bad = match;
  bad["match_id"] = "m-2";
  bad["datacenter"] = "atlantis";
  CHECK_THAT(s.post_json("/api/backfills", bad, test_token, 400)["error"].get<std::string>(),
             Contains("datacenter: no datacenter 'atlantis'"));
  bad = match;
  bad["bogus"] = 1;
  CHECK(s.post_json("/api/backfills", bad, test_token, 400).contains("error"));
  CHECK(s.post_json("/api/backfills", match, view_token, 403).contains("error"));
  CHECK(s.post_json("/api/backfills/m-1/reservations/zzz/confirm", json::object(), test_token, 404)
            .contains("error"));

  // An admin sees every match; the game server stops its own.
  CHECK(s.get_json("/api/backfills", admin_token)["backfills"].size() == 1);
  const json page = s.get_json("/api/backfills?limit=0", admin_token);
  CHECK(page["total"] == 1);
  CHECK(page["backfills"].empty());
  CHECK_THAT(s.get_json("/api/backfills?limit=1001", admin_token, 400)["error"].get<std::string>(),
             Contains("limit"));
  CHECK(s.get_json("/api/backfills?queue=coop", other_test_token)["backfills"].empty());
  auto stopped = del(s, "/api/backfills/m-1", test_token);
  REQUIRE(stopped);
  CHECK(json::parse(stopped->body)["stopped"] == true);
  CHECK(s.get_json("/api/backfills/m-1", test_token, 404).contains("error"));
}

TEST_CASE("mmctl: backfill register, list, get, confirm, update and stop", "[server][mmctl]") {
  live_server s(session_patch(), 100);
  const auto mmctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), MMCTL_BINARY);
    auto [status, out] = run_binary(args, {{"MMCTL_URL", s.url()}, {"MMCTL_TOKEN", test_token}});
    INFO(out);
    const auto brace = out.find('{');
    return std::make_tuple(
        status, out,
        brace == std::string::npos ? json() : json::parse(out.substr(brace), nullptr, false));
  };
  // A match id with a space and a '?' reaches the server as one path segment.
  const std::string id = "m 1?x";
  auto [made, said, match] =
      mmctl({"backfill", "register", "coop", id, "--team", "100:1500,101:1520", "--rtt", "paris=20",
             "--rtt", "tokyo=240", "--datacenter", "paris", "--server", "10.0.0.1:7777",
             "--priority", "-5"});
  REQUIRE(made == 0);
  CHECK_THAT(said, Contains("m 1?x (coop, paris): 2 open seats, 0 reservations"));
  CHECK(match["priority"] == -5);
  CHECK(match["teams"][0]["players"] == json({100, 101}));

  const auto a = create(s, pair_for_coop(), other_test_token);
  const json placed = s.get_json("/api/tickets/" + a + "?wait=10", other_test_token);
  REQUIRE(placed["match"]["running_match"] == id);
  const std::string reservation = placed["match"]["id"];

  auto [listed, list_said, all] = mmctl({"backfill", "list", "--queue", "coop"});
  CHECK(listed == 0);
  CHECK_THAT(list_said, Contains("0 open seats, 1 reservations"));
  REQUIRE(all["backfills"].size() == 1);
  auto [confirmed, c_said, after] =
      mmctl({"backfill", "confirm", id, reservation, "--players", "1"});
  CHECK(confirmed == 0);
  CHECK(after["teams"][0]["players_in"] == 3);
  auto [released, r_said, rest] = mmctl({"backfill", "release", id, reservation});
  CHECK(released == 0);
  CHECK(rest["open_seats"] == 1);
  CHECK(rest["reservations"].empty());
  auto [updated, u_said, now] = mmctl({"backfill", "update", id, "--team", "100:1500"});
  CHECK(updated == 0);
  CHECK(now["open_seats"] == 3);
  auto [got, g_said, one] = mmctl({"backfill", "get", id});
  CHECK(got == 0);
  CHECK(one["datacenter"] == "paris");
  auto [stopped, s_said, answer] = mmctl({"backfill", "stop", id});
  CHECK(stopped == 0);
  CHECK(answer["stopped"] == true);

  // Refusals: the server's (exit 1, its reason) and the usage (exit 2).
  auto [gone, gone_said, nothing] = mmctl({"backfill", "get", id});
  CHECK(gone == 1);
  CHECK_THAT(gone_said, Contains("HTTP 404"));
  auto [slash, slash_said, no] = mmctl({"backfill", "register", "coop", "a/b", "--team", "7:1500"});
  CHECK(slash == 1);
  CHECK_THAT(slash_said, Contains("match_id must not hold '/'"));
  auto [bad, bad_said, usage] = mmctl({"backfill", "register", "coop", "m-2", "--team", "7"});
  CHECK(bad == 2);
  CHECK_THAT(bad_said, Contains("--team expects ID:MMR"));
  auto [none, none_said, u2] = mmctl({"backfill", "register", "coop", "m-2"});
  CHECK(none == 2);
}
