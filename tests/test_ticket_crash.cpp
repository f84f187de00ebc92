// Session tickets under kill -9: several clients create (solo and
// multi-queue tickets), cancel and long-poll while the real matchmakerd is
// killed with SIGKILL at random moments, many times, on SQLite and on a real
// PostgreSQL server. After every restart each acknowledged ticket is still
// there (waiting under its id, or with its outcome), a cancel that answered
// true stays cancelled, a match a client was told is the one the server
// keeps, no ticket is in two matches and no id is handed out twice; the
// ticket events read back from sequence 0 agree, each event once.
// MM_RELIABILITY_ROUNDS=N multiplies the kills.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "mm/engine/random.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"
#include "reliability_rounds.hpp"
#include "server_fixture.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

json crash_patch() {
  return {{"demo", {{"session_players_per_second", 0}}},
          {"sessions",
           {{"max_outcomes", 10'000'000},  // every event of a longer run is still held
            {"datacenters",
             {{{"name", "paris"}, {"latitude", 48.9}, {"longitude", 2.4}, {"region", "eu"}}}},
            {"queues",
             {{{"name", "duel"}, {"tick", "50ms"}, {"give_up_after", "600s"}},
              {{"name", "coop"},
               {"min_players", 4},
               {"max_players", 4},
               {"teams", 0},
               {"max_party_size", 2},
               {"tick", "50ms"},
               {"give_up_after", "600s"}}}}}}};
}

// What the clients were told, across every round.
struct ledger {
  std::mutex m;
  std::set<std::string> acknowledged;       // 201 answered
  std::set<std::string> cancelled;          // a DELETE answered cancelled: true
  std::map<std::string, std::string> told;  // ticket -> the match id a long-poll answered
  std::uint64_t ids_reused = 0;
};

