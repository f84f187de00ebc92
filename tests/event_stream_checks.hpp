// The event stream that session services sharing a store number their
// events in (mm/storage/ticket_journal.hpp, journal_batch::event_stream),
// checked the same way on SQLite (test_database.cpp) and PostgreSQL
// (test_pg_store.cpp): one sequence for all, in commit order, no number
// twice and none skipped, even with two writers at once.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "mm/engine/random.hpp"
#include "mm/storage/player_store.hpp"

namespace mm::test {

inline journal_batch streamed_events(const std::string& stream, std::size_t n) {
  journal_batch b;
  b.event_stream = stream;
  for (std::size_t i = 0; i < n; ++i)
    b.events.push_back({999, 100 + i, "", "duel", 1'700'000'000'000, "e"});  // seq ignored
  return b;
}

// The numbers of a service's events, as a start reads them back.
inline std::vector<std::uint64_t> event_numbers(player_store& s, const std::string& service,
                                                const std::string& stream) {
  journal_read r;
  r.event_stream = stream;
  r.max_events = 100'000;
  std::vector<std::uint64_t> out;
  for (const auto& e : s.read_journal(service, r).events) out.push_back(e.seq);
  return out;
}

using numbers = std::vector<std::uint64_t>;

// `a` and `b`: two connections to one store.
inline void check_event_stream(player_store& a, player_store& b) {
  // A sequence of a service alone goes on in the stream of the same name
  // (a server that starts running its queues in partitions).
  journal_batch own;
  for (std::uint64_t seq = 1; seq <= 4; ++seq)
    own.events.push_back({seq, 7, "", "duel", 1'700'000'000'000, "e"});
  CHECK(a.write_journal("S", own) == 4);
  CHECK(a.write_journal("S/1", streamed_events("S", 3)) == 7);
  CHECK(b.write_journal("S/2", streamed_events("S", 2)) == 9);
  CHECK(a.write_journal("S/1", streamed_events("S", 1)) == 10);
  CHECK(a.write_journal("S/1", streamed_events("S", 0)) == 0);
  CHECK(event_numbers(b, "S/1", "S") == numbers{5, 6, 7, 10});
  CHECK(event_numbers(a, "S/2", "S") == numbers{8, 9});
  journal_read r;
  r.event_stream = "S";
  CHECK(a.read_journal("S/2", r).last_seq == 10);
  CHECK(a.read_journal("S", {}).last_seq == 10);
  // Another stream is a sequence of its own, and not read with this one
  // (nor is a service whose name only starts like the stream's).
  CHECK(b.write_journal("T/0", streamed_events("T", 2)) == 2);
  CHECK(b.write_journal("SX", streamed_events("SX", 2)) == 2);
  const auto stream_numbers = [&](const std::string& stream, std::uint64_t after) {
    numbers out;
    for (const auto& row : b.read_stream_events(stream, after, 100)) out.push_back(row.seq);
    return out;
  };
  CHECK(stream_numbers("S", 0) == numbers{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK(stream_numbers("S", 6) == numbers{7, 8, 9, 10});
  CHECK(a.read_stream_events("S", 2, 3).size() == 3);
  CHECK(stream_numbers("T", 0) == numbers{1, 2});
}

// Two services of one stream writing at once, from two threads: every
// number once, none skipped, each writer's in the order it wrote.
inline void check_event_stream_under_contention(player_store& a, player_store& b) {
  std::mutex m;
  numbers all;
  bool in_order = true;
  auto writer = [&](player_store& s, const std::string& service, std::uint64_t seed) {
    rng r(seed);
    std::uint64_t previous = 0;
    for (int round = 0; round < 150; ++round) {
      const std::size_t n = 1 + r() % 5;
      const std::uint64_t last = s.write_journal(service, streamed_events("S", n));
      std::lock_guard lock(m);
      in_order = in_order && last >= previous + n;
      previous = last;
      for (std::uint64_t seq = last - n + 1; seq <= last; ++seq) all.push_back(seq);
    }
  };
  std::thread ta(writer, std::ref(a), "S/0", 1);
  std::thread tb(writer, std::ref(b), "S/1", 2);
  ta.join();
  tb.join();
  CHECK(in_order);
  std::sort(all.begin(), all.end());
  numbers expected(all.size());
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = i + 1;
  CHECK(all == expected);
  // And the rows say the same as the answers.
  numbers rows = event_numbers(a, "S/0", "S");
  const numbers other = event_numbers(b, "S/1", "S");
  rows.insert(rows.end(), other.begin(), other.end());
  std::sort(rows.begin(), rows.end());
  CHECK(rows == expected);
}

}  // namespace mm::test
