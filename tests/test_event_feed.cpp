// The ticket events' feed and a WebSocket's follower of it, in process:
// resumption from a sequence number against a brute-force replay of
// everything appended, and the follower's bounds.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "event_api.hpp"
#include "mm/actors/ticket_event_feed.hpp"

namespace {

using mm::actors::event_filter;
using mm::actors::ticket_event_feed;
using mm::actors::ticket_outcome;
using json = nlohmann::json;

ticket_outcome event(std::uint64_t seq, const std::string& credential, const std::string& queue,
                     std::int64_t at_ms = 1'000'000) {
  ticket_outcome e;
  e.seq = seq;
  e.ticket = 1000 + seq;
  e.credential = credential;
  e.queue = queue;
  e.at_unix_ms = at_ms;
  e.state = seq % 3 == 0 ? mm::session::ticket_state::matched : mm::session::ticket_state::waiting;
  return e;
}

}  // namespace

TEST_CASE("the event feed gives each later event of a filter exactly once, in order",
          "[events][property]") {
  std::mt19937_64 rng(7);
  const std::vector<std::string> credentials = {"a", "b", "c"};
  const std::vector<std::string> queues = {"duel", "coop", "arena"};
  for (int round = 0; round < 200; ++round) {
    const std::size_t max_events = 5 + rng() % 60;
    ticket_event_feed feed({max_events, std::chrono::hours(1)});
    std::vector<ticket_outcome> all;  // the oracle: everything ever appended
    std::uint64_t seq = 0;
    // A few readers, each with a filter and a cursor, reading at random moments.
    struct reader {
      event_filter filter;
      std::uint64_t cursor = 0;
      std::vector<std::uint64_t> seen;
      bool missed = false;
    };
    std::vector<reader> readers(4);
    for (auto& r : readers) {
      if (rng() % 2) r.filter.credential = credentials[rng() % 3];
      if (rng() % 2) r.filter.queues = {queues[rng() % 3]};
    }
    for (int step = 0; step < 60; ++step) {
      std::vector<ticket_outcome> batch;
      const std::size_t n = rng() % 8;
      for (std::size_t i = 0; i < n; ++i)
        batch.push_back(event(++seq, credentials[rng() % 3], queues[rng() % 3]));
      feed.append(batch);
      all.insert(all.end(), batch.begin(), batch.end());
      for (auto& r : readers) {
        if (rng() % 3 != 0) continue;
        const std::size_t max = 1 + rng() % 10;
        const auto page = feed.read_after(r.cursor, r.filter, max);
        CHECK(page.last_seq == seq);
        // Missed: some event after the cursor is no longer held.
        const std::uint64_t oldest_held = all.size() > max_events ? seq - max_events + 1 : 1;
        CHECK(page.missed == (r.cursor + 1 < oldest_held && r.cursor < seq));
        r.missed |= page.missed;
        for (const auto& e : page.events) r.seen.push_back(e->seq);
        if (!page.events.empty()) r.cursor = page.events.back()->seq;
        if (!page.more) r.cursor = std::max(r.cursor, page.last_seq);
      }
    }
    // Drain, then compare with the oracle: every matching event after the
    // first held one, each once, in order (all of them when nothing was missed).
    for (auto& r : readers) {
      for (;;) {
        const auto page = feed.read_after(r.cursor, r.filter, 1000);
        r.missed |= page.missed;
        for (const auto& e : page.events) r.seen.push_back(e->seq);
        if (!page.events.empty()) r.cursor = page.events.back()->seq;
        if (!page.more) break;
      }
      std::vector<std::uint64_t> expected;
      for (const auto& e : all)
        if (r.filter.matches(e)) expected.push_back(e.seq);
      CHECK(std::is_sorted(r.seen.begin(), r.seen.end()));
      CHECK(std::adjacent_find(r.seen.begin(), r.seen.end()) == r.seen.end());
      if (!r.missed) {
        CHECK(r.seen == expected);
      } else {
        // What was seen is what matched, minus what was dropped unseen.
        for (const auto s : r.seen)
          CHECK(std::find(expected.begin(), expected.end(), s) != expected.end());
      }
    }
  }
}

