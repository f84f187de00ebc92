// Synthetic player bases for the demo, the benchmarks and the tests: a skewed
// MMR distribution with rare far outliers, and a few label attributes.
#pragma once

#include <cstdint>
#include <vector>

#include "mm/engine/generic_profile.hpp"
#include "mm/engine/player_row.hpp"
#include "mm/engine/random.hpp"

namespace mm {

struct synthetic_population {
  double mmr_mean = 1500, mmr_stddev = 300;
  double outlier_share = 0.001;  // players at outlier_mmr (smurfs, test accounts)
  double outlier_mmr = 1e6;
  std::uint32_t regions = 4;    // attribute 0
  std::uint32_t guilds = 2000;  // attribute 1
  std::uint32_t heroes = 20;    // attribute 2
  std::uint32_t leagues = 8;    // attribute 3
};

// Attribute names of the synthetic population, in attribute order.
inline constexpr const char* synthetic_attribute_names[] = {"region", "guild", "hero", "league"};

// Players with ids first_id, first_id + 1, ...
std::vector<player_row> make_players(const synthetic_population& p, std::size_t n,
                                     player_id first_id, rng& r);

// A query from a player drawn from the same population.
generic_query make_query(const synthetic_population& p, player_id attacker, rng& r);

// The generic profile the demo and benchmarks run: region must be equal (and is a
// hard bucketing strategy), never the own guild, a different hero preferred.
generic_profile_config demo_profile_config();

}  // namespace mm