// One client until `stop`: creates tickets with players of its own, cancels
// some, long-polls others.
void client(const live_server& s, int who, std::uint64_t round, std::atomic<bool>& stop,
            ledger& l) {
  httplib::Client c("127.0.0.1", s.port());
  c.set_keep_alive(true);
  c.set_read_timeout(5s);
  const httplib::Headers auth{{"Authorization", "Bearer " + test_token}};
  rng r(round * 100 + static_cast<std::uint64_t>(who));
  std::vector<std::string> mine;
  for (std::uint64_t n = 0; !stop; ++n) {
    const std::uint64_t player = (round * 10 + static_cast<std::uint64_t>(who)) * 1'000'000 + n + 1;
    json body = {{"players", {{{"id", player}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}};
    const auto kind = r.below(3);
    if (kind == 0) body["queue"] = "duel";
    if (kind == 1) body["queue"] = "coop";
    if (kind == 2) body["queues"] = {"coop", "duel"};
    auto res = c.Post("/api/tickets", auth, body.dump(), "application/json");
    if (!res) return;  // killed
    if (res->status == 201) {
      const std::string id = json::parse(res->body)["ticket"];
      std::lock_guard lock(l.m);
      if (!l.acknowledged.insert(id).second) ++l.ids_reused;
      mine.push_back(id);
    }
    if (!mine.empty() && r.below(4) == 0) {
      const std::string& id = mine[r.below(mine.size())];
      auto del = c.Delete("/api/tickets/" + id, auth);
      if (!del) return;
      if (del->status == 200 && json::parse(del->body)["cancelled"] == true) {
        std::lock_guard lock(l.m);
        l.cancelled.insert(id);
      }
    }
    if (!mine.empty() && r.below(4) == 0) {
      const std::string& id = mine[r.below(mine.size())];
      auto got = c.Get("/api/tickets/" + id + "?wait=1", auth);
      if (!got) return;
      if (got->status == 200) {
        const json o = json::parse(got->body);
        if (o["state"] == "matched") {
          std::lock_guard lock(l.m);
          l.told[id] = o["match"]["id"];
        }
      }
    }
  }
}

// Every acknowledged ticket is there, and agrees with what was told; no
// ticket is in two matches. Returns (waiting, finished).
std::pair<std::size_t, std::size_t> check_all(const live_server& s, ledger& l) {
  std::lock_guard lock(l.m);
  std::size_t waiting = 0, finished = 0, lost = 0, contradicted = 0;
  std::map<std::string, std::string> match_of;  // ticket -> its match, as the server says
  std::map<std::string, std::set<std::string>> tickets_of;  // match -> its tickets
  for (const auto& id : l.acknowledged) {
    auto r = s.get("/api/tickets/" + id, test_token);
    REQUIRE(r);
    if (r->status != 200) {
      ++lost;
      continue;
    }
    const json o = json::parse(r->body);
    if (o["state"] == "waiting")
      ++waiting;
    else
      ++finished;
    if (l.cancelled.count(id) && o["state"] != "cancelled") ++contradicted;
    if (const auto t = l.told.find(id); t != l.told.end())
      if (o["state"] != "matched" || o["match"]["id"] != t->second) ++contradicted;
    if (o["state"] == "matched") {
      match_of[id] = o["match"]["id"];
      for (const auto& t : o["match"]["tickets"]) tickets_of[o["match"]["id"]].insert(t);
    }
  }
  // A ticket's match lists it, and no two matches list the same ticket.
  std::map<std::string, int> listed;
  for (const auto& [match, tickets] : tickets_of)
    for (const auto& t : tickets) ++listed[t];
  std::size_t twice = 0;
  for (const auto& [t, n] : listed) twice += n > 1 ? 1 : 0;
  for (const auto& [t, match] : match_of) CHECK(tickets_of[match].count(t) == 1);
  CHECK(lost == 0);
  CHECK(contradicted == 0);
  CHECK(twice == 0);
  return {waiting, finished};
}

// The events say the same, each once: read from sequence 0 on, page by
// page, every acknowledged ticket has its creation's event, a told match and
// an acknowledged cancel their outcome's, and no ticket two outcomes; the
// sequence numbers only grow, none given twice, none dropped.
void check_events(const live_server& s, ledger& l) {
  std::lock_guard lock(l.m);
  std::set<std::string> created;
  std::map<std::string, json> outcome;
  std::uint64_t after = 0, out_of_order = 0, two_outcomes = 0, missed = 0;
  for (;;) {
    const json page =
        s.get_json("/api/events?limit=1000&after=" + std::to_string(after), test_token);
    missed += page["missed"] == true ? 1 : 0;
    for (const auto& e : page["events"]) {
      if (e["seq"].get<std::uint64_t>() <= after) ++out_of_order;
      after = e["seq"];
      const std::string id = e["ticket"];
      if (e["state"] == "waiting")
        created.insert(id);
      else if (!outcome.emplace(id, e).second)
        ++two_outcomes;
    }
    after = std::max(after, page["next_after"].get<std::uint64_t>());
    if (page["more"] != true) break;
  }
  std::size_t no_creation = 0, contradicted = 0;
  for (const auto& id : l.acknowledged) no_creation += created.count(id) == 0 ? 1 : 0;
  for (const auto& [id, match] : l.told) {
    const auto o = outcome.find(id);
    if (o == outcome.end() || o->second["state"] != "matched" || o->second["match"]["id"] != match)
      ++contradicted;
  }
  for (const auto& id : l.cancelled) {
    const auto o = outcome.find(id);
    if (o == outcome.end() || o->second["state"] != "cancelled") ++contradicted;
  }
  CHECK(missed == 0);
  CHECK(out_of_order == 0);
  CHECK(two_outcomes == 0);
  CHECK(no_creation == 0);
  CHECK(contradicted == 0);
}

void crash_rounds(live_server& s, std::uint64_t n) {
  ledger l;
  rng r(20261125);
  for (std::uint64_t round = 0; round < n; ++round) {
    if (round > 0) {
      s.start();
      INFO("after kill " << round);
      check_all(s, l);
      check_events(s, l);
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int who = 0; who < 3; ++who)
      clients.emplace_back([&, who, round] { client(s, who, round, stop, l); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + r.below(400)));  // a random moment
    s.kill_hard();
    stop = true;
    for (auto& t : clients) t.join();
  }
  s.start();
  const auto [waiting, finished] = check_all(s, l);
  check_events(s, l);
  CHECK(l.ids_reused == 0);
  CHECK(l.acknowledged.size() >= n);
  CHECK(finished > 0);
  WARN(n << " kills: " << l.acknowledged.size() << " acknowledged tickets, 0 lost (" << waiting
         << " waiting, " << finished << " finished), " << l.cancelled.size()
         << " acknowledged cancels kept, " << l.told.size() << " told matches kept");
}

}  // namespace

TEST_CASE("kill -9 loses no acknowledged session ticket, on SQLite", "[reliability][crash]") {
  live_server s(crash_patch(), 0);
  crash_rounds(s, rounds(50));
}

TEST_CASE("kill -9 loses no acknowledged session ticket, on PostgreSQL",
          "[reliability][crash][postgres]") {
  if (!have_postgres()) return;
  postgres_server pg;
  json patch = crash_patch();
  patch["database"] = {{"url", pg.url()}};
  live_server s(patch, 0);
  crash_rounds(s, rounds(20));
}
