// A ticket that waits in the queues of several services (partitions), in the
// store (mm/storage/ticket_journal.hpp, groups), checked the same way on
// SQLite (test_database.cpp) and PostgreSQL (test_pg_store.cpp): its guest
// rows come with its row and go with its outcome, whoever writes it; the
// first outcome written wins, and a later match that holds it is left out
// whole, events and all, while the rest of its batch is written; and two
// services racing for the same tickets never both match one.
#pragma once

#include <atomic>
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "mm/engine/error.hpp"
#include "mm/storage/player_store.hpp"

namespace mm::test {

inline journal_ticket ticket_row(std::uint64_t serial, std::vector<std::string> guests = {}) {
  journal_ticket t{serial, "duel,brawl", "game",
                   1'700'000'000'000 + static_cast<std::int64_t>(serial), "t"};
  t.guests = std::move(guests);
  return t;
}

// An outcome of `group` (matched), with its event; `contested` for a
// ticket that waits in another service too.
inline void add_matched(journal_batch& b, std::uint64_t serial, std::uint32_t group,
                        bool contested) {
  journal_outcome o{serial, "", 1, 1'700'000'100'000, "m" + std::to_string(serial)};
  o.contested = contested;
  o.group = group;
  b.finished.push_back(o);
  journal_event e{0, serial, "", "duel", 1'700'000'100'000, o.outcome};
  e.group = group;
  if (contested) e.services = "home,guest";
  b.events.push_back(e);
}

inline std::set<std::uint64_t> ids_of(const std::vector<journal_ticket>& rows) {
  std::set<std::uint64_t> out;
  for (const auto& r : rows) out.insert(r.id);
  return out;
}

// `a` and `b`: two connections to one store, writing as the services "S/0"
// and "S/1" (two partitions of the stream "S").
inline void check_contested_groups(player_store& a, player_store& b) {
  const std::string A = "S/0", B = "S/1";
  journal_batch created;
  created.event_stream = "S";
  created.created = {ticket_row(100, {B}), ticket_row(101), ticket_row(102)};
  a.write_journal(A, created);
  journal_batch mine;
  mine.event_stream = "S";
  mine.created = {ticket_row(200), ticket_row(201)};
  b.write_journal(B, mine);
  CHECK(ids_of(b.read_guest_tickets(B)) == std::set<std::uint64_t>{100});
  CHECK(b.read_guest_tickets(A).empty());
  CHECK(ids_of(a.read_waiting_tickets(A)) == std::set<std::uint64_t>{100, 101, 102});
  const std::uint64_t before = a.read_stream_events("S", 0, 100).size();

  // B matches the guest first: its whole batch is written, the guest row goes.
  journal_batch won;
  won.event_stream = "S";
  add_matched(won, 100, 1, true);
  add_matched(won, 200, 1, false);
  std::vector<std::uint32_t> lost{99};
  b.write_journal(B, won, &lost);
  CHECK(lost.empty());
  CHECK(b.read_guest_tickets(B).empty());
  CHECK(ids_of(a.read_waiting_tickets(A)) == std::set<std::uint64_t>{101, 102});

  // A's match of the same ticket (group 7) loses whole; group 8 and the
  // ungrouped outcome are written.
  journal_batch late;
  late.event_stream = "S";
  add_matched(late, 100, 7, true);
  add_matched(late, 101, 7, false);
  add_matched(late, 102, 8, false);
  a.write_journal(A, late, &lost);
  CHECK(lost == std::vector<std::uint32_t>{7});
  CHECK(ids_of(a.read_waiting_tickets(A)) == std::set<std::uint64_t>{101});
  const auto kept = a.read_journal(A, {"S", 0, 100, 0, 100});
  bool b_outcome = false;
  for (const auto& o : kept.retained)
    if (o.id == 100) b_outcome = o.outcome == "m100";
  CHECK(b_outcome);
  // The stream: B's two events then A's one, numbered with no gap.
  const auto events = a.read_stream_events("S", 0, 100);
  REQUIRE(events.size() == before + 3);
  for (std::size_t i = 1; i < events.size(); ++i) CHECK(events[i].seq == events[i - 1].seq + 1);
  CHECK(events[before].ticket == 100);
  CHECK(events[before + 1].ticket == 200);
  CHECK(events[before + 2].ticket == 102);
  CHECK(events[before].services == "home,guest");  // the stream names a contested ticket's
  CHECK(events[before + 1].services.empty());
  // Rows by serial, whatever their service, while they wait.
  CHECK(ids_of(b.read_waiting_rows({100, 101, 201, 999})) == std::set<std::uint64_t>{101, 201});

  // A contested ticket created and matched in one batch is its writer's.
  journal_batch at_once;
  at_once.event_stream = "S";
  at_once.created = {ticket_row(103, {B})};
  add_matched(at_once, 103, 9, true);
  add_matched(at_once, 101, 9, false);
  a.write_journal(A, at_once, &lost);
  CHECK(lost.empty());
  CHECK(a.read_waiting_tickets(A).empty());
  CHECK(b.read_guest_tickets(B).empty());

  // A contested outcome without a group is refused, and nothing is written.
  journal_batch bad;
  add_matched(bad, 201, 0, true);
  CHECK_THROWS_AS(b.write_journal(B, bad), mm::error);
  CHECK(ids_of(b.read_waiting_tickets(B)) == std::set<std::uint64_t>{201});

  // Two outcomes of one ticket in one batch (a queue's failure of it, then
  // a match that holds it): the first is written, the later one's group is
  // left out whole, events and all.
  journal_batch pair;
  pair.event_stream = "S";
  pair.created = {ticket_row(300, {B}), ticket_row(301)};
  a.write_journal(A, pair);
  const std::size_t events_before = a.read_stream_events("S", 0, 1000).size();
  journal_batch twice;
  twice.event_stream = "S";
  add_matched(twice, 300, 11, true);
  add_matched(twice, 300, 12, true);
  add_matched(twice, 301, 12, true);
  a.write_journal(A, twice, &lost);
  CHECK(lost == std::vector<std::uint32_t>{12});
  CHECK(ids_of(a.read_waiting_tickets(A)) == std::set<std::uint64_t>{301});
  const auto after_twice = a.read_stream_events("S", 0, 1000);
  REQUIRE(after_twice.size() == events_before + 1);
  CHECK(after_twice.back().ticket == 300);
}

// Two services race for `n` tickets that wait in both (home "R/0",
// guest "R/1"): each matches every one with a partner of its own, in batches of
// random size, at the same time. Each ticket ends in exactly one match: one
// partner matched, the other still waiting; and every event written is of a
// match that won.
inline void check_contested_race(player_store& a, player_store& b, std::uint64_t n) {
  journal_batch setup_a, setup_b;
  for (std::uint64_t k = 0; k < n; ++k) {
    setup_a.created.push_back(ticket_row(1000 + k, {"R/1"}));
    setup_a.created.push_back(ticket_row(2000 + k));
    setup_b.created.push_back(ticket_row(3000 + k));
  }
  setup_a.event_stream = setup_b.event_stream = "R";
  a.write_journal("R/0", setup_a);
  b.write_journal("R/1", setup_b);
  std::atomic<std::uint64_t> lost_a{0}, lost_b{0};
  const auto race = [n](player_store& s, const char* service, std::uint64_t partner,
                        std::uint64_t seed, std::atomic<std::uint64_t>& lost_count) {
    std::uint64_t k = 0;
    std::uint64_t x = seed;
    while (k < n) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const std::uint64_t size = 1 + (x >> 33) % 5;
      journal_batch batch;
      batch.event_stream = "R";
      for (std::uint64_t i = 0; i < size && k < n; ++i, ++k) {
        add_matched(batch, 1000 + k, static_cast<std::uint32_t>(k + 1), true);
        add_matched(batch, partner + k, static_cast<std::uint32_t>(k + 1), false);
      }
      std::vector<std::uint32_t> lost;
      s.write_journal(service, batch, &lost);
      lost_count += lost.size();
    }
  };
  std::thread ta([&] { race(a, "R/0", 2000, 1, lost_a); });
  std::thread tb([&] { race(b, "R/1", 3000, 2, lost_b); });
  ta.join();
  tb.join();
  const auto waiting_a = ids_of(a.read_waiting_tickets("R/0"));
  const auto waiting_b = ids_of(b.read_waiting_tickets("R/1"));
  std::uint64_t twice = 0, never = 0;
  for (std::uint64_t k = 0; k < n; ++k) {
    CHECK(waiting_a.count(1000 + k) == 0);
    const bool a_won = waiting_a.count(2000 + k) == 0, b_won = waiting_b.count(3000 + k) == 0;
    twice += a_won && b_won;
    never += !a_won && !b_won;
  }
  CHECK(twice == 0);
  CHECK(never == 0);
  CHECK(lost_a + lost_b == n);  // every ticket: one match won, the other lost
  const auto events = a.read_stream_events("R", 0, 10 * n);
  CHECK(events.size() == 2 * n);  // two events a winning match, none of a lost one
  std::set<std::uint64_t> told;
  for (const auto& e : events) told.insert(e.ticket);
  CHECK(told.size() == 2 * n);
  CHECK(b.read_guest_tickets("R/1").empty());
}

}  // namespace mm::test
