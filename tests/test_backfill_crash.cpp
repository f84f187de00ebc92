// Backfill under kill -9: a game server registers running matches, stops
// some, and confirms the seats it sees reserved, while players' tickets wait
// to be placed, and the real matchmakerd is killed with SIGKILL at random
// moments, many times, on SQLite and on a real PostgreSQL server. After
// every restart:
// - every match whose registration was acknowledged (201) and not stopped is
//   there, and every acknowledged stop stays stopped;
// - every reservation the game server saw in an answer is still held (the
//   same id) unless the game server confirmed it, and every confirmed player
//   is in the match;
// - every placed ticket (its outcome names the running match) holds a seat
//   there: reserved under its outcome's id, or confirmed;
// - no team holds more than its seats.
// MM_RELIABILITY_ROUNDS=N multiplies the kills.
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "mm/engine/random.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"
#include "reliability_rounds.hpp"
#include "server_fixture.hpp"
#include "ticket_ledger.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

// What the game server and the players were told.
struct backfill_ledger {
  std::mutex m;
  std::set<std::string> registered, stopped;
  // match -> reservation id -> its players, as an answer showed them.
  std::map<std::string, std::map<std::string, std::set<std::uint64_t>>> seen;
  std::map<std::string, std::set<std::uint64_t>> confirmed;  // match -> players
  std::set<std::string> confirmed_reservations;
  std::map<std::string, std::set<std::string>> tickets_of;  // match -> tickets placed into it
  // Sent, with no answer yet (a kill may have come first): either outcome holds.
  std::set<std::string> confirming, stopping;
};

json roster(std::uint64_t first, std::size_t n) {
  json team = json::array();
  for (std::size_t i = 0; i < n; ++i)
    team.push_back({{"id", first + i}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}});
  return json::array({team});
}

// The reservations of a match's JSON into the ledger.
void note_seen(backfill_ledger& l, const std::string& match, const json& b) {
  std::lock_guard lock(l.m);
  for (const auto& r : b["reservations"]) {
    auto& players = l.seen[match][r["id"].get<std::string>()];
    for (const auto& p : r["players"]) players.insert(p.get<std::uint64_t>());
  }
}

// The game server until `stop`: registers matches short of 1 to 3 players,
// confirms what it sees reserved, stops some.
void game_server(const live_server& s, std::uint64_t round, std::atomic<bool>& stop,
                 backfill_ledger& l) {
  const httplib::Headers auth{{"Authorization", "Bearer " + test_token}};
  rng r(round + 77);
  std::vector<std::string> mine;  // registered this round
  for (std::uint64_t n = 0; !stop; ++n) {
    // A game server's pace (not a wait for anything): its matches live long
    // enough for the queue's ticks (50 ms) to place players into them.
    std::this_thread::sleep_for(5ms);
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(5s);
    if (mine.size() < 12) {  // a few matches at a time, watched closely
      const std::string id = "r" + std::to_string(round) + "-m" + std::to_string(n);
      const json body = {{"queue", "coop"},
                         {"match_id", id},
                         {"datacenter", "paris"},
                         {"teams", roster((round * 1000 + n) * 10 + 900'000'000, 1 + r.below(3))}};
      auto res = c.Post("/api/backfills", auth, body.dump(), "application/json");
      if (!res) return;  // killed
      if (res->status == 201) {
        std::lock_guard lock(l.m);
        l.registered.insert(id);
        mine.push_back(id);
      }
    }
    // Every match of the game server's, of every round: their reservations.
    auto got = c.Get("/api/backfills", auth);
    if (!got) return;
    if (got->status != 200) continue;
    const json list = json::parse(got->body);  // named: the loop reads into it
    for (const auto& b : list["backfills"]) {
      const std::string m = b["match_id"];
      note_seen(l, m, b);
      for (const auto& held : b["reservations"]) {
        if (r.below(8) != 0) continue;  // left reserved (for now): it must stay so
        const std::string rid = held["id"];
        {
          std::lock_guard lock(l.m);
          l.confirming.insert(rid);
        }
        auto ok = c.Post("/api/backfills/" + m + "/reservations/" + rid + "/confirm", auth, "{}",
                         "application/json");
        if (!ok) return;
        if (ok->status == 200) {
          std::lock_guard lock(l.m);
          l.confirmed_reservations.insert(rid);
          for (const auto& p : held["players"]) l.confirmed[m].insert(p.get<std::uint64_t>());
        }
      }
      if (r.below(2048) == 0) {
        {
          std::lock_guard lock(l.m);
          l.stopping.insert(m);
        }
        auto del = c.Delete("/api/backfills/" + m, auth);
        if (!del) return;
        if (del->status == 200) {
          std::lock_guard lock(l.m);
          l.stopped.insert(m);
        }
      }
    }
  }
}

