// The session queue's match loop: tickets in and out, every rule at and
// around its thresholds on a virtual clock, teams and datacenters, restored
// tickets (the random queues and the oracle: test_session_queue_random.cpp).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "mm/engine/error.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/session_queue_impl.hpp"
#include "session_test_support.hpp"

using namespace mm::session;
using namespace mm::session::testing;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using mm::player_id;

TEST_CASE("a ticket the queue cannot take is refused, naming the field", "[session][queue]") {
  queue_config c = coop();
  c.max_party_size = 2;
  rule mode;
  mode.name = "mode";
  mode.kind = rule_kind::equality;
  mode.attribute = "mode";
  c.rules = {mode};
  session_queue q(c, equator(3), 1);
  auto good = with_rtt(1, 1500, {20, 40, 60});
  good.players[0].strings = {{"mode", "raid"}};
  CHECK(q.add(good, 0ms).id == 1);

  // check() refuses what add() refuses (but a player waiting already), and
  // changes nothing.
  const auto refused = [&](ticket_request r) -> std::string {
    std::string checked = "accepted";
    const std::size_t waiting = q.waiting();
    try {
      q.check(r, 0ms);
    } catch (const mm::error& e) {
      checked = e.what();
    }
    CHECK(q.waiting() == waiting);
    try {
      q.add(r, 0ms);
    } catch (const mm::error& e) {
      CHECK(e.code() == mm::errc::invalid_argument);
      if (std::string(e.what()).find("already waits") == std::string::npos)
        CHECK(checked == e.what());
      return e.what();
    }
    CHECK(checked == "accepted");
    return "accepted";
  };
  auto r = good;
  r.players.clear();
  CHECK_THAT(refused(r), Contains("players: a ticket needs at least one player"));
  r = good;
  r.players = {good.players[0], good.players[0], good.players[0]};
  CHECK_THAT(refused(r), Contains("players: a party of 3"));
  r = good;
  r.players[0].id = 2;
  r.players.push_back(r.players[0]);
  CHECK_THAT(refused(r), Contains("players[1].id: player 2 is in the party twice"));
  r = good;
  r.players[0].id = 3;
  r.players[0].mmr = std::nan("");
  CHECK_THAT(refused(r), Contains("players[0].mmr"));
  r = good;
  r.players[0].id = 0;
  CHECK_THAT(refused(r), Contains("players[0].id"));
  r = good;
  r.players[0].id = 4;
  r.players[0].rtt_ms = {{"mars", 10}};
  CHECK_THAT(refused(r), Contains("players[0].rtt_ms.mars: no such datacenter"));
  r.players[0].rtt_ms = {{"dc1", -3}};
  CHECK_THAT(refused(r), Contains("players[0].rtt_ms.dc1"));
  r.players[0].rtt_ms.clear();
  CHECK_THAT(refused(r), Contains("players[0]: needs rtt_ms or a location"));
  r.players[0].location = geo_point{95, 0};
  CHECK_THAT(refused(r), Contains("players[0].location"));
  r = good;
  r.players[0].id = 5;
  r.players[0].strings.clear();
  CHECK_THAT(refused(r), Contains("players[0].attributes.mode"));
  r = good;
  r.players[0].id = 6;
  r.players.push_back(r.players[0]);
  r.players[1].id = 7;
  r.players[1].strings = {{"mode", "pvp"}};
  CHECK_THAT(refused(r), Contains("players[1].attributes.mode: differs from the party's 'raid'"));
  r = good;
  r.players[0].id = 8;
  r.give_up_after = 0ms;
  CHECK_THAT(refused(r), Contains("give_up_after"));
  // One waiting ticket per player: refused, or the old one replaced.
  CHECK_THAT(refused(good), Contains("players[0].id: player 1 already waits in ticket 1"));
  CHECK(q.waiting() == 1);
  good.replace_existing = true;
  const auto replaced = q.add(good, 0ms);
  CHECK(replaced.replaced == std::vector<ticket_id>{1});
  CHECK_FALSE(q.is_waiting(1));
  CHECK(q.ticket_of(1) == replaced.id);
  CHECK(q.waiting() == 1);
  CHECK(q.stats().cancelled == 1);
  CHECK(q.cancel(replaced.id));
  CHECK_FALSE(q.cancel(replaced.id));
  CHECK(q.ticket_of(1) == 0);
}

