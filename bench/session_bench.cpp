// Session engine benchmark: one queue of 4-player co-op matches with an MMR
// difference rule that expands and the staged latency policy over 30
// datacenters, on one thread, with a virtual clock.
//
//   mm_session_bench [tickets = 100000] [seconds of sustained load = 20]
//                    [tick-only | explain-only | backfill-only]
//
// With "tick-only", only session_tick_ms is measured (for a profiler; with
// MM_PERF_CONTROL set, perf samples only the ticks: bench_util.hpp); with
// "backfill-only", that and the backfill figures
// (session_backfill_bench.hpp: a tenth as many running matches as tickets).
//
// - session_tick_ms: one tick of the match loop over `tickets` waiting solo
//   tickets, in a queue that has ticked as many before (a running server's
//   queue: the tick's working memory is in place), median of 3 queues. Its
//   reference in the same run is the same loop scoring every ticket against
//   every seed (no candidates' index), timed on two smaller queues (4,000 and
//   16,000 tickets) and scaled to `tickets` by the growth measured between
//   them: session_vs_naive.
// - tick_per_ticket_in_bare_walks: session_tick_ms per waiting ticket, in
//   bare walks of this run (bare_walk.hpp: the engine bench's reference on
//   its own 1,000,000-player cache, built here first and kept until the
//   backfill figures are done); the walks are measured (500,000 of them)
//   before each timed tick is set up, and a figure's reference is the
//   median of its three ticks' (bare_walk_per_s). The same for the tick
//   with running matches (session_backfill_bench.hpp):
//   backfill_tick_per_ticket_in_bare_walks, backfill_bare_walk_per_s.
// - session_explain_ms: why one ticket among `tickets` waits
//   (session_queue::explain, 1,000 candidates judged), median over 101
//   tickets; explain_vs_tick: that over session_tick_ms, measured just
//   before. "explain-only" stops after them.
// - session_first_tick_ms: the same tickets in the first tick of a fresh
//   queue, which also pays for the first touch of the tick's working memory
//   (page faults, expensive on a VM).
// - session_actor_first_tick_ms: the same tickets' first tick in a queue
//   actor restored with them (as after a restart), as the actor times it:
//   the engine's tick and its message to the journal. The actor system's
//   workers wait when idle, as matchmakerd's do (actor.worker_idle).
// - session_actor_tick_ms: the same tickets created through that actor and
//   ticked, three times (median): a running server's tick.
//   actor_tick_vs_engine: session_tick_ms / session_actor_tick_ms.
// - session_matches_per_s: tickets arriving every virtual second and leaving
//   as matches; matches formed per second of the engine's own time (adds and
//   ticks).
// - spread_vs_offline: the mean MMR spread of the first tick's matches
//   against an offline optimum on the same tickets (each player at its
//   nearest datacenter, sorted by MMR there, cut into groups of 4); and the
//   mean worst RTT of a match.
// - find_lobby_per_s: parties placed in 100,000 running lobbies, with the
//   region given; find_lobby_nearest_per_s: with a location instead.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "bare_walk.hpp"
#include "bench_util.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/lobbies.hpp"
#include "mm/session/session_queue.hpp"
#include "session_actor_tick.hpp"
#include "session_backfill_bench.hpp"

using namespace mm::session;
using mm::bench::emit;
using mm::bench::median3;
using mm::bench::now_s;
using namespace std::chrono_literals;