// Players: solo coop tickets, long-polled now and then; a placement told is noted.
void players(const live_server& s, std::uint64_t round, std::atomic<bool>& stop,
             backfill_ledger& l) {
  const httplib::Headers auth{{"Authorization", "Bearer " + other_test_token}};
  for (std::uint64_t n = 0; !stop; ++n) {
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(5s);
    const json body = {
        {"queue", "coop"},
        {"players",
         {{{"id", round * 100'000 + n + 1}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}};
    auto res = c.Post("/api/tickets", auth, body.dump(), "application/json");
    if (!res) return;
    if (res->status != 201) continue;
    const std::string ticket = json::parse(res->body)["ticket"];
    auto got = c.Get("/api/tickets/" + ticket + "?wait=1", auth);
    if (!got) return;
    if (got->status != 200) continue;
    const json o = json::parse(got->body);
    if (o["state"] == "matched" && o["match"].contains("running_match")) {
      std::lock_guard lock(l.m);
      l.tickets_of[o["match"]["running_match"]].insert(ticket);
    }
  }
}

// Everything told holds; returns the matches read.
std::size_t check(const live_server& s, backfill_ledger& l) {
  std::lock_guard lock(l.m);
  httplib::Client c("127.0.0.1", s.port());
  c.set_read_timeout(30s);
  const httplib::Headers gs{{"Authorization", "Bearer " + test_token}};
  const httplib::Headers pl{{"Authorization", "Bearer " + other_test_token}};
  std::size_t read = 0;
  for (const auto& m : l.registered) {
    auto got = c.Get("/api/backfills/" + m, gs);
    REQUIRE(got);
    INFO("match " << m << ": " << got->body);
    if (l.stopped.count(m)) {
      CHECK(got->status == 404);
      continue;
    }
    if (got->status == 404 && l.stopping.count(m)) continue;  // a stop the kill cut short
    REQUIRE(got->status == 200);
    ++read;
    const json b = json::parse(got->body);
    std::set<std::uint64_t> in;
    for (const auto& p : b["teams"][0]["players"]) in.insert(p.get<std::uint64_t>());
    CHECK(b["teams"][0]["players_in"].get<std::uint64_t>() +
              b["teams"][0]["reserved"].get<std::uint64_t>() <=
          4);
    std::map<std::string, std::set<std::uint64_t>> held;
    for (const auto& r : b["reservations"])
      for (const auto& p : r["players"]) held[r["id"]].insert(p.get<std::uint64_t>());
    for (const auto p : l.confirmed[m]) CHECK(in.count(p) == 1);
    for (const auto& [rid, seen_players] : l.seen[m]) {
      if (l.confirmed_reservations.count(rid)) continue;
      if (held.count(rid) == 0 && l.confirming.count(rid)) {
        for (const auto p : seen_players) CHECK(in.count(p) == 1);  // its confirm came through
        continue;
      }
      CHECK(held.count(rid) == 1);  // still held, by the same players
      if (held.count(rid)) CHECK(held[rid] == seen_players);
    }
    for (const auto& t : l.tickets_of[m]) {
      auto o = c.Get("/api/tickets/" + t, pl);
      REQUIRE(o);
      const json out = json::parse(o->body);
      CHECK(out["match"]["running_match"] == m);
      const std::string rid = out["match"]["id"];
      bool seated = held.count(rid) == 1;
      for (const auto& team : out["match"]["teams"])
        for (const auto& p : team) seated = seated || in.count(p.get<std::uint64_t>()) == 1;
      CHECK(seated);
    }
  }
  return read;
}

void crash_rounds(live_server& s, std::uint64_t n) {
  backfill_ledger l;
  rng r(20261127);
  std::uint64_t placed = 0;
  for (std::uint64_t round = 0; round < n; ++round) {
    if (round > 0) {
      s.start();
      INFO("after kill " << round);
      check(s, l);
    }
    std::atomic<bool> stop{false};
    std::thread gs([&, round] { game_server(s, round, stop, l); });
    std::thread pl([&, round] { players(s, round, stop, l); });
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + r.below(400)));
    s.kill_hard();
    stop = true;
    gs.join();
    pl.join();
  }
  s.start();
  const std::size_t matches = check(s, l);
  for (const auto& [m, tickets] : l.tickets_of) placed += tickets.size();
  std::size_t seen = 0;
  for (const auto& [m, held] : l.seen) seen += held.size();
  CHECK(seen > 0);
  CHECK(l.registered.size() >= n);
  CHECK(placed > 0);
  WARN(n << " kills: " << l.registered.size() << " matches registered (" << matches
         << " backfilling, " << l.stopped.size() << " stopped), " << placed << " placements told, "
         << seen << " reservations seen, " << l.confirmed_reservations.size()
         << " of them confirmed: 0 lost");
}

json patch_with_long_reservations() {
  json p = ticket_queues_patch();
  // Nothing expires within the test: every reservation seen must stay.
  p["sessions"]["queues"][1]["reservation_timeout"] = "600s";
  return p;
}

}  // namespace

TEST_CASE("kill -9 loses no acknowledged running match nor reservation, on SQLite",
          "[reliability][crash][backfill]") {
  live_server s(patch_with_long_reservations(), 0);
  crash_rounds(s, rounds(25));
}

TEST_CASE("kill -9 loses no acknowledged running match nor reservation, on PostgreSQL",
          "[reliability][crash][backfill][postgres]") {
  if (!have_postgres()) return;
  postgres_server pg;
  json patch = patch_with_long_reservations();
  patch["database"] = {{"url", pg.url()}};
  live_server s(patch, 0);
  crash_rounds(s, rounds(10));
}
