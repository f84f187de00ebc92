// Session tickets under kill -9: several clients create (solo and
// multi-queue tickets), cancel and long-poll while the real matchmakerd is
// killed with SIGKILL at random moments, many times, on SQLite and on a real
// PostgreSQL server. After every restart each ticket acknowledged since the
// last kill and a sample of the older ones, and after the last restart every
// acknowledged ticket, is still there (waiting under its id, or with its
// outcome), a cancel that answered
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
#include "ticket_ledger.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

// After a kill: every ticket acknowledged since the last check, and a random
// sample of the older ones. Reading all of them after every kill made the
// test quadratic in its tickets (270 s of a CI run on SQLite); the last check
// reads them all.
std::set<std::string> to_check(ledger& l, std::set<std::string>& checked, rng& r) {
  std::lock_guard lock(l.m);
  std::set<std::string> out;
  std::vector<std::string> older;
  for (const auto& id : l.acknowledged)
    if (checked.insert(id).second)
      out.insert(id);
    else
      older.push_back(id);
  constexpr std::size_t older_sample = 200;
  for (std::size_t k = 0; k < older_sample && !older.empty(); ++k)
    out.insert(older[r.below(older.size())]);
  return out;
}

void crash_rounds(live_server& s, std::uint64_t n) {
  ledger l;
  rng r(20261125);
  std::set<std::string> checked;
  for (std::uint64_t round = 0; round < n; ++round) {
    if (round > 0) {
      s.start();
      INFO("after kill " << round);
      const std::set<std::string> some = to_check(l, checked, r);
      check_all(reader_of(s), l, &some);
      check_events(reader_of(s), l);
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int who = 0; who < 3; ++who)
      clients.emplace_back([&, who, round] { ticket_client(single_node(s), who, round, stop, l); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + r.below(400)));  // a random moment
    s.kill_hard();
    stop = true;
    for (auto& t : clients) t.join();
  }
  s.start();
  const auto [waiting, finished] = check_all(reader_of(s), l);
  check_events(reader_of(s), l);
  CHECK(l.ids_reused == 0);
  CHECK(l.acknowledged.size() >= n);
  CHECK(finished > 0);
  WARN(n << " kills: " << l.acknowledged.size() << " acknowledged tickets, 0 lost (" << waiting
         << " waiting, " << finished << " finished), " << l.cancelled.size()
         << " acknowledged cancels kept, " << l.told.size() << " told matches kept");
}

}  // namespace

TEST_CASE("kill -9 loses no acknowledged session ticket, on SQLite", "[reliability][crash]") {
  live_server s(ticket_queues_patch(), 0);
  crash_rounds(s, rounds(50));
}

TEST_CASE("kill -9 loses no acknowledged session ticket, on PostgreSQL",
          "[reliability][crash][postgres]") {
  if (!have_postgres()) return;
  postgres_server pg;
  json patch = ticket_queues_patch();
  patch["database"] = {{"url", pg.url()}};
  live_server s(patch, 0);
  crash_rounds(s, rounds(20));
}
