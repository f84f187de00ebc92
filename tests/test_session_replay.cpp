// The replay of a recorded ticket stream (mm/sim/session_replay.hpp): a
// stream "recorded" from the session engine itself on the replay's tick
// grid comes back with the very same matches; the players' cancels and
// newer tickets are replayed; the figures agree with a count of the
// tickets by hand; another configuration changes what it should.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <tuple>

#include "mm/engine/error.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/session_queue.hpp"
#include "mm/sim/session_replay.hpp"
#include "session_config.hpp"

using namespace mm;
using namespace mm::sim;
using session::ticket_state;

namespace {

session::queue_config narrow_queue(double mmr_window) {
  session::queue_config q = server::demo_queue();
  q.rules.at(0).max_difference = mmr_window;
  q.rules.at(0).expand = {};
  return q;
}

// The engine alone, driven by hand, with none of the replay's code: at each
// of its ticks (the recorded ones, else multiples of the tick since 0) it
// first gets the joins and the owners' cancels (a ticket's recorded cancel,
// if it still waits) up to that moment, then ticks; a late ticket joins
// just after the tick it missed; a player's newer ticket cancels the one
// still waiting. What a recording of this engine holds.
std::vector<ticket_end> engine_by_hand(const session_replay_config& c) {
  const session::queue_config& config = c.queues.front();
  const auto seed = c.seeds.count(config.name) ? c.seeds.at(config.name) : c.seed;
  session::session_queue q(config, c.latency, seed);
  std::vector<ticket_end> ends(c.tickets.size());
  // (when, 0 join / 1 cancel / 3 join after the tick, ticket)
  std::vector<std::tuple<std::int64_t, int, std::size_t>> events;
  for (std::size_t i = 0; i < c.tickets.size(); ++i) {
    const auto& t = c.tickets[i];
    if (t.late_after_ms >= 0)
      events.emplace_back(t.late_after_ms, 3, i);
    else
      events.emplace_back(t.created_ms, 0, i);
    if (t.recorded.state == ticket_state::cancelled) events.emplace_back(owner_cancel_ms(t), 1, i);
  }
  std::sort(events.begin(), events.end());
  std::vector<std::int64_t> ticks;
  if (c.ticks.count(config.name))
    ticks = c.ticks.at(config.name);
  else
    for (std::int64_t now = 0; now <= c.end_ms; now += config.tick.count()) ticks.push_back(now);
  std::map<player_id, std::size_t> waiting_in;
  const auto leave = [&](std::size_t i, ticket_state state, std::int64_t now) {
    q.cancel(i + 1);
    ends[i].state = state;
    ends[i].at_ms = now;
    for (const auto& p : c.tickets[i].request.players)
      if (waiting_in.count(p.id) && waiting_in[p.id] == i) waiting_in.erase(p.id);
  };
  std::size_t next = 0;
  for (const std::int64_t now : ticks) {
    if (now > c.end_ms) break;
    for (; next < events.size() &&
           std::pair(std::get<0>(events[next]), std::get<1>(events[next])) < std::pair(now, 2);
         ++next) {
      const auto [at, kind, i] = events[next];
      const auto& t = c.tickets[i];
      if (kind == 1) {
        if (q.is_waiting(i + 1)) leave(i, ticket_state::cancelled, at);
        continue;
      }
      if (t.recorded.state == ticket_state::cancelled &&
          std::pair(owner_cancel_ms(t), 1) < std::pair(at, kind)) {
        ends[i].state = ticket_state::cancelled;  // before it reached the queue
        ends[i].at_ms = owner_cancel_ms(t);
        continue;
      }
      for (const auto& p : t.request.players)
        if (waiting_in.count(p.id)) leave(waiting_in[p.id], ticket_state::cancelled, at);
      q.add(t.request, session::time_ms(t.created_ms), i + 1);
      for (const auto& p : t.request.players) waiting_in[p.id] = i;
    }
    const auto r = q.tick(session::time_ms(now));
    for (const auto& m : r.matches) {
      std::vector<std::string> ids;
      for (auto id : m.tickets) ids.push_back(c.tickets[id - 1].id);
      std::sort(ids.begin(), ids.end());
      for (auto id : m.tickets) {
        leave(id - 1, ticket_state::matched, now);
        ends[id - 1].match = ids;
        ends[id - 1].mmr_spread = m.mmr_spread;
        ends[id - 1].worst_rtt_ms = m.worst_rtt_ms;
      }
    }
    for (auto id : r.expired) leave(id - 1, ticket_state::expired, now);
    for (auto id : r.failed) leave(id - 1, ticket_state::failed, now);
  }
  return ends;
}

// A server's traffic, as a recording holds it: parties joining at clustered
// times (bursts), MMR skewed, a share of them cancelling, some players
// queueing again; the engine ticked on the grid the replay uses (multiples
// of the tick since 0), its outcomes written down as a recording writes
// them.
session_replay_config recorded_day(std::uint64_t seed, std::size_t tickets,
                                   const session::queue_config& q) {
  session_replay_config c;
  c.queues = c.recorded_queues = {q};
  c.latency = session::latency_model(server::demo_datacenters(), 2, {});
  c.seed = seed;
  rng r(seed);
  std::int64_t at = 0;
  player_id next_player = 1;
  std::vector<player_id> recent;  // players who may queue again
  for (std::size_t i = 0; i < tickets; ++i) {
    // Bursts: mostly a few ms apart, sometimes a pause of seconds.
    at += r.unit() < 0.1 ? static_cast<std::int64_t>(r.below(20'000)) : r.below(300);
    replay_ticket t;
    t.id = "t" + std::to_string(100000 + i);
    t.created_ms = at;
    t.queues = {q.name};
    const std::size_t size = 1 + (r.unit() < 0.3 ? r.below(3) : 0);
    const double base = 1500 + 400 * r.normal() * (r.unit() < 0.2 ? 2 : 1);
    const double lat = 20 + 40 * r.unit(), lon = -100 + 130 * r.unit();
    for (std::size_t k = 0; k < size; ++k) {
      session::ticket_player p;
      p.id = !recent.empty() && k == 0 && r.unit() < 0.15 ? recent[r.below(recent.size())]
                                                          : next_player++;
      if (std::any_of(t.request.players.begin(), t.request.players.end(),
                      [&](const session::ticket_player& x) { return x.id == p.id; }))
        p.id = next_player++;
      p.mmr = std::clamp(base + 40 * r.normal(), 0.0, 4000.0);
      p.location = session::geo_point{lat, lon};
      t.request.players.push_back(p);
      recent.push_back(p.id);
    }
    if (r.unit() < 0.1)
      t.request.give_up_after = std::chrono::milliseconds(2'000 + r.below(20'000));
    // The owner's cancel, if it comes first.
    if (r.unit() < 0.1) {
      t.recorded.state = ticket_state::cancelled;
      t.recorded.at_ms = at + static_cast<std::int64_t>(r.below(15'000));
    }
    c.tickets.push_back(std::move(t));
  }
  c.end_ms = at + 60'000;
  const auto ends = engine_by_hand(c);
  for (std::size_t i = 0; i < c.tickets.size(); ++i) c.tickets[i].recorded = ends[i];
  return c;
}

}  // namespace

TEST_CASE("a stream recorded from the engine on the replay's grid replays into the same matches",
          "[sim][replay]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    session_replay_config c = recorded_day(seed, 400, server::demo_queue());
    // Without the owners' cancels and the players' new tickets.
    for (std::size_t i = 0; i < c.tickets.size(); ++i) {
      c.tickets[i].recorded = {};
      for (std::size_t k = 0; k < c.tickets[i].request.players.size(); ++k)
        c.tickets[i].request.players[k].id = 1'000'000 * (i + 1) + k;
    }
    const auto by_hand = engine_by_hand(c);
    for (std::size_t i = 0; i < c.tickets.size(); ++i) c.tickets[i].recorded = by_hand[i];
    const session_replay_report r = replay_sessions(c);
    std::size_t matched = 0;
    for (std::size_t i = 0; i < c.tickets.size(); ++i) {
      CAPTURE(i);
      REQUIRE(r.replayed[i].state == by_hand[i].state);
      REQUIRE(r.replayed[i].at_ms == by_hand[i].at_ms);
      REQUIRE(r.replayed[i].match == by_hand[i].match);
      matched += by_hand[i].state == ticket_state::matched;
    }
    REQUIRE(matched > 300);
    CHECK(r.same_match == r.recorded_matched);
    CHECK(r.recorded_matched == matched);
    CHECK(r.replaced == 0);
  }
}

TEST_CASE("the owners' cancels and the players' newer tickets are replayed as they were",
          "[sim][replay]") {
  std::uint64_t replaced = 0, cancels_replayed = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    const session_replay_config c = recorded_day(seed, 500, server::demo_queue());
    const session_replay_report r = replay_sessions(c);
    for (std::size_t i = 0; i < c.tickets.size(); ++i) {
      const ticket_end& a = c.tickets[i].recorded;
      const ticket_end& b = r.replayed[i];
      CAPTURE(i);
      REQUIRE(a.state == b.state);
      REQUIRE(a.at_ms == b.at_ms);
      REQUIRE(a.match == b.match);
      cancels_replayed += b.state == ticket_state::cancelled;
    }
    CHECK(r.same_match == r.recorded_matched);
    replaced += r.replaced;
  }
  CHECK(replaced > 0);
  CHECK(cancels_replayed > replaced);
}

TEST_CASE("a queue's recorded ticks, seed, late joins and cancel moments are replayed as they were",
          "[sim][replay]") {
  std::uint64_t late = 0, written_after_a_tick = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    session_replay_config c = recorded_day(seed, 400, server::demo_queue());
    // Many tickets created in the same ms: the seed orders them.
    for (auto& t : c.tickets) {
      t.created_ms -= t.created_ms % 250;
      t.recorded.at_ms = std::max(t.recorded.at_ms, t.created_ms);
    }
    // A server's ticks: the period and a few ms of delay each, sometimes a
    // stall; the seed its queue ran with.
    rng r(seed + 100);
    auto& ticks = c.ticks["coop"];
    for (std::int64_t at = 3 + r.below(900); at <= c.end_ms;
         at += 1000 + r.below(5) + (r.unit() < 0.02 ? r.below(3000) : 0))
      ticks.push_back(at);
    c.seeds["coop"] = 1000 + seed;
    // Some tickets reached the queue after the first tick since their creation.
    for (auto& t : c.tickets) {
      const auto after = std::lower_bound(ticks.begin(), ticks.end(), t.created_ms);
      if (after != ticks.end() && r.unit() < 0.1) t.late_after_ms = *after, ++late;
      // The queue's own moment of an owner's cancel; half of them exactly
      // at a tick's moment, or just after it.
      if (t.recorded.state == ticket_state::cancelled && r.unit() < 0.5) {
        const auto tick = std::lower_bound(ticks.begin(), ticks.end(), t.recorded.at_ms);
        t.cancelled_ms = t.recorded.at_ms;
        if (tick != ticks.end() && r.unit() < 0.5) t.cancelled_ms = *tick + r.below(2);
      }
    }
    const auto by_hand = engine_by_hand(c);
    for (std::size_t i = 0; i < c.tickets.size(); ++i) {
      auto& t = c.tickets[i];
      t.recorded = by_hand[i];
      // The outcome written later than the queue let it go, sometimes
      // after the next tick: the replay must not keep it for that tick.
      if (t.recorded.state == ticket_state::cancelled && t.cancelled_ms >= 0) {
        const std::int64_t written = t.recorded.at_ms + 1 + r.below(1500);
        const auto tick = std::upper_bound(ticks.begin(), ticks.end(), t.recorded.at_ms);
        written_after_a_tick += tick != ticks.end() && *tick <= written;
        t.recorded.at_ms = written;
      }
    }
    const session_replay_report rep = replay_sessions(c);
    for (std::size_t i = 0; i < c.tickets.size(); ++i) {
      CAPTURE(i);
      REQUIRE(rep.replayed[i].state == by_hand[i].state);
      REQUIRE(rep.replayed[i].at_ms == by_hand[i].at_ms);
      REQUIRE(rep.replayed[i].match == by_hand[i].match);
    }
    CHECK(rep.same_match == rep.recorded_matched);
  }
  CHECK(late > 300);
  CHECK(written_after_a_tick > 50);
}

