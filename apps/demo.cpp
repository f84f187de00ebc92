// The demo: fills an engine with synthetic players the way the scan would
// (samples, a rebalance, then the players) and answers a stream of queries,
// printing what a game team wants to know first: the result mix, how far apart
// attacker and defender are, and the time per query.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine.hpp"
#include "percentile.hpp"
#include "synthetic_players.hpp"

namespace {
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}
}  // namespace

int main(int argc, char** argv) {
  const std::size_t players = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100'000;
  const std::size_t queries = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200'000;

  mm::options o;
  o.name = "demo";
  o.player_cache_size = static_cast<std::uint32_t>(players);
  o.database_cache_size = std::min<std::uint32_t>(o.database_cache_size, o.player_cache_size);
  o.enable_fake_opponents = true;
  o.random_seed = 42;
  mm::engine<mm::generic_profile> engine(o, mm::generic_profile(mm::demo_profile_config()));

  mm::rng r(7);
  mm::synthetic_population pop;
  std::printf("matchmaker demo: %zu synthetic players (MMR ~ normal(%.0f, %.0f), %.1f%% at "
              "%.0f), regions/guilds/heroes as labels\n",
              players, pop.mmr_mean, pop.mmr_stddev, pop.outlier_share * 100, pop.outlier_mmr);

  auto t0 = clock_type::now();
  const auto rows = mm::make_players(pop, players, 1, r);
  for (const auto& row : rows) engine.apply_row(row);  // samples + first placement
  const auto report = engine.rebalance(0);
  for (const auto& row : rows) engine.apply_row(row);  // fill the resized buckets
  const auto info = engine.info();
  std::printf("filled in %.2f s: %llu players cached in %llu buckets (capacity %llu, fill "
              "%.0f%%), MMR range [%.0f, %.0f] (outliers ignored), %llu lost to collisions "
              "during the rebalance\n",
              seconds_since(t0), static_cast<unsigned long long>(info.players),
              static_cast<unsigned long long>(info.bucket_count),
              static_cast<unsigned long long>(info.capacity), info.overall_fill * 100,
              info.mmr_low, info.mmr_high,
              static_cast<unsigned long long>(report.players_lost));

  std::vector<double> gaps;
  std::size_t counts[4] = {};
  std::uint64_t tested = 0;
  t0 = clock_type::now();
  for (std::size_t i = 0; i < queries; ++i) {
    mm::match_request<mm::generic_query> req;
    req.query = mm::make_query(pop, players + 1 + i, r);
    const auto res = engine.find_match(req);
    ++counts[static_cast<int>(res.type)];
    tested += res.players_tested;
    if (res.type == mm::match_type::success) gaps.push_back(std::abs(req.query.mmr - res.model->mmr));
    // The game would now fight and push both players' new state; the demo
    // puts the offered defender back, as that update would.
    if (res.type == mm::match_type::success) engine.update(res.best_candidate_id, res.model);
  }
  const double secs = seconds_since(t0);
  std::printf("%zu queries in %.2f s: %.2f us per query (including the update that puts "
              "the defender back), %.1f players tested per query\n",
              queries, secs, secs * 1e6 / static_cast<double>(queries),
              static_cast<double>(tested) / static_cast<double>(queries));
  std::printf("results: Success %.2f%%, FakeOpponent %.2f%%, NoneFound %.2f%%, Invalid %zu\n",
              100.0 * counts[0] / queries, 100.0 * counts[2] / queries,
              100.0 * counts[1] / queries, counts[3]);
  std::printf("MMR gap attacker-defender on Success: median %.1f, p90 %.1f, p99 %.1f "
              "(window %.0f at the first try)\n",
              mm::percentile(gaps, 0.5), mm::percentile(gaps, 0.9), mm::percentile(gaps, 0.99),
              engine.profile().window(0));
  return 0;
}
