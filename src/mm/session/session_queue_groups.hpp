// The group building of basic_session_queue (session_queue.hpp), part of
// its member definitions: whether a ticket may join a group, the nearest
// admitted candidates, teams and seats, and the datacenter of a group. The
// match loop that uses them is in session_queue_impl.hpp, which includes
// this file: a game with its own plug-in includes that one.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "mm/session/session_queue.hpp"
#include "mm/session/teams.hpp"

namespace mm::session {

namespace detail {

inline constexpr double infinity = std::numeric_limits<double>::infinity();

template <class Pairs>
const typename Pairs::value_type::second_type* named(const Pairs& pairs, const std::string& name) {
  for (const auto& [k, v] : pairs)
    if (k == name) return &v;
  return nullptr;
}

inline std::string player_field(std::size_t i, const std::string& rest) {
  return "players[" + std::to_string(i) + "]" + rest;
}

inline bool nearer(const session_queue_candidate& a, const session_queue_candidate& b) {
  return a.distance != b.distance ? a.distance < b.distance : a.tiebreak < b.tiebreak;
}

// Calls f(d) for every bit d set in the `n` words at `words`, ascending.
template <class F>
void for_each_bit(const std::uint64_t* words, std::size_t n, F&& f) {
  for (std::size_t w = 0; w < n; ++w)
    for (std::uint64_t x = words[w]; x != 0; x &= x - 1)
      f(w * 64 + static_cast<std::size_t>(__builtin_ctzll(x)));
}

}  // namespace detail

// Whether ticket `c` may join `g` now (admitted), or what refuses it: the
// match's size, the first rule that filters and refuses it (its index), or
// the datacenters. When admitted, its distance to the group: the sum over
// the rules of weight x distance. A rule that no longer filters
// (optional_after) still adds its distance.
template <session_plugin Plugin>
std::int32_t basic_session_queue<Plugin>::refused_by(const group& g, std::size_t c, time_ms now,
                                                     double* distance) const {
  const ticket_rows::head row = rows_[c];
  if (g.players + row.party > config_.max_players) return over_size;
  const std::size_t seed = g.seed;
  double total = 0;
  for (std::size_t k = 0; k < config_.rules.size(); ++k) {
    const rule& r = config_.rules[k];
    const bool filters = g.filters[k];
    double d = 0;
    bool ok = true;
    switch (r.kind) {
      case rule_kind::difference: {
        const double ref = r.reference == reference_value::group_mean
                               ? g.sums[k] / static_cast<double>(g.count)
                           : g.anchor ? g.anchor->numbers[k]
                                      : rows_.number(seed, k);
        d = std::abs(rows_.number(c, k) - ref) / g.threshold[k];
        ok = d <= 1;
        break;
      }
      case rule_kind::equality:
        ok = tickets_[c].labels[k] == (g.anchor ? g.anchor->labels[k] : tickets_[seed].labels[k]);
        d = ok ? 0 : 1;
        break;
      case rule_kind::intersection:
        // Every member's set, and a running match's players' (its anchor).
        for (std::size_t m = 0; m <= g.members.size(); ++m) {
          if (m == g.members.size() && !g.anchor) break;
          const auto& a = m < g.members.size() ? tickets_[g.members[m]].sets[k] : g.anchor->sets[k];
          const auto& b = tickets_[c].sets[k];
          std::size_t shared = 0;
          for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
            if (a[i] < b[j]) {
              ++i;
            } else if (b[j] < a[i]) {
              ++j;
            } else {
              ++shared, ++i, ++j;
            }
          }
          if (shared < r.min_overlap) ok = false;
        }
        d = ok ? 0 : 1;
        break;
      case rule_kind::latency:
      case rule_kind::team_balance:
        continue;  // the datacenter check below; the whole group at the end
    }
    if (!ok && filters) return static_cast<std::int32_t>(k);
    total += r.weight * d;
  }
  // The datacenter: one within every member's threshold and the
  // candidate's, where the group's worst RTT and the candidate's are finite.
  const std::uint64_t* own = within(c, now);
  if (config_.latency) {
    const std::uint64_t* finite = rows_.finite(c);
    bool any = false;
    for (std::size_t w = 0; w < g.dcs.size(); ++w)
      any = any || (g.dcs[w] & own[w] & g.finite[w] & finite[w]) != 0;
    if (!any) return no_datacenter;
  }
  if (latency_rule_) {
    // Its distance: the best RTT the group would play at. Within the ideal
    // band no datacenter is nearer than another.
    const double* rtt = rows_.rtt(c);
    double best = detail::infinity;
    for (std::size_t w = 0; w < g.dcs.size(); ++w) {
      const std::uint64_t shared = g.dcs[w] & own[w];
      detail::for_each_bit(&shared, 1, [&](std::size_t d) {
        best = std::min(best, std::max(g.worst_rtt[w * 64 + d], rtt[w * 64 + d]));
      });
    }
    const auto& p = *config_.latency;
    const double scale = std::isfinite(g.seed_max_rtt) ? g.seed_max_rtt : p.expand_ms;
    for (const rule& r : config_.rules)
      if (r.kind == rule_kind::latency) total += r.weight * std::max(best, p.ideal_ms) / scale;
  }
  if (distance) *distance = total;
  return admitted;
}