TEST_CASE("two players within the difference are matched, one per team", "[session][queue]") {
  session_queue q(one_vs_one(), latency_model{}, 1);
  q.add(solo(1, 1500), 0ms);
  q.add(solo(2, 1599), 0ms);
  q.add(solo(3, 1900), 0ms);
  auto r = q.tick(1s);
  REQUIRE(r.matches.size() == 1);
  const auto& m = r.matches[0];
  CHECK(m.teams.size() == 2);
  CHECK(m.teams[0].size() == 1);
  CHECK(m.teams[1].size() == 1);
  CHECK(all_players(m) == std::vector<player_id>{1, 2});
  CHECK(m.mmr_spread == 99);
  CHECK(q.waiting() == 1);
  CHECK(q.is_waiting(3));
  CHECK(q.stats().matched == 2);
}

TEST_CASE("a difference threshold expands with the seed's wait", "[session][queue]") {
  // 100, +50 every 5 s, up to 400: 250 apart needs the threshold of 15 s.
  session_queue q(one_vs_one(100, {50, 5s, 400}), latency_model{}, 1);
  q.add(solo(1, 1000), 0ms);
  q.add(solo(2, 1250), 1s);
  CHECK(q.tick(5s).matches.empty());
  CHECK(q.tick(14999ms).matches.empty());  // the seed (1) waited 14.999 s: 200
  const auto r = q.tick(15s);              // 250
  REQUIRE(r.matches.size() == 1);
  CHECK(r.matches[0].tickets == std::vector<ticket_id>{1, 2});   // the seed first
  CHECK(r.matches[0].created == std::vector<time_ms>{0ms, 1s});  // in the tickets' order
  CHECK(r.matches[0].formed_at == 15s);
}

TEST_CASE("a rule that became optional still orders but no longer filters", "[session][queue]") {
  queue_config c = one_vs_one(1000);
  rule mode;
  mode.name = "mode";
  mode.kind = rule_kind::equality;
  mode.attribute = "mode";
  mode.weight = 5;
  mode.optional_after = 10s;
  c.rules.push_back(mode);
  session_queue q(c, latency_model{}, 1);
  auto in_mode = [](player_id id, double mmr, const char* m) {
    auto r = solo(id, mmr);
    r.players[0].strings = {{"mode", m}};
    return r;
  };
  q.add(in_mode(1, 1500, "ctf"), 0ms);
  q.add(in_mode(2, 1510, "dm"), 1ms);  // 1 is the oldest: the seed
  CHECK(q.tick(9999ms).matches.empty());
  // After 10 s the mode no longer filters, but a player of the same mode is
  // nearer (weight 5) than one of another mode 10 MMR closer.
  q.add(in_mode(3, 1600, "ctf"), 9999ms);
  const auto r = q.tick(10s);
  REQUIRE(r.matches.size() == 1);
  CHECK(all_players(r.matches[0]) == std::vector<player_id>{1, 3});
}

TEST_CASE("tickets past their give-up time expire, not earlier", "[session][queue]") {
  session_queue q(one_vs_one(), latency_model{}, 1);
  auto r = solo(1, 1500);
  r.give_up_after = 5s;
  q.add(r, 0ms);
  q.add(solo(2, 3000), 0ms);  // the queue's 60 s
  CHECK(q.tick(4999ms).expired.empty());
  CHECK(q.tick(5s).expired == std::vector<ticket_id>{1});
  CHECK(q.tick(59999ms).expired.empty());
  CHECK(q.tick(60s).expired == std::vector<ticket_id>{2});
  CHECK(q.waiting() == 0);
  CHECK(q.stats().expired == 2);
}

