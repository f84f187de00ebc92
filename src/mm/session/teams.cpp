#include "mm/session/teams.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace mm::session {

namespace {

// Parties' indices, largest first, then strongest first: the order both the
// fit search and the assignment place them in.
std::vector<std::uint32_t> placing_order(const std::vector<party_seat>& parties) {
  std::vector<std::uint32_t> order(parties.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (parties[a].size != parties[b].size) return parties[a].size > parties[b].size;
    return parties[a].mmr_sum > parties[b].mmr_sum;
  });
  return order;
}

// Depth-first placement of parties (in `order`) into teams, trying the teams
// with the lowest MMR sum first and skipping teams in the same state as one
// already tried (same fill and sum: the same subtree). At most `budget`
// placements are tried.
struct placer {
  const std::vector<party_seat>& parties;
  const std::vector<std::uint32_t>& order;
  std::uint32_t team_size;
  std::vector<std::uint32_t> fill;
  std::vector<double> sum;
  std::vector<std::uint32_t> team_of;
  std::uint64_t budget = 100'000;

  bool place(std::size_t k) {
    if (k == order.size()) return true;
    if (budget == 0) return false;
    --budget;
    const party_seat& p = parties[order[k]];
    std::vector<std::uint32_t> teams(fill.size());
    std::iota(teams.begin(), teams.end(), 0u);
    std::stable_sort(teams.begin(), teams.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return sum[a] < sum[b]; });
    for (std::size_t i = 0; i < teams.size(); ++i) {
      const std::uint32_t t = teams[i];
      if (fill[t] + p.size > team_size) continue;
      bool same_as_tried = false;
      for (std::size_t j = 0; j < i && !same_as_tried; ++j)
        same_as_tried = fill[teams[j]] == fill[t] && sum[teams[j]] == sum[t] &&
                        fill[teams[j]] + p.size <= team_size;
      if (same_as_tried) continue;
      fill[t] += p.size;
      sum[t] += p.mmr_sum;
      team_of[order[k]] = t;
      if (place(k + 1)) return true;
      fill[t] -= p.size;
      sum[t] -= p.mmr_sum;
    }
    return false;
  }
};

}  // namespace

bool parties_fit(const std::vector<party_seat>& parties, std::uint32_t teams,
                 std::uint32_t team_size) {
  std::uint64_t players = 0;
  bool all_solo = true;
  for (const auto& p : parties) {
    players += p.size;
    all_solo = all_solo && p.size == 1;
    if (p.size > team_size) return false;
  }
  if (players > std::uint64_t{teams} * team_size) return false;
  if (all_solo) return true;
  return assign_parties(parties, teams, team_size).has_value();
}

std::optional<std::vector<std::uint32_t>> assign_parties(const std::vector<party_seat>& parties,
                                                         std::uint32_t teams,
                                                         std::uint32_t team_size) {
  return assign_parties_into(parties, std::vector<std::uint32_t>(teams, 0),
                             std::vector<double>(teams, 0), team_size);
}

std::optional<std::vector<std::uint32_t>> assign_parties_into(
    const std::vector<party_seat>& parties, const std::vector<std::uint32_t>& held,
    const std::vector<double>& held_mmr_sum, std::uint32_t team_size) {
  if (held.empty() || held.size() != held_mmr_sum.size()) return std::nullopt;
  for (std::uint32_t h : held)
    if (h > team_size) return std::nullopt;
  const auto order = placing_order(parties);
  placer p{parties, order,        team_size,
           held,    held_mmr_sum, std::vector<std::uint32_t>(parties.size(), 0)};
  if (!p.place(0)) return std::nullopt;
  // Swaps of equal-sized parties between the strongest and the weakest team
  // while one narrows their gap (bounded: each swap strictly narrows it).
  for (int round = 0; round < 64; ++round) {
    const auto [lo, hi] = std::minmax_element(p.sum.begin(), p.sum.end());
    const auto weak = static_cast<std::uint32_t>(lo - p.sum.begin());
    const auto strong = static_cast<std::uint32_t>(hi - p.sum.begin());
    const double gap = *hi - *lo;
    double best_gap = gap;
    std::size_t best_a = 0, best_b = 0;
    for (std::size_t a = 0; a < parties.size(); ++a) {
      if (p.team_of[a] != strong) continue;
      for (std::size_t b = 0; b < parties.size(); ++b) {
        if (p.team_of[b] != weak || parties[a].size != parties[b].size) continue;
        const double d = parties[a].mmr_sum - parties[b].mmr_sum;
        const double new_gap = std::abs(gap - 2 * d);
        if (d > 0 && new_gap < best_gap) {
          best_gap = new_gap;
          best_a = a;
          best_b = b;
        }
      }
    }
    if (best_gap >= gap) break;
    const double d = parties[best_a].mmr_sum - parties[best_b].mmr_sum;
    p.sum[strong] -= d;
    p.sum[weak] += d;
    std::swap(p.team_of[best_a], p.team_of[best_b]);
  }
  return p.team_of;
}

std::vector<std::uint32_t> assign_players(const std::vector<double>& mmr, std::uint32_t teams,
                                          std::uint32_t team_size) {
  std::vector<party_seat> solos;
  solos.reserve(mmr.size());
  for (double m : mmr) solos.push_back({1, m});
  auto placed = assign_parties(solos, teams, team_size);
  return placed ? *placed : std::vector<std::uint32_t>(mmr.size(), 0);
}

double team_mean_gap(const std::vector<double>& mmr, const std::vector<std::uint32_t>& team_of,
                     std::uint32_t teams) {
  std::vector<double> sum(teams, 0);
  std::vector<std::uint32_t> n(teams, 0);
  for (std::size_t i = 0; i < mmr.size(); ++i) {
    sum[team_of[i]] += mmr[i];
    ++n[team_of[i]];
  }
  return team_mean_gap(sum, n);
}

double team_mean_gap(const std::vector<double>& sums, const std::vector<std::uint32_t>& counts) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t t = 0; t < sums.size(); ++t) {
    if (counts[t] == 0) continue;
    lo = std::min(lo, sums[t] / counts[t]);
    hi = std::max(hi, sums[t] / counts[t]);
  }
  return hi >= lo ? hi - lo : 0;
}

}  // namespace mm::session