TEST_CASE("the event feed drops events past its retention and wakes only their followers",
          "[events]") {
  ticket_event_feed feed({100, std::chrono::milliseconds(1000)});
  int woken_a = 0, woken_b = 0, woken_all = 0;
  const auto a = feed.subscribe(
      std::string("a"), [&] { ++woken_a; }, 2, "a");
  const auto b = feed.subscribe(
      std::string("b"), [&] { ++woken_b; }, 2, "b");
  const auto all = feed.subscribe(
      std::nullopt, [&] { ++woken_all; }, 1, "admin-1");
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(all);
  // The cap counts per caller: admin-1 is at its cap, admin-2 is not.
  CHECK(feed.subscribe(
            std::nullopt, [] {}, 1, "admin-1") == std::nullopt);
  const auto other_admin = feed.subscribe(
      std::nullopt, [] {}, 1, "admin-2");
  REQUIRE(other_admin);
  feed.unsubscribe(*other_admin);
  feed.append({event(1, "a", "duel", 1'000), event(2, "a", "duel", 1'500)});
  CHECK(woken_a == 1);
  CHECK(woken_b == 0);
  CHECK(woken_all == 1);
  feed.append({event(3, "b", "duel", 2'200)});  // 1 and... 1,000 ms before 2,200: event 1 goes
  CHECK(feed.size() == 2);
  const auto page = feed.read_after(0, {}, 10);
  CHECK(page.missed);
  REQUIRE(page.events.size() == 2);
  CHECK(page.events.front()->seq == 2);
  feed.unsubscribe(*a);
  feed.append({event(4, "a", "duel", 2'300)});
  CHECK(woken_a == 1);
  feed.close();
  CHECK(feed.closing());
  CHECK(woken_b == 2);
  CHECK(woken_all == 4);
}

TEST_CASE("a feed started after retention deleted every event goes on from the journal's counter",
          "[events]") {
  ticket_event_feed feed({100, std::chrono::milliseconds(1000)});
  feed.continue_from(6);
  CHECK(feed.last_seq() == 6);
  CHECK(feed.read_after(3, {}, 10).missed);  // 4 to 6 are gone
  CHECK_FALSE(feed.read_after(6, {}, 10).missed);
  feed.append({event(7, "a", "duel")});
  const auto page = feed.read_after(6, {}, 10);
  CHECK_FALSE(page.missed);
  REQUIRE(page.events.size() == 1);
  CHECK(page.events[0]->seq == 7);
  feed.continue_from(2);  // never back
  CHECK(feed.last_seq() == 7);
}

TEST_CASE("a WebSocket follower is cut off past its backlog and bounds its subscriptions",
          "[events]") {
  ticket_event_feed feed({10'000, std::chrono::hours(1)});
  mm::server::session_settings limits;
  limits.event_backlog = 16;
  limits.event_subscriptions = 2;
  auto wake = std::make_shared<mm::server::event_wake>();
  const auto id = feed.subscribe(
      std::nullopt, [wake] { (*wake)(); }, 10, "admin");
  REQUIRE(id);
  auto socket = mm::server::make_event_socket(feed, {}, 0, limits, wake, *id);
  int wakes = 0;
  auto first = socket->opened([&] { ++wakes; });
  REQUIRE(first.messages.size() == 1);
  CHECK(json::parse(first.messages[0])["type"] == "hello");

  // Subscriptions: bounded, errors named, and the connection serves on.
  auto sub = socket->received(R"({"type":"subscribe","queue":"duel"})");
  CHECK(json::parse(sub.messages.at(0))["queues"] == json::array({"duel"}));
  socket->received(R"({"type":"subscribe","queue":"coop"})");
  auto third = socket->received(R"({"type":"subscribe","queue":"arena"})");
  CHECK(json::parse(third.messages.at(0))["type"] == "error");
  CHECK(json::parse(third.messages.at(0))["error"].get<std::string>().rfind("queue:", 0) == 0);
  auto bad = socket->received("{not json");
  CHECK(json::parse(bad.messages.at(0))["type"] == "error");
  CHECK_FALSE(bad.close);
  socket->received(R"({"type":"unsubscribe","queue":"coop"})");

  // 16 events owed are fine; taken while a message is being written (max 0).
  std::vector<ticket_outcome> batch;
  for (std::uint64_t s = 1; s <= 16; ++s) batch.push_back(event(s, "a", "duel"));
  feed.append(batch);
  CHECK(wakes == 1);
  CHECK_FALSE(socket->next(0).close);
  auto sent = socket->next(4);
  REQUIRE(sent.messages.size() == 4);
  CHECK(json::parse(sent.messages[0])["seq"] == 1);
  // Events of another queue do not count: 12 owed and 4 more of its own are 16.
  batch.clear();
  for (std::uint64_t s = 17; s <= 34; ++s)
    batch.push_back(event(s, "a", s <= 30 ? "coop" : "duel"));
  feed.append(batch);
  CHECK_FALSE(socket->next(0).close);
  // One more is past the backlog: cut off, with the code that says why.
  feed.append({event(35, "a", "duel")});
  auto cut = socket->next(0);
  REQUIRE(cut.close);
  CHECK(cut.close->first == mm::server::close_slow_consumer);
  socket->closed();
  CHECK(feed.followers() == 0);
}
