#include "mm/engine/synthetic_players.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace mm {

namespace {
double draw_mmr(const synthetic_population& p, rng& r) {
  if (r.unit() < p.outlier_share) return p.outlier_mmr;
  return std::max(0.0, p.mmr_mean + p.mmr_stddev * r.normal());
}

std::array<std::int64_t, 4> draw_attributes(const synthetic_population& p, rng& r) {
  // Skewed regions: the first region holds about half of the players.
  const double u = r.unit();
  std::int64_t region = u < 0.5 ? 0 : 1 + static_cast<std::int64_t>(r.below(p.regions - 1));
  return {region, static_cast<std::int64_t>(r.below(p.guilds)),
          static_cast<std::int64_t>(r.below(p.heroes)),
          static_cast<std::int64_t>(r.below(p.leagues))};
}
}  // namespace

std::vector<player_row> make_players(const synthetic_population& p, std::size_t n,
                                     player_id first_id, rng& r) {
  std::vector<player_row> rows(n);
  for (std::size_t i = 0; i < n; ++i) {
    rows[i].id = first_id + i;
    rows[i].mmr = draw_mmr(p, r);
    rows[i].attributes = draw_attributes(p, r);
  }
  return rows;
}

generic_query make_query(const synthetic_population& p, player_id attacker, rng& r) {
  generic_query q;
  q.attacker = attacker;
  q.mmr = static_cast<float>(draw_mmr(p, r));
  auto a = draw_attributes(p, r);
  for (std::size_t i = 0; i < a.size(); ++i) q.attributes[i] = static_cast<std::uint32_t>(a[i]);
  return q;
}

generic_profile_config demo_profile_config() {
  generic_profile_config c;
  c.attributes = {
      {"region", attribute_rule::hard_equal, 0, attribute_bucketing::distinct_hard, 1},
      {"guild", attribute_rule::must_differ, 0, attribute_bucketing::none, 1},
      {"hero", attribute_rule::prefer_different, 20, attribute_bucketing::none, 1},
      {"league", attribute_rule::none, 0, attribute_bucketing::none, 1},
  };
  c.mmr_window = 100;
  c.mmr_window_per_retry = 50;
  c.mmr_window_max = 1000;
  return c;
}

}  // namespace mm