TEST_CASE("the replay's figures are the tickets counted by hand, hour by hour and per queue",
          "[sim][replay]") {
  session_replay_config c = recorded_day(7, 3000, server::demo_queue());
  // Make the hours many: stretch the day over about five hours.
  for (auto& t : c.tickets) {
    t.created_ms *= 4;
    if (t.recorded.state != ticket_state::waiting) t.recorded.at_ms *= 4;
  }
  c.end_ms *= 4;
  // Under a narrower rule the replay differs from the record.
  c.queues = {narrow_queue(50)};
  const session_replay_report r = replay_sessions(c);
  REQUIRE(r.hours.size() >= 4);
  std::map<std::int64_t, std::pair<std::uint64_t, std::vector<double>>> by_hour;
  std::uint64_t matched = 0, cancelled = 0, replayed_matched = 0;
  for (std::size_t i = 0; i < c.tickets.size(); ++i) {
    const auto& t = c.tickets[i];
    auto& h = by_hour[t.created_ms / 3'600'000];
    ++h.first;
    if (t.recorded.state == ticket_state::matched) {
      ++matched;
      h.second.push_back(static_cast<double>(t.recorded.at_ms - t.created_ms) / 1000);
    }
    cancelled += t.recorded.state == ticket_state::cancelled;
    replayed_matched += r.replayed[i].state == ticket_state::matched;
  }
  REQUIRE(r.hours.size() == by_hour.size());
  for (const auto& row : r.hours) {
    CAPTURE(row.hour);
    const auto& [tickets, waits] = by_hour.at(row.hour);
    CHECK(row.recorded.tickets == tickets);
    CHECK(row.replayed.tickets == tickets);
    CHECK(row.recorded.matched == waits.size());
    CHECK(row.recorded.time_to_match_s.p95 == summarize(waits).p95);
  }
  CHECK(r.totals.recorded.tickets == c.tickets.size());
  CHECK(r.totals.recorded.matched == matched);
  CHECK(r.totals.recorded.cancelled == cancelled);
  CHECK(r.totals.replayed.matched == replayed_matched);
  CHECK(r.totals.recorded.ideal + r.totals.recorded.expand + r.totals.recorded.warm_body ==
        matched);
  REQUIRE(r.queues.size() == 1);
  CHECK(r.queues[0].queue == "coop");
  CHECK(r.queues[0].recorded.tickets == c.tickets.size());
  // A window of 50 that never widens: fewer matches, closer in MMR.
  CHECK(r.totals.replayed.matched < r.totals.recorded.matched);
  CHECK(r.totals.replayed.mmr_spread.mean < r.totals.recorded.mmr_spread.mean);
  CHECK(r.same_match < r.recorded_matched);
}

TEST_CASE("tickets the replayed configuration refuses are counted as refused, naming why",
          "[sim][replay]") {
  session_replay_config c = recorded_day(3, 200, server::demo_queue());
  // The replayed queue reads an attribute the recorded players lack.
  session::queue_config q = server::demo_queue();
  session::rule region;
  region.name = "region";
  region.kind = session::rule_kind::equality;
  region.attribute = "region";
  q.rules.push_back(region);
  c.queues = {q};
  c.tickets[5].refused = "queue: routed nowhere";
  const session_replay_report r = replay_sessions(c);
  CHECK(r.totals.replayed.refused == c.tickets.size());
  CHECK(r.totals.replayed.matched == 0);
  CHECK(r.replayed[5].refused == "queue: routed nowhere");
  CHECK_THAT(r.replayed[6].refused, Catch::Matchers::Contains("region"));

  c.queues = {server::demo_queue()};
  c.queues[0].name = "other";
  CHECK_THROWS_WITH(replay_sessions(c), Catch::Matchers::Contains("names queue 'coop'"));
}