TEST_CASE("the staged latency policy: ideal, expand, warm body, failed or bots",
          "[session][queue][latency]") {
  session_queue q(coop(), equator(2), 1);
  // Three players near dc0 (40 ms), one at 80 ms from it.
  q.add(with_rtt(1, 1500, {40, 200}), 0ms);
  q.add(with_rtt(2, 1500, {30, 200}), 0ms);
  q.add(with_rtt(3, 1500, {45, 200}), 0ms);
  q.add(with_rtt(4, 1500, {80, 200}), 0ms);
  CHECK(q.tick(9999ms).matches.empty());  // player 4 is beyond 50 ms
  auto r = q.tick(10s);                   // everyone accepts 100 ms now
  REQUIRE(r.matches.size() == 1);
  CHECK(r.matches[0].datacenter == 0);
  CHECK(r.matches[0].worst_rtt_ms == 80);

  // A warm body (300 ms away) fills a group short of a player after 20 s.
  q.add(with_rtt(11, 1500, {300, 300}), 0ms);
  q.add(with_rtt(12, 1500, {20, 300}), 19s);
  q.add(with_rtt(13, 1500, {20, 300}), 19s);
  q.add(with_rtt(14, 1500, {20, 300}), 19s);
  CHECK(q.tick(19999ms).matches.empty());
  r = q.tick(20s);
  REQUIRE(r.matches.size() == 1);
  CHECK(all_players(r.matches[0]) == std::vector<player_id>{11, 12, 13, 14});
  CHECK(r.matches[0].worst_rtt_ms == 300);

  // Alone for 30 s: failed, or a bot match where the queue has bots.
  q.add(with_rtt(21, 1500, {20, 300}), 20s);
  r = q.tick(50s);
  CHECK(r.failed == std::vector<ticket_id>{9});
  queue_config with_bots = coop();
  with_bots.bots = true;
  session_queue b(with_bots, equator(2), 1);
  b.add(with_rtt(1, 1500, {70, 20}), 0ms);
  r = b.tick(30s);
  REQUIRE(r.matches.size() == 1);
  CHECK(r.matches[0].bot_match);
  CHECK(r.matches[0].datacenter == 1);
  CHECK(b.stats().bot_matches == 1);
}

TEST_CASE("the datacenter: none preferred within the ideal band, nearer above it",
          "[session][queue][latency]") {
  queue_config duel = coop(2);
  std::map<std::size_t, int> chosen;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    session_queue q(duel, equator(3), seed);
    q.add(with_rtt(1, 1500, {10, 45, 90}), 0ms);
    q.add(with_rtt(2, 1500, {40, 20, 90}), 0ms);
    const auto r = q.tick(1s);
    REQUIRE(r.matches.size() == 1);
    ++chosen[r.matches[0].datacenter];
  }
  CHECK(chosen[0] > 10);  // both within 50 ms at dc0 and dc1: drawn
  CHECK(chosen[1] > 10);
  CHECK(chosen.count(2) == 0);
  // Above the band, the lowest worst RTT wins.
  session_queue q(duel, equator(3), 1);
  q.add(with_rtt(1, 1500, {60, 95, 70}), 0ms);
  q.add(with_rtt(2, 1500, {90, 55, 65}), 0ms);
  const auto r = q.tick(10s);
  REQUIRE(r.matches.size() == 1);
  CHECK(r.matches[0].datacenter == 2);
  CHECK(r.matches[0].worst_rtt_ms == 70);
}

TEST_CASE("parties stay together, on one team, and teams come out balanced", "[session][queue]") {
  queue_config c;
  c.name = "3v3";
  c.min_players = c.max_players = 6;
  c.teams = 2;
  c.team_size = 3;
  c.max_party_size = 3;
  rule balance;
  balance.name = "balance";
  balance.kind = rule_kind::team_balance;
  balance.max_difference = 100;
  c.rules = {skill(1000), balance};
  session_queue q(c, latency_model{}, 3);
  q.add({{player(1, 1800), player(2, 1700), player(3, 1600)}, std::nullopt, false}, 0ms);
  q.add({{player(4, 1750), player(5, 1650)}, std::nullopt, false}, 0ms);
  q.add(solo(6, 1700), 0ms);
  q.add(solo(7, 1500), 0ms);
  const auto r = q.tick(1s);
  REQUIRE(r.matches.size() == 1);
  const auto& m = r.matches[0];
  const auto team_of = [&](player_id p) {
    return std::find(m.teams[0].begin(), m.teams[0].end(), p) != m.teams[0].end() ? 0 : 1;
  };
  CHECK(team_of(1) == team_of(2));
  CHECK(team_of(2) == team_of(3));
  CHECK(team_of(4) == team_of(5));
  CHECK(m.teams[0].size() == 3);
  CHECK(m.teams[1].size() == 3);
  CHECK(q.waiting() == 1);  // one solo left over
}

