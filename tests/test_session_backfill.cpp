// Backfill in the session queue: running matches' open seats filled in the
// tick before new matches form, seat reservations (confirm, release,
// expiry, restore), the errors of the requests; then invariants over
// thousands of random queues, and an oracle on small ones: no ticket left
// waiting could have taken a seat still open.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
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
using mm::player_id;

namespace {

// A running match of `players` (id, MMR) in one list per team.
backfill_request running(const std::string& id, std::vector<std::vector<ticket_player>> teams,
                         const std::string& dc = "dc0") {
  backfill_request r;
  r.match_id = id;
  r.datacenter = dc;
  r.teams = std::move(teams);
  r.server = "10.0.0.1:7777";
  return r;
}

queue_config two_teams(std::uint32_t team_size, std::uint32_t party = 1) {
  queue_config c;
  c.name = "squads";
  c.teams = 2;
  c.team_size = team_size;
  c.min_players = c.max_players = 2 * team_size;
  c.max_party_size = party;
  c.rules = {skill(100)};
  return c;
}

std::string refused_with(const std::function<void()>& f, mm::errc want) {
  try {
    f();
  } catch (const mm::error& e) {
    CHECK(e.code() == want);
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("open seats are filled before new matches form, and the tickets leave matched",
          "[session][backfill]") {
  session_queue q(coop(4), equator(3), 7);
  q.add_backfill(running("m1", {{player(100, 1500), player(101, 1500)}}), 0ms);
  // Two solos who could also form a new match with two more: the running
  // match takes them first.
  for (player_id p = 1; p <= 4; ++p) q.add(with_rtt(p, 1500, {20, 40, 60}), 0ms);
  const tick_result r = q.tick(1000ms);
  REQUIRE(r.placed.size() == 1);
  const seat_reservation& res = r.placed[0].reservation;
  CHECK(res.match_id == "m1");
  CHECK(res.players.size() == 2);
  CHECK(res.tickets.size() == 2);
  CHECK(res.expires_at == 1000ms + 30s);
  CHECK(r.placed[0].server == "10.0.0.1:7777");
  CHECK(r.placed[0].datacenter == 0);
  CHECK(r.matches.empty());  // the two others: not enough for a new match of 4
  CHECK(q.waiting() == 2);
  for (ticket_id t : res.tickets) CHECK_FALSE(q.is_waiting(t));
  CHECK(q.stats().backfilled == 2);
  CHECK(q.stats().placements == 1);
  const running_match& m = *q.backfills().find("m1");
  CHECK(q.backfills().open(m) == 0);
  CHECK(m.reserved[0] == 2);
  // Full: nothing more is placed.
  CHECK(q.tick(2000ms).placed.empty());
  CHECK(q.waiting() == 2);
}

TEST_CASE("a candidate joins only within every rule of the players in, at the match's datacenter",
          "[session][backfill]") {
  queue_config c = coop(3);
  c.rules = {skill(100, {100, 10s, 400})};
  session_queue q(c, equator(3), 7);
  q.add_backfill(running("m1", {{player(100, 1500), player(101, 1520)}}, "dc2"), 0ms);
  q.add(with_rtt(1, 1700, {20, 40, 60}), 0ms);   // 190 from the match's mean of 1510
  q.add(with_rtt(2, 1550, {20, 40, 300}), 0ms);  // near, but dc2 is 300 ms away
  CHECK(q.tick(1000ms).placed.empty());
  // After 10 s of backfilling the skill threshold is 200: player 1 fits
  // (60 ms to dc2 is within its expanded stage); player 2 still does not.
  const tick_result r = q.tick(10'000ms);
  REQUIRE(r.placed.size() == 1);
  CHECK(r.placed[0].reservation.players == std::vector<player_id>{1});
}

TEST_CASE("parties stay whole in one team's open seats, and team balance holds",
          "[session][backfill]") {
  queue_config c = two_teams(3, 2);
  c.rules = {skill(1000)};
  c.rules.push_back([] {
    rule b;
    b.name = "balance";
    b.kind = rule_kind::team_balance;
    b.max_difference = 50;
    return b;
  }());
  session_queue q(c, equator(1), 3);
  // Team 0 has one open seat, team 1 two.
  q.add_backfill(running("m1", {{player(100, 1500), player(101, 1500)}, {player(102, 1500)}}), 0ms);
  ticket_request duo = solo(1, 1500);
  duo.players.push_back(player(2, 1500));
  q.add(duo, 0ms);
  q.add(solo(3, 1800), 0ms);  // would pull team 0's mean 100 above team 1's
  tick_result r = q.tick(500ms);
  REQUIRE(r.placed.size() == 1);
  std::map<player_id, std::uint32_t> team;
  const auto read = [&](const seat_reservation& res) {
    for (std::size_t i = 0; i < res.players.size(); ++i) team[res.players[i]] = res.team_of[i];
  };
  read(r.placed[0].reservation);
  CHECK(team.size() == 2);
  CHECK(team[1] == 1);  // the duo: only team 1 has two open seats
  CHECK(team[2] == 1);
  CHECK(q.ticket_of(3) != 0);
  q.add(solo(4, 1510), 600ms);
  r = q.tick(1000ms);
  REQUIRE(r.placed.size() == 1);
  read(r.placed[0].reservation);
  CHECK(team[4] == 0);
  CHECK(q.ticket_of(3) != 0);
}

TEST_CASE("a player in the match, or holding a seat in it, is not placed into it again",
          "[session][backfill]") {
  session_queue q(coop(4), equator(1), 1);
  q.add_backfill(running("m1", {{player(100, 1500)}}), 0ms);
  q.add(with_rtt(100, 1500, {10}), 0ms);  // queued while in the match
  q.add(with_rtt(1, 1500, {10}), 0ms);
  auto r = q.tick(1000ms);
  REQUIRE(r.placed.size() == 1);
  CHECK(r.placed[0].reservation.players == std::vector<player_id>{1});
  q.add(with_rtt(1, 1500, {10}), 1000ms);  // holds a seat, and queues again
  r = q.tick(2000ms);
  CHECK(r.placed.empty());
  CHECK(q.ticket_of(100) != 0);
  CHECK(q.ticket_of(1) != 0);
}

TEST_CASE("higher priority first, then the match registered first", "[session][backfill]") {
  session_queue q(coop(2), equator(1), 1);
  q.add_backfill(running("old", {{player(100, 1500)}}), 0ms);
  q.add_backfill(running("new", {{player(101, 1500)}}), 10ms);
  q.add(with_rtt(1, 1500, {10}), 20ms);
  auto r = q.tick(1000ms);
  REQUIRE(r.placed.size() == 1);
  CHECK(r.placed[0].reservation.match_id == "old");
  auto urgent = running("urgent", {{player(102, 1500)}});
  urgent.priority = 5;
  q.add_backfill(urgent, 2000ms);
  q.add(with_rtt(2, 1500, {10}), 2000ms);
  r = q.tick(3000ms);
  REQUIRE(r.placed.size() == 1);
  CHECK(r.placed[0].reservation.match_id == "urgent");
}

TEST_CASE("a reservation holds its seats until confirmed, released or expired",
          "[session][backfill]") {
  queue_config c = coop(3);
  c.reservation_timeout = 5s;
  session_queue q(c, equator(1), 1);
  q.add_backfill(running("m1", {{player(100, 1500)}}), 0ms);
  q.add(with_rtt(1, 1500, {10}), 0ms);
  q.add(with_rtt(2, 1500, {10}), 0ms);
  auto r = q.tick(1000ms);
  REQUIRE(r.placed.size() == 1);
  const reservation_id first = r.placed[0].reservation.id;
  const running_match& m = *q.backfills().find("m1");
  // Player 1 joined, player 2 will not: one seat opens.
  q.confirm_reservation(first, {1});
  CHECK(m.in[0] == 2);
  CHECK(m.reserved[0] == 1);
  q.release_reservation(first, {2});
  CHECK(m.reserved[0] == 0);
  CHECK(q.backfills().reservation(first) == nullptr);  // no player left in it
  CHECK(q.backfills().open(m) == 1);
  CHECK(refused_with([&] { q.confirm_reservation(first, {}); }, mm::errc::not_found) != "accepted");
  // A new placement, left to expire.
  q.add(with_rtt(3, 1500, {10}), 2000ms);
  r = q.tick(2000ms);
  REQUIRE(r.placed.size() == 1);
  const reservation_id second = r.placed[0].reservation.id;
  CHECK_THAT(refused_with([&] { q.confirm_reservation(second, {99}); }, mm::errc::invalid_argument),
             Contains("players[0]: player 99 holds no seat"));
  CHECK(q.tick(6999ms).reservations_expired.empty());
  r = q.tick(7000ms);
  REQUIRE(r.reservations_expired.size() == 1);
  CHECK(r.reservations_expired[0].id == second);
  CHECK(q.backfills().open(m) == 1);
  CHECK(q.stats().reservations_expired == 1);
}

TEST_CASE("an update lists the players now: reserved ones listed have joined",
          "[session][backfill]") {
  session_queue q(two_teams(2), equator(1), 1);
  q.add_backfill(running("m1", {{player(100, 1500)}, {player(101, 1500)}}), 0ms);
  q.add(solo(1, 1500), 0ms);
  q.add(solo(2, 1500), 0ms);
  const auto r = q.tick(100ms);
  REQUIRE(r.placed.size() == 1);
  const seat_reservation res = r.placed[0].reservation;
  REQUIRE(res.players.size() == 2);
  const running_match& m = *q.backfills().find("m1");
  // Player 101 left; a reserved player who joined is listed on team 1: the
  // other keeps its seat.
  const std::uint32_t t0 = res.team_of[0];
  std::vector<std::vector<ticket_player>> now(2);
  now[0] = {player(100, 1500)};
  now[t0].push_back(player(res.players[0], 1500));
  q.update_backfill(running("m1", now), 200ms);
  CHECK(q.backfills().reservation(res.id)->players == std::vector<player_id>{res.players[1]});
  CHECK(m.in[0] + m.in[1] == 2);
  CHECK(m.reserved[0] + m.reserved[1] == 1);
  // A roster that, with the seat still reserved, overfills a team is refused
  // and changes nothing.
  const std::uint32_t t1 = res.team_of[1];
  std::vector<std::vector<ticket_player>> over(2);
  over[t1] = {player(200, 1500), player(201, 1500)};
  CHECK_THAT(refused_with([&] { q.update_backfill(running("m1", over), 300ms); },
                          mm::errc::invalid_argument),
             Contains("teams[" + std::to_string(t1) + "]: 3 players and reserved seats"));
  CHECK(m.in[0] + m.in[1] == 2);
  CHECK(q.backfills().reservation(res.id) != nullptr);
}

TEST_CASE("backfill requests the queue cannot take are refused, naming the field",
          "[session][backfill]") {
  queue_config c = two_teams(2);
  c.max_backfills = 1;
  session_queue q(c, equator(2), 1);
  const auto bad = [&](backfill_request r) {
    return refused_with([&] { q.add_backfill(r, 0ms); }, mm::errc::invalid_argument);
  };
  const std::vector<std::vector<ticket_player>> teams{{player(1, 1500)}, {player(2, 1500)}};
  CHECK_THAT(bad(running("", teams)), Contains("match_id:"));
  CHECK_THAT(bad(running("m", teams, "nowhere")), Contains("datacenter: no datacenter 'nowhere'"));
  CHECK_THAT(bad(running("m", teams, "")),
             Contains("datacenter: required: the queue's matches run in its datacenters"));
  CHECK_THAT(bad(running("m", {{player(1, 1500)}})), Contains("teams: a list per team: 2 lists"));
  CHECK_THAT(bad(running("m", {{}, {}})), Contains("teams: a running match needs"));
  CHECK_THAT(bad(running("m", {{player(1, 1500), player(3, 1), player(4, 1)}, {}})),
             Contains("teams[0]: 3 players is more than the 2 seats"));
  CHECK_THAT(bad(running("m", {{player(1, 1500)}, {player(2, std::nan(""))}})),
             Contains("teams[1][0].mmr: must be a finite number"));
  CHECK_THAT(bad(running("m", {{player(1, 1500)}, {player(1, 1500)}})),
             Contains("teams[1][0].id: player 1 is in the party twice"));
  q.add_backfill(running("m", teams), 0ms);
  CHECK_THAT(refused_with([&] { q.add_backfill(running("m", teams), 0ms); }, mm::errc::conflict),
             Contains("match_id: match 'm' backfills already"));
  CHECK_THAT(
      refused_with([&] { q.add_backfill(running("n", teams), 0ms); }, mm::errc::limit_reached),
      Contains("max_backfills of 1"));
  CHECK(refused_with([&] { q.update_backfill(running("n", teams), 0ms); }, mm::errc::not_found) !=
        "accepted");
  CHECK_FALSE(q.stop_backfill("n"));
  CHECK(q.stop_backfill("m")->empty());
  CHECK(q.backfills().size() == 0);
}

TEST_CASE("a restored match keeps the reservations whose seats are still open",
          "[session][backfill]") {
  session_queue q(two_teams(2), equator(1), 1);
  seat_reservation kept, dropped;
  kept.id = 41;
  kept.players = {7};
  kept.team_of = {1};
  kept.mmr = {1500};
  kept.expires_at = 9000ms;
  dropped = kept;
  dropped.id = 42;
  dropped.players = {8};    // team 1 has no seat left for it
  seat_reservation joined;  // confirmed before: in the match, beyond its list
  joined.players = {9, 10};
  joined.team_of = {0, 0};
  joined.mmr = {1400, 1600};
  const auto lost = q.restore_backfill(running("m1", {{player(1, 1500)}, {player(2, 1500)}}), 500ms,
                                       {kept, dropped}, joined);
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].id == 42);
  const running_match& m = *q.backfills().find("m1");
  CHECK(m.listed == 2);
  CHECK(m.players.players == std::vector<player_id>{1, 2, 9});  // team 0 had one seat for them
  CHECK(m.in[0] == 2);
  CHECK(m.registered == 500ms);
  CHECK(m.reserved[1] == 1);
  CHECK(q.backfills().reservation(41)->expires_at == 9000ms);
  CHECK(q.tick(9000ms).reservations_expired.size() == 1);
}

TEST_CASE("a copy of a queue fills its own running matches after the original stopped them",
          "[session][backfill]") {
  session_queue q(coop(4), equator(3), 7);
  q.add_backfill(running("m1", {{player(100, 1500), player(101, 1500)}}), 0ms);
  q.add_backfill(running("m2", {{player(102, 1500), player(103, 1500), player(104, 1500)}}), 0ms);
  for (player_id p = 1; p <= 3; ++p) q.add(with_rtt(p, 1500, {20, 40, 60}), 0ms);
  const session_queue copy = q;
  // The book lists its matches for the tick's fill order: the copy's list
  // is of its own matches, not of the original's, which end here.
  q.stop_backfill("m1");
  q.stop_backfill("m2");
  session_queue twin = copy;
  const tick_result r = twin.tick(1000ms);
  std::set<std::string> filled;
  for (const auto& p : r.placed) filled.insert(p.reservation.match_id);
  CHECK(filled == std::set<std::string>{"m1", "m2"});
  CHECK(twin.waiting() == 0);
  CHECK(twin.backfills().open(*twin.backfills().find("m1")) == 0);
  CHECK(q.tick(1000ms).placed.empty());
}