namespace {

constexpr const char* bench_name = "session";
// Bare walks a sample of the reference (bare_walk.hpp): about a tenth of a
// second each.
constexpr std::size_t walks_a_sample = 500'000;

// 30 datacenters at real-world-like places: where most players live.
latency_model world() {
  const double places[][2] = {
      {50.1, 8.7},   {51.5, -0.1},   {48.9, 2.4},    {52.4, 4.9},    {59.3, 18.1},   {40.4, -3.7},
      {45.5, 9.2},   {52.2, 21.0},   {55.8, 37.6},   {41.0, 28.9},   {40.7, -74.0},  {39.0, -77.5},
      {41.9, -87.6}, {32.8, -96.8},  {37.4, -122.1}, {47.6, -122.3}, {34.1, -118.2}, {43.7, -79.4},
      {19.4, -99.1}, {-23.5, -46.6}, {-34.6, -58.4}, {35.7, 139.7},  {37.6, 127.0},  {31.2, 121.5},
      {22.3, 114.2}, {1.35, 103.8},  {19.1, 72.9},   {25.2, 55.3},   {-33.9, 151.2}, {-26.2, 28.0}};
  std::vector<datacenter> dcs;
  for (std::size_t i = 0; i < std::size(places); ++i)
    dcs.push_back(
        {"dc" + std::to_string(i), {places[i][0], places[i][1]}, "region" + std::to_string(i / 5)});
  return latency_model(dcs);
}

queue_config coop_queue() {
  queue_config c;
  c.name = "coop";
  c.min_players = c.max_players = 4;
  c.teams = 0;
  c.max_party_size = 4;
  c.latency = latency_stages{};
  rule skill;
  skill.name = "skill";
  skill.max_difference = 100;
  skill.expand = {50, 5s, 400};
  c.rules = {skill};
  return c;
}

// Solo tickets: players around the datacenters (most within a few hundred
// km, some far away), MMR skewed (a normal-ish bulk and a strong tail).
std::vector<ticket_request> make_tickets(const latency_model& m, std::size_t n, mm::rng& r,
                                         mm::player_id first_id) {
  std::vector<ticket_request> out;
  out.reserve(n);
  const auto& dcs = m.datacenters();
  for (std::size_t i = 0; i < n; ++i) {
    ticket_player p;
    p.id = first_id + i;
    double bulk = 0;
    for (int k = 0; k < 4; ++k) bulk += r.unit();
    p.mmr = 1000 + 250 * bulk + (r.below(10) == 0 ? 800 * r.unit() : 0);
    const auto& home = dcs[r.below(dcs.size())].location;
    const double spread = r.below(5) == 0 ? 20.0 : 4.0;
    p.location = geo_point{std::clamp(home.latitude + (r.unit() - 0.5) * spread, -89.0, 89.0),
                           std::clamp(home.longitude + (r.unit() - 0.5) * spread, -179.0, 179.0)};
    out.push_back({{p}, std::nullopt, false});
  }
  return out;
}

// One tick over a queue of `tickets` created a second before, in ms; the
// queue's matches in `out`. `warm`: the queue ticked over the same tickets
// once before (those left over cancelled).
double one_tick_ms(const std::vector<ticket_request>& tickets, bool index, bool warm,
                   tick_result* out) {
  session_queue q(coop_queue(), world(), 7);
  q.use_candidate_index(index);
  time_ms created = 0ms;
  if (warm) {
    for (const auto& t : tickets) q.add(t, created);
    q.tick(created + 1s);
    std::vector<ticket_id> left;
    for (const auto& t : q.tickets()) left.push_back(t.id);
    for (ticket_id id : left) q.cancel(id);
    created += 1s;
  }
  for (const auto& t : tickets) q.add(t, created);
  const double start = now_s();
  tick_result r;
  {
    const mm::bench::perf_window profiled;
    r = q.tick(created + 1s);
  }
  const double ms = (now_s() - start) * 1e3;
  if (out) *out = std::move(r);
  return ms;
}

// The median time of one explanation (default limit: 1,000 candidates
// judged) of a ticket among `tickets` waiting, over 101 tickets, in ms.
double explain_ms(const std::vector<ticket_request>& tickets) {
  session_queue q(coop_queue(), world(), 7);
  std::vector<ticket_id> ids;
  for (const auto& t : tickets) ids.push_back(q.add(t, 0ms).id);
  std::vector<double> ms;
  std::size_t judged = 0;
  for (std::size_t i = 0; i < 101; ++i) {
    const double start = now_s();
    const auto e = q.explain(ids[i * ids.size() / 101], 4s);
    ms.push_back((now_s() - start) * 1e3);
    judged += e ? e->examined : 0;
  }
  std::nth_element(ms.begin(), ms.begin() + 50, ms.end());
  return judged > 0 ? ms[50] : -1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100'000;
  const double sustained_s = argc > 2 ? std::atof(argv[2]) : 20;
  const latency_model m = world();
  mm::rng r(2026);
  const auto tickets = make_tickets(m, n, r, 1);
  const std::string extra = "\"tickets\": " + std::to_string(n) + ", \"datacenters\": 30";
  const std::string mode = argc > 3 ? argv[3] : "";

  // The reference of the tick's figures in bare walks (bare_walk.hpp): the
  // engine bench's cache, built first and kept, walked right before each
  // timed tick is set up; a figure's reference is the median of its ticks'.
  std::optional<mm::bench::bare_walk_meter> meter;
  if (mode != "tick-only") meter.emplace();
  std::vector<double> walks;
  const auto walk_now = [&] {
    if (meter) walks.push_back(meter->sample(walks_a_sample));
  };
  const auto reference = [&] {  // of the last three ticks
    return median3(walks.at(walks.size() - 3), walks.at(walks.size() - 2), walks.back());
  };
  const auto walked = [&] {
    return extra + ", \"reads\": " + std::to_string(meter->reads()) +
           ", \"checksum\": " + std::to_string(meter->checksum() % 1000);
  };
  // A tick's time per waiting ticket, in bare walks a second of `per_s`.
  const auto in_walks = [&](double ms, double per_s) {
    return ms / 1e3 / static_cast<double>(n) * per_s;
  };
  const auto timed_tick = [&] {
    walk_now();
    return one_tick_ms(tickets, true, true, nullptr);
  };

  // The indexed loop: median of three queues, each way.
  const double tick_ms = median3(timed_tick(), timed_tick(), timed_tick());
  emit(bench_name, "session_tick_ms", tick_ms, "ms", extra);
  if (mode == "tick-only") return 0;
  const double tick_walks = reference();
  emit(bench_name, "bare_walk_per_s", tick_walks, "1/s", walked());
  emit(bench_name, "tick_per_ticket_in_bare_walks", in_walks(tick_ms, tick_walks), "walks",
       walked());
  // Explain: one waiting ticket's reasons, against the tick over the same
  // tickets (measured just before).
  const double explain = explain_ms(tickets);
  emit(bench_name, "session_explain_ms", explain, "ms", extra);
  emit(bench_name, "explain_vs_tick", explain / tick_ms, "ratio", extra);
  if (mode == "explain-only") return 0;
  // Backfill: running matches with open seats, a tenth as many as tickets.
  const double backfill_ms =
      mm::bench::backfill_phase(coop_queue(), m, tickets, n / 10, extra, walk_now);
  const double backfill_walks = reference();
  const std::string with = walked() + ", \"running_matches\": " + std::to_string(n / 10);
  emit(bench_name, "backfill_bare_walk_per_s", backfill_walks, "1/s", with);
  emit(bench_name, "backfill_tick_per_ticket_in_bare_walks", in_walks(backfill_ms, backfill_walks),
       "walks", with);
  meter.reset();  // its memory is not the later parts'
  if (mode == "backfill-only") return 0;
  tick_result first;
  const double first_tick_ms =
      median3(one_tick_ms(tickets, true, false, &first), one_tick_ms(tickets, true, false, nullptr),
              one_tick_ms(tickets, true, false, nullptr));
  emit(bench_name, "session_first_tick_ms", first_tick_ms, "ms", extra);
  std::size_t first_outcomes = 0;
  for (const auto& match : first.matches) first_outcomes += match.tickets.size();
  first_outcomes += first.expired.size() + first.failed.size();
  {
    // Three rounds after the restored tickets' tick, 3 s apart: long enough
    // to create 100,000 tickets through the actor between two ticks. A tick
    // that missed some (fewer outcomes than the engine's first tick) is not
    // a figure of 100,000 tickets: none is printed then.
    const auto a = mm::bench::time_actor_ticks(coop_queue(), m, tickets, 3s, 3);
    const auto full = [&](const mm::bench::actor_tick& t) {
      return t.outcomes + t.outcomes / 100 >= first_outcomes;
    };
    emit(bench_name, "session_actor_first_tick_ms", a.first.ms, "ms",
         extra + ", \"outcomes\": " + std::to_string(a.first.outcomes));
    std::vector<double> ms;
    for (const auto& t : a.later)
      if (full(t)) ms.push_back(t.ms);
    if (ms.size() == 3) {
      const double actor_ms = median3(ms[0], ms[1], ms[2]);
      emit(bench_name, "session_actor_tick_ms", actor_ms, "ms", extra);
      emit(bench_name, "actor_tick_vs_engine", tick_ms / actor_ms, "ratio", extra);
    } else {
      std::printf(
          "{\"bench\": \"%s\", \"metric\": \"session_actor_tick_ms\", \"value\": null, "
          "\"not_measured\": \"a tick came before all the tickets were created\"}\n",
          bench_name);
    }
  }

  // The naive loop on two smaller queues, scaled by the growth between them.
  const std::size_t small = std::min<std::size_t>(n, 4'000),
                    larger = std::min<std::size_t>(n, 16'000);
  const std::vector<ticket_request> a(tickets.begin(),
                                      tickets.begin() + static_cast<std::ptrdiff_t>(small));
  const std::vector<ticket_request> b(tickets.begin(),
                                      tickets.begin() + static_cast<std::ptrdiff_t>(larger));
  const double naive_small = one_tick_ms(a, false, true, nullptr);
  const double naive_larger = one_tick_ms(b, false, true, nullptr);
  const double exponent = std::log(naive_larger / naive_small) /
                          std::log(static_cast<double>(larger) / static_cast<double>(small));
  const double naive_ms =
      naive_larger * std::pow(static_cast<double>(n) / static_cast<double>(larger), exponent);
  emit(bench_name, "naive_tick_ms", naive_ms, "ms",
       extra + ", \"measured_at\": [" + std::to_string(small) + ", " + std::to_string(larger) +
           "], \"growth_exponent\": " + std::to_string(exponent));
  emit(bench_name, "session_vs_naive", tick_ms / naive_ms, "ratio", extra);

  // Quality of the first tick against the offline optimum.
  double spread = 0, worst_rtt = 0;
  for (const auto& match : first.matches) {
    spread += match.mmr_spread;
    worst_rtt += match.worst_rtt_ms;
  }
  const double matches = static_cast<double>(first.matches.size());
  std::vector<std::vector<double>> by_dc(m.datacenters().size());
  for (const auto& t : tickets) {
    const auto& p = t.players[0];
    std::size_t nearest = 0;
    for (std::size_t d = 1; d < by_dc.size(); ++d)
      if (m.estimate_ms(*p.location, d) < m.estimate_ms(*p.location, nearest)) nearest = d;
    by_dc[nearest].push_back(p.mmr);
  }
  double offline = 0, offline_groups = 0;
  for (auto& v : by_dc) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 0; i + 4 <= v.size(); i += 4) {
      offline += v[i + 3] - v[i];
      ++offline_groups;
    }
  }
  emit(bench_name, "first_tick_matched_share", 4 * matches / static_cast<double>(n), "ratio",
       extra);
  emit(bench_name, "mean_mmr_spread", spread / matches, "mmr", extra);
  emit(bench_name, "offline_mean_mmr_spread", offline / offline_groups, "mmr", extra);
  emit(bench_name, "spread_vs_offline", (spread / matches) / (offline / offline_groups), "ratio",
       extra);
  emit(bench_name, "mean_worst_rtt_ms", worst_rtt / matches, "ms", extra);

  // Sustained: n / 10 tickets arrive every virtual second for `sustained_s`
  // seconds; matches per second of the engine's own time.
  session_queue q(coop_queue(), m, 11);
  const std::size_t per_second = std::max<std::size_t>(n / 10, 1);
  double engine_s = 0;
  std::uint64_t formed = 0;
  mm::player_id next = 10'000'000;
  for (int second = 0; second < static_cast<int>(sustained_s); ++second) {
    const auto arrivals = make_tickets(m, per_second, r, next);
    next += per_second;
    const time_ms now = std::chrono::seconds(second);
    const double start = now_s();
    for (const auto& t : arrivals) q.add(t, now);
    formed += q.tick(now + 999ms).matches.size();
    engine_s += now_s() - start;
  }
  const std::string sp = "\"arrivals_per_s\": " + std::to_string(per_second) +
                         ", \"virtual_seconds\": " + std::to_string(static_cast<int>(sustained_s)) +
                         ", \"waiting_at_end\": " + std::to_string(q.waiting());
  emit(bench_name, "session_matches_per_s", static_cast<double>(formed) / engine_s, "1/s", sp);
  emit(bench_name, "session_tickets_per_s",
       static_cast<double>(per_second) * sustained_s / engine_s, "1/s", sp);

  // Lobbies: 100,000 running lobbies of 3 modes in 30 datacenters (6
  // regions), each with room; parties of 1 to 4 find one, by region and by
  // location (the nearest datacenter's region).
  {
    // One owner registers them all here: its cap is lifted to the total.
    lobby_config lc;
    lc.max_lobbies_per_owner = lc.max_lobbies;
    lobby_registry reg(m, lc, 5);
    const char* modes[] = {"br", "ctf", "dm"};
    for (std::size_t i = 0; i < 100'000; ++i) {
      const std::uint32_t seats = 8 + static_cast<std::uint32_t>(r.below(25));
      reg.register_lobby("l" + std::to_string(i), modes[r.below(3)],
                         m.datacenters()[r.below(30)].name, seats,
                         static_cast<std::uint32_t>(r.below(seats / 2)), 0ms);
    }
    const std::size_t finds = 200'000;
    std::vector<find_lobby_request> by_region(finds), by_location(finds);
    for (std::size_t i = 0; i < finds; ++i) {
      auto& f = by_region[i];
      f.modes = {modes[r.below(3)]};
      f.party_size = 1 + static_cast<std::uint32_t>(r.below(4));
      f.region = "region" + std::to_string(r.below(6));
      auto& g = by_location[i];
      g.modes = f.modes;
      g.party_size = f.party_size;
      const auto& home = m.datacenters()[r.below(30)].location;
      g.location = geo_point{home.latitude + r.unit() - 0.5, home.longitude + r.unit() - 0.5};
    }
    std::size_t created = 0;
    double start = now_s();
    for (const auto& f : by_region) created += reg.find(f, 0ms).created;
    const double region_s = now_s() - start;
    start = now_s();
    for (const auto& f : by_location) created += reg.find(f, 0ms).created;
    const double location_s = now_s() - start;
    const std::string lp =
        "\"lobbies\": 100000, \"datacenters\": 30, \"finds\": " + std::to_string(2 * finds) +
        ", \"created\": " + std::to_string(created);
    emit(bench_name, "find_lobby_per_s", static_cast<double>(finds) / region_s, "1/s", lp);
    emit(bench_name, "find_lobby_nearest_per_s", static_cast<double>(finds) / location_s, "1/s",
         lp);
  }
  return 0;
}