// The `want` nearest admitted tickets, nearest first (ties by the tickets'
// tiebreak). With the index: outward from the seed's value of
// the first difference rule, nearest value first. Every candidate's distance
// is at least weight x |value - seed's| / threshold (the other terms are not
// negative), so the scan stops at the rule's threshold while that rule
// filters, and as soon as that bound exceeds the farthest of a full set of
// candidates: what it returns is what scoring every ticket would return.
template <session_plugin Plugin>
void basic_session_queue<Plugin>::rank_candidates(std::size_t seed, time_ms now, std::size_t want,
                                                  std::vector<candidate>& best) {
  group& g = rank_group_;
  start_group(g, seed, now);
  rank_around(g, primary_ >= 0 ? rows_.number(seed, static_cast<std::size_t>(primary_)) : 0, now,
              want, best);
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::rank_around(const group& g, double v, time_ms now,
                                              std::size_t want, std::vector<candidate>& best) {
  const std::size_t seed = g.seed;  // no_ticket for a running match's group
  best.clear();                     // a max-heap by nearer() while it fills
  const auto offer = [&](const candidate& c) {
    if (best.size() == want && !detail::nearer(c, best.front())) return;
    best.push_back(c);
    std::push_heap(best.begin(), best.end(), detail::nearer);
    if (best.size() > want) {
      std::pop_heap(best.begin(), best.end(), detail::nearer);
      best.pop_back();
    }
  };
  const auto consider = [&](std::size_t i, std::uint64_t tiebreak) {
    double d = 0;
    if (admits(g, i, now, &d)) offer({d, tiebreak, i});
  };
  if (!lanes_.active()) {
    for (std::size_t i = 0; i < tickets_.size(); ++i)
      if (i != seed && !taken_[i] && !rows_[i].fast_track) consider(i, rows_[i].tiebreak);
  } else {
    const auto k = static_cast<std::size_t>(primary_);
    const rule& r = config_.rules[k];
    const double threshold = g.threshold[k];
    const bool filters = g.filters[k];
    // The lanes that may hold a ticket sharing a datacenter with the seed (a
    // candidate must be within its own threshold of one of the seed's),
    // each walked outward from v, passing over the entries that share no
    // datacenter with the seed; the lanes are merged nearest value first,
    // and a ticket in several lanes is considered once (its stamp).
    std::vector<lane_index::walk>& walks = walks_;
    lanes_.walks_from(seed, v, g.dcs.data(), walks, g.anchor_slot);
    const bool stamped = !lanes_.disjoint() && walks.size() > 1;
    ++stamp_;
    for (;;) {
      lane_index::walk* next = nullptr;
      bool next_up = false;
      double next_gap = 0;
      for (lane_index::walk& w : walks) {
        if (w.up < w.lane->size()) {
          const double gap = (*w.lane)[w.up].value - v;
          if (!next || gap < next_gap) next = &w, next_up = true, next_gap = gap;
        }
        if (w.down > 0) {
          const double gap = v - (*w.lane)[w.down - 1].value;
          if (!next || gap < next_gap) next = &w, next_up = false, next_gap = gap;
        }
      }
      if (!next) break;
      if (filters && next_gap > threshold) break;
      if (best.size() == want && r.weight * next_gap / threshold > best.front().distance) break;
      const value_lane::entry* e = nullptr;
      if (next_up) {
        e = &(*next->lane)[next->up];
        next->up = next->lane->alive_from(next->up + 1);
      } else {
        e = &(*next->lane)[next->down - 1];
        next->down = next->lane->alive_before(next->down - 1);
      }
      if ((e->datacenters & next->datacenters) == 0) continue;
      const std::size_t i = e->ticket;
      if (i == seed) continue;
      if (stamped) {
        if (seen_[i] == stamp_) continue;
        seen_[i] = stamp_;
      }
      if (rank_from_lane_) {
        // What admits() would read is all in the entry: the party's size,
        // the one rule's value, the datacenters (the mask, checked above).
        if (g.players + e->players > config_.max_players) continue;
        const double d = std::abs(e->value - v) / threshold;
        offer({0.0 + r.weight * d, e->tiebreak, i});  // the very sum admits() makes
      } else {
        consider(i, e->tiebreak);
      }
    }
  }
  std::sort_heap(best.begin(), best.end(), detail::nearer);
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::prefetch_seed(std::size_t i) const {
  rows_.prefetch(i);
  lanes_.prefetch(i);
}

template <session_plugin Plugin>
auto basic_session_queue<Plugin>::make_group(const std::vector<std::size_t>& members,
                                             time_ms now) const -> group {
  group g;
  start_group(g, members.front(), now);
  for (std::size_t k = 1; k < members.size(); ++k) join(g, members[k], now);
  return g;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::start_group(group& g, std::size_t seed_index, time_ms now) const {
  relax(g, rows_[seed_index].created, now);
  g.seed = seed_index;
  g.anchor = nullptr;
  g.anchor_slot = value_lane::npos;
  join(g, seed_index, now);
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::relax(group& g, time_ms since, time_ms now) const {
  g.members.clear();
  g.players = 0;
  g.count = 0;
  const std::size_t n_rules = config_.rules.size();
  g.sums.assign(n_rules, 0);
  const time_ms waited = now - since;
  g.threshold.resize(n_rules);
  g.filters.resize(n_rules);
  for (std::size_t k = 0; k < n_rules; ++k) {
    g.threshold[k] = threshold_after(config_.rules[k], waited);
    g.filters[k] = filters_after(config_.rules[k], waited);
  }
  g.seed_max_rtt = max_rtt(since, now);
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::join(group& g, std::size_t ticket, time_ms now) const {
  const ticket_rows::head t = rows_[ticket];
  g.members.push_back(ticket);
  g.players += t.party;
  ++g.count;
  for (std::size_t k = 0; k < g.sums.size(); ++k) g.sums[k] += rows_.number(ticket, k);
  const std::uint64_t* own = within(ticket, now);
  const std::uint64_t* finite = rows_.finite(ticket);
  const std::uint64_t* ideal = rows_.within(ticket, latency_stage::ideal);
  const std::size_t words = rows_.mask_words();
  if (g.members.size() == 1 && !g.anchor) {
    g.dcs.assign(own, own + words);
    g.finite.assign(finite, finite + words);
    g.ideal.assign(ideal, ideal + words);
    if (latency_rule_) {
      const double* rtt = rows_.rtt(ticket);
      g.worst_rtt.assign(rtt, rtt + latency_.datacenters().size());
    }
    return;
  }
  // Only the datacenters still within every member's threshold matter: the
  // others' worst RTT is never read again.
  if (latency_rule_) {
    const double* rtt = rows_.rtt(ticket);
    detail::for_each_bit(g.dcs.data(), words,
                         [&](std::size_t d) { g.worst_rtt[d] = std::max(g.worst_rtt[d], rtt[d]); });
  }
  for (std::size_t w = 0; w < words; ++w) {
    g.dcs[w] &= own[w];
    g.finite[w] &= finite[w];
    g.ideal[w] &= ideal[w];
  }
}

template <session_plugin Plugin>
std::vector<party_seat> basic_session_queue<Plugin>::seats(const group& g) const {
  std::vector<party_seat> out;
  for (std::size_t m : g.members) {
    const std::uint32_t party = rows_[m].party;
    double sum = 0;
    for (std::size_t p = 0; p < party; ++p) sum += rows_.mmr(m, p);
    out.push_back({party, sum});
  }
  return out;
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::teams_fit(const group& g, std::size_t ticket) const {
  if (config_.teams == 0 || config_.split_parties || rows_[ticket].party == 1)
    return true;  // the size check in admits() is all there is to it
  auto s = seats(g);
  s.push_back({rows_[ticket].party, 0});
  return parties_fit(s, config_.teams, config_.team_size);
}

template <session_plugin Plugin>
std::optional<std::vector<std::uint32_t>> basic_session_queue<Plugin>::assign(const group& g,
                                                                              time_ms now) const {
  if (g.players < config_.min_players) return std::nullopt;
  // A datacenter within every ticket's threshold (a party that fills a match
  // alone was never checked against one).
  if (!has_datacenter(g)) return std::nullopt;
  if (config_.teams == 0) return std::vector<std::uint32_t>(g.players, 0);
  std::vector<double> mmr;
  for (std::size_t m : g.members)
    for (std::size_t p = 0; p < rows_[m].party; ++p) mmr.push_back(rows_.mmr(m, p));
  std::vector<std::uint32_t> team_of;
  if (config_.split_parties) {
    team_of = assign_players(mmr, config_.teams, config_.team_size);
  } else {
    const auto by_party = assign_parties(seats(g), config_.teams, config_.team_size);
    if (!by_party) return std::nullopt;
    for (std::size_t i = 0; i < g.members.size(); ++i)
      team_of.insert(team_of.end(), rows_[g.members[i]].party, (*by_party)[i]);
  }
  const time_ms waited = now - rows_[g.members.front()].created;
  for (const rule& r : config_.rules)
    if (r.kind == rule_kind::team_balance && filters_after(r, waited) &&
        team_mean_gap(mmr, team_of, config_.teams) > threshold_after(r, waited))
      return std::nullopt;
  return team_of;
}

template <session_plugin Plugin>
auto basic_session_queue<Plugin>::pick_datacenter(const group& g) -> placement {
  const std::size_t none = latency_.datacenters().size();
  placement best{none, 0};
  double best_cost = detail::infinity;
  std::uint64_t best_tie = 0;
  const double ideal = config_.latency ? config_.latency->ideal_ms : 0;
  // The datacenters within every member's threshold (without a policy, all),
  // ascending.
  const auto worst_at = [&](std::size_t d) {
    double worst = 0;
    for (std::size_t m : g.members) worst = std::max(worst, rows_.rtt(m)[d]);
    return worst;
  };
  bool worst_known = true;
  detail::for_each_bit(g.dcs.data(), g.dcs.size(), [&](std::size_t d) {
    // Within the ideal band every datacenter costs the same: ties are drawn.
    // Where every member is within the ideal RTT (its mask says so), that
    // is the cost without reading the RTTs.
    const bool in_band = !latency_rule_ && config_.latency && (g.ideal[d / 64] >> (d % 64) & 1);
    const double worst = latency_rule_ ? g.worst_rtt[d] : in_band ? 0 : worst_at(d);
    const double cost = in_band ? ideal : std::max(worst, ideal);
    const std::uint64_t tie = rng_();
    if (best.datacenter == none || cost < best_cost || (cost == best_cost && tie < best_tie)) {
      best = {d, worst};
      worst_known = !in_band;
      best_cost = cost;
      best_tie = tie;
    }
  });
  if (!worst_known) best.worst_rtt = worst_at(best.datacenter);
  return best;
}

}  // namespace mm::session
