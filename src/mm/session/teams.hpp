// Teams of a session match: whether parties fit into teams, and an
// assignment that keeps parties together and balances the teams' MMR.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace mm::session {

struct party_seat {
  std::uint32_t size = 1;
  double mmr_sum = 0;  // the party's players' MMR, summed
};

// Whether parties of these sizes fit into `teams` teams of `team_size`
// without splitting any (a bounded search; exact for the sizes of real
// matches). Solo players only: whether they fit at all.
bool parties_fit(const std::vector<party_seat>& parties, std::uint32_t teams,
                 std::uint32_t team_size);

// Parties into teams, each party whole: the team of each party (index into
// `parties`), chosen so that the teams' MMR sums are close (largest parties
// first into the team with the lowest sum, then swaps of equal-sized parties
// between the highest and the lowest team while they narrow the gap). Nothing
// when they do not fit.
std::optional<std::vector<std::uint32_t>> assign_parties(const std::vector<party_seat>& parties,
                                                         std::uint32_t teams,
                                                         std::uint32_t team_size);

// The same into teams that already hold players (a running match's open
// seats): team t holds `held[t]` seats whose players' MMR sums to
// `held_mmr_sum[t]`. Only the new parties are placed and swapped; nothing
// when they do not fit into the free seats.
std::optional<std::vector<std::uint32_t>> assign_parties_into(
    const std::vector<party_seat>& parties, const std::vector<std::uint32_t>& held,
    const std::vector<double>& held_mmr_sum, std::uint32_t team_size);

// Players into teams one by one (a queue that splits parties): the team of
// each player, strongest first into the team with the lowest sum.
std::vector<std::uint32_t> assign_players(const std::vector<double>& mmr, std::uint32_t teams,
                                          std::uint32_t team_size);

// The highest minus the lowest team mean, for a team of each player.
double team_mean_gap(const std::vector<double>& mmr, const std::vector<std::uint32_t>& team_of,
                     std::uint32_t teams);

// The same from each team's MMR sum and player count (an empty team has no
// mean and is left out).
double team_mean_gap(const std::vector<double>& sums, const std::vector<std::uint32_t>& counts);

}  // namespace mm::session
