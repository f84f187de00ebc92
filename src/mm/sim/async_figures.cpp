#include "mm/sim/async_figures.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "mm/engine/error.hpp"
#include "mm/sim/figures.hpp"

namespace mm::sim {

offer_fairness fairness_of(const std::vector<std::uint32_t>& offers, std::size_t players) {
  offer_fairness f;
  std::vector<double> amounts(players, 0);
  std::uint64_t never = 0, most = 0;
  for (std::size_t i = 0; i < players; ++i) {
    amounts[i] = offers[i];
    f.offers += offers[i];
    most = std::max<std::uint64_t>(most, offers[i]);
    if (offers[i] == 0) ++never;
  }
  if (players == 0) return f;
  const double mean = static_cast<double>(f.offers) / static_cast<double>(players);
  f.max_over_mean = mean > 0 ? static_cast<double>(most) / mean : 0;
  std::sort(amounts.begin(), amounts.end());
  double running = 0;
  std::size_t next = 0;
  for (int k = 0; k <= 20; ++k) {
    const auto upto =
        static_cast<std::size_t>(std::llround(static_cast<double>(players) * k / 20.0));
    for (; next < upto; ++next) running += amounts[next];
    f.lorenz.push_back(f.offers ? running / static_cast<double>(f.offers) : 0);
  }
  f.gini = gini(std::move(amounts));
  f.never_offered = static_cast<double>(never) / static_cast<double>(players);
  return f;
}

void add_counts(async_hour& t, const async_hour& f) {
  t.attacks += f.attacks;
  t.success += f.success;
  t.none_found += f.none_found;
  t.fake += f.fake;
  t.missed += f.missed;
  t.joins += f.joins;
  t.churned += f.churned;
}

void check_async_day_config(const async_day_config& c) {
  if (c.places.empty()) throw error(errc::invalid_argument, "async day: no places");
  if (!(c.attacks_per_player_day >= 0) || !(c.joins_per_day >= 0) ||
      !(c.churn_per_day >= 0 && c.churn_per_day <= 1) || !(c.days > 0 && c.days <= 366) ||
      !(c.elo_k >= 0) || c.shield.count() < 0 || c.warm_up.count() < 0 ||
      !std::isfinite(c.mmr_mean + c.new_player_mmr) || !(c.mmr_stddev >= 0) ||
      !(c.skill_stddev >= 0))
    throw error(errc::invalid_argument,
                "async day: attacks, joins and K >= 0, churn within [0, 1], days within (0, 366], "
                "no negative shield or warm-up, finite MMRs");
  // The day fills a table of its own: never one that holds anything already.
  for (const std::string& f : {c.database, c.database + ".uniform"})
    if (std::filesystem::exists(f))
      throw error(errc::invalid_argument,
                  "database: '" + f + "' exists; the simulation creates its own file");
}

options default_async_options(std::uint32_t players) {
  options o;
  o.name = "mmsim";
  o.player_cache_size = std::max<std::uint32_t>(players / 5, 1000);
  o.database_cache_size = std::min(o.database_cache_size, o.player_cache_size);
  o.bucket_initial_size = std::min<std::uint32_t>(o.bucket_initial_size, o.player_cache_size);
  o.bucket_min_size = std::min(o.bucket_min_size, o.bucket_initial_size);
  o.enable_fake_opponents = true;
  return o;
}

}  // namespace mm::sim