TEST_CASE("restored tickets keep their ids and creation times", "[session][queue]") {
  session_queue q(one_vs_one(100, {100, 10s, 400}), latency_model{}, 1);
  ticket_request r = solo(1, 1000);
  r.give_up_after = 30s;
  q.restore(r, 5s, 41);
  CHECK(q.is_waiting(41));
  CHECK(q.ticket_of(1) == 41);
  CHECK(q.add(solo(2, 1300), 20s).id == 42);  // ids go on after the highest
  CHECK_THROWS_WITH(q.restore(solo(3, 1000), 0s, 41), StartsWith("id: "));
  CHECK_THROWS_WITH(q.restore(solo(3, 1000), 0s, 0), StartsWith("id: "));
  CHECK_THROWS_WITH(q.restore(solo(1, 1000), 0s, 50), Contains("already waits"));
  // 300 apart: the restored ticket has waited since 5 s, so its threshold
  // reached 300 at 25 s, when the new one's is still 100... and it is the
  // older seed.
  CHECK(q.tick(24s).matches.empty());
  const auto r2 = q.tick(25s);
  REQUIRE(r2.matches.size() == 1);
  CHECK(r2.matches[0].tickets == std::vector<ticket_id>{41, 42});
  CHECK(r2.matches[0].created == std::vector<time_ms>{5s, 20s});
  // Its give-up time came from its creation: 35 s.
  q.restore(r, 5s, 60);
  CHECK(q.tick(34s).expired.empty());
  CHECK(q.tick(35s).expired == std::vector<ticket_id>{60});
}

TEST_CASE("a ticket added after others left holds only its own party and values",
          "[session][queue]") {
  // The records of tickets that leave are reused for the next ones' buffers:
  // a new ticket must not keep anything of the one before.
  queue_config c = coop(4);
  rule mode;
  mode.name = "mode";
  mode.kind = rule_kind::equality;
  mode.attribute = "mode";
  c.rules = {skill(100), mode};
  const auto party = [](player_id first, std::size_t size, const std::string& m) {
    ticket_request r;
    for (std::size_t i = 0; i < size; ++i) {
      ticket_player p = player(first + i, 1000 + 10 * static_cast<double>(i));
      p.strings = {{"mode", m}};
      p.location = geo_point{0, 10.0 * static_cast<double>(i)};
      r.players.push_back(p);
    }
    return r;
  };
  session_queue q(c, equator(3), 1);
  q.add(party(1, 3, "a"), 0s);
  q.add(party(10, 1, "a"), 0s);
  q.add(party(20, 2, "a"), 0s);
  q.add(party(30, 2, "a"), 0s);
  REQUIRE(q.tick(1s).matches.size() == 2);
  REQUIRE(q.waiting() == 0);
  // The same tickets in a queue that never had others: the same records.
  session_queue fresh(c, equator(3), 1);
  for (const auto& [first, size] :
       std::vector<std::pair<player_id, std::size_t>>{{40, 1}, {50, 4}, {60, 2}}) {
    const ticket_request r = party(first, size, "b");
    const waiting_ticket& t = *q.find(q.add(r, 2s).id);
    const waiting_ticket& f = *fresh.find(fresh.add(r, 2s).id);
    CHECK(t.players == f.players);
    CHECK(t.player_mmr == f.player_mmr);
    CHECK(t.mmr == f.mmr);
    CHECK(t.numbers == f.numbers);
    CHECK(t.labels.size() == f.labels.size());
    CHECK(t.sets == f.sets);
    CHECK(t.rtt == f.rtt);
    CHECK(t.fast_track == f.fast_track);
    CHECK(t.team_of == f.team_of);
    CHECK(t.shared == f.shared);
    CHECK(t.created == f.created);
    CHECK(t.give_up_at == f.give_up_at);
  }
  // And they match as what they are now: the party of four alone; the
  // solo "a" joins none of the "b" tickets.
  const ticket_id solo_a = q.add(party(70, 1, "a"), 2s).id;
  const auto r = q.tick(3s);
  REQUIRE(r.matches.size() == 1);
  CHECK(r.matches[0].teams[0] == std::vector<player_id>{50, 51, 52, 53});
  CHECK(q.waiting() == 3);
  CHECK(q.is_waiting(solo_a));
}
