#include "session_backfill_bench.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "bench_util.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/session_queue.hpp"

namespace mm::bench {

using namespace session;
using namespace std::chrono_literals;

namespace {

constexpr const char* bench_name = "session";

// Running matches short of 1 .. max_players - 1 players, their players near
// the match's datacenter, MMRs drawn as the tickets' are.
std::vector<backfill_request> make_matches(const queue_config& c, const latency_model& latency,
                                           std::size_t n, mm::rng& r, player_id first_id) {
  std::vector<backfill_request> out;
  const auto& dcs = latency.datacenters();
  player_id next = first_id;
  for (std::size_t i = 0; i < n; ++i) {
    backfill_request m;
    m.match_id = "match-" + std::to_string(i);
    const std::size_t dc = r.below(dcs.size());
    m.datacenter = dcs[dc].name;
    m.server = "10.1.0." + std::to_string(i % 250) + ":7777";
    m.teams.resize(1);
    const std::size_t players = 1 + r.below(c.max_players - 1);
    for (std::size_t k = 0; k < players; ++k) {
      ticket_player p;
      p.id = next++;
      double bulk = 0;
      for (int j = 0; j < 4; ++j) bulk += r.unit();
      p.mmr = 1000 + 250 * bulk;
      m.teams[0].push_back(p);
    }
    out.push_back(std::move(m));
  }
  return out;
}

double mean_mmr(const std::vector<ticket_player>& ps) {
  double s = 0;
  for (const auto& p : ps) s += p.mmr;
  return s / static_cast<double>(ps.size());
}

// The offline greedy's filled seats: the matches in `order` (indices into
// `matches`), each taking the nearest tickets by MMR within the rule's
// threshold whose RTT to its datacenter is within the ideal stage.
std::size_t offline_filled(const queue_config& c, const latency_model& latency,
                           const std::vector<ticket_request>& tickets,
                           const std::vector<backfill_request>& matches,
                           const std::vector<std::size_t>& order, time_ms waited) {
  const double threshold = threshold_after(c.rules.at(0), waited);
  const double max_rtt = max_rtt_after(*c.latency, waited);
  // Per datacenter: the tickets within reach, by MMR.
  std::vector<std::vector<std::pair<double, std::size_t>>> by_dc(latency.datacenters().size());
  for (std::size_t i = 0; i < tickets.size(); ++i) {
    const ticket_player& p = tickets[i].players[0];
    for (std::size_t d = 0; d < by_dc.size(); ++d)
      if (latency.estimate_ms(*p.location, d) <= max_rtt) by_dc[d].push_back({p.mmr, i});
  }
  for (auto& list : by_dc) std::sort(list.begin(), list.end());
  std::vector<char> used(tickets.size(), 0);
  std::size_t filled = 0;
  for (std::size_t m : order) {
    const auto& list = by_dc[*latency.find(matches[m].datacenter)];
    const double v = mean_mmr(matches[m].teams[0]);
    std::size_t open = c.max_players - matches[m].teams[0].size();
    // Outward from v, nearest first, over the tickets not used yet.
    auto up = std::lower_bound(list.begin(), list.end(), std::make_pair(v, std::size_t{0}));
    auto down = up;
    while (open > 0) {
      while (up != list.end() && used[up->second]) ++up;
      while (down != list.begin() && used[std::prev(down)->second]) --down;
      const bool can_up = up != list.end() && up->first - v <= threshold;
      const bool can_down = down != list.begin() && v - std::prev(down)->first <= threshold;
      if (!can_up && !can_down) break;
      const bool take_up = can_up && (!can_down || up->first - v <= v - std::prev(down)->first);
      const std::size_t t = take_up ? up->second : std::prev(down)->second;
      used[t] = 1;
      --open;
      ++filled;
    }
  }
  return filled;
}

struct timed_tick {
  double ms = 0;
  std::size_t filled = 0, open = 0, reference = 0;
};

// One tick of `tickets` and running `matches`, all registered a second
// before it. `warm`: in a queue that ticked as many before (its tickets
// cancelled and its matches stopped after it), as a running server's queue
// is; else in a fresh queue, which also pays for the first touch of the
// tick's working memory.
timed_tick one_tick(const queue_config& c, const latency_model& latency,
                    const std::vector<ticket_request>& tickets,
                    const std::vector<backfill_request>& matches, bool with_reference, bool warm) {
  session_queue q(c, latency, 7);
  time_ms at = 0ms;
  if (warm) {
    for (const auto& t : tickets) q.add(t, at);
    for (const auto& m : matches) q.add_backfill(m, at);
    q.tick(at + 1s);
    std::vector<ticket_id> left;
    for (const auto& t : q.tickets()) left.push_back(t.id);
    for (ticket_id id : left) q.cancel(id);
    for (const auto& m : matches) q.stop_backfill(m.match_id);
    at += 1s;
  }
  for (const auto& t : tickets) q.add(t, at);
  timed_tick out;
  for (const auto& m : matches) {
    q.add_backfill(m, at);
    out.open += c.max_players - m.teams[0].size();
  }
  std::vector<std::size_t> order;
  if (with_reference) {
    // The tick's order: priority, registration, then the queue's tiebreak.
    std::vector<std::tuple<std::uint64_t, std::size_t>> keyed;
    for (std::size_t i = 0; i < matches.size(); ++i)
      keyed.emplace_back(q.backfills().find(matches[i].match_id)->tiebreak, i);
    std::sort(keyed.begin(), keyed.end());
    for (const auto& [tie, i] : keyed) order.push_back(i);
  }
  const double start = now_s();
  tick_result r;
  {
    const std::optional<perf_window> profiled =
        matches.empty() ? std::nullopt : std::optional<perf_window>(std::in_place);
    r = q.tick(at + 1s);
  }
  out.ms = (now_s() - start) * 1e3;
  for (const auto& p : r.placed) out.filled += p.reservation.players.size();
  if (with_reference) out.reference = offline_filled(c, latency, tickets, matches, order, 1s);
  return out;
}

}  // namespace

double backfill_phase(const queue_config& config, const latency_model& latency,
                      const std::vector<ticket_request>& tickets, std::size_t matches,
                      const std::string& extra, const std::function<void()>& before_timed) {
  mm::rng r(2027);
  const auto running = make_matches(config, latency, matches, r, 50'000'000);
  const std::string with = extra + ", \"running_matches\": " + std::to_string(matches);
  const auto tick_ms = [&](const std::vector<backfill_request>& ms, bool warm) {
    return one_tick(config, latency, tickets, ms, false, warm).ms;
  };
  const timed_tick first = one_tick(config, latency, tickets, running, false, false);
  const auto timed = [&] {
    before_timed();
    return tick_ms(running, true);
  };
  const double ms = median3(timed(), timed(), timed());
  const double plain = median3(tick_ms({}, true), tick_ms({}, true), tick_ms({}, true));
  emit(bench_name, "session_tick_with_backfill_ms", ms, "ms", with);
  emit(bench_name, "session_tick_plain_ms", plain, "ms", with);
  emit(bench_name, "backfill_tick_vs_plain", ms / plain, "ratio", with);
  emit(bench_name, "session_first_tick_with_backfill_ms", first.ms, "ms", with);
  // The share of open seats filled, where tickets are scarce: a tenth of
  // them for as many running matches (about twice as many open seats as
  // tickets), so that the choice of tickets matters.
  const std::vector<ticket_request> few(tickets.begin(),
                                        tickets.begin() + static_cast<long>(tickets.size() / 10));
  const timed_tick scarce = one_tick(config, latency, few, running, true, false);
  const std::string where = with + ", \"scarce_tickets\": " + std::to_string(few.size()) +
                            ", \"open_seats\": " + std::to_string(scarce.open);
  const double share = static_cast<double>(scarce.filled) / static_cast<double>(scarce.open);
  const double reference = static_cast<double>(scarce.reference) / static_cast<double>(scarce.open);
  emit(bench_name, "backfill_filled_share", share, "ratio", where);
  emit(bench_name, "offline_filled_share", reference, "ratio", where);
  emit(bench_name, "backfill_vs_offline", share / reference, "ratio", where);
  emit(bench_name, "backfill_filled_share_plenty",
       static_cast<double>(first.filled) / static_cast<double>(first.open), "ratio", with);
  return ms;
}

}  // namespace mm::bench
