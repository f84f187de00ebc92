// Engine benchmark: a 1,000,000-player cache of the generic profile
// with 100 MMR buckets over a skewed population, on one thread. Every speed is
// paired with the exhaustive oracle measured in the same run, and the quality
// of the answers is checked against that oracle.
//
//   mm_engine_bench [players] [oracle_queries] [matching_candidate_amount]
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "bare_walk.hpp"
#include "bench_util.hpp"
#include "mm/engine/exhaustive_search.hpp"
#include "mm/engine/generic_engine.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/strategies/percentile.hpp"

namespace {
using engine_type = mm::engine<mm::generic_profile>;

// Gini coefficient of non-negative counts: 0 when all are equal, towards 1
// when a few take everything.
double gini(std::vector<double> x) {
  if (x.empty()) return 0;
  std::sort(x.begin(), x.end());
  double weighted = 0, total = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    weighted += static_cast<double>(i + 1) * x[i];
    total += x[i];
  }
  const double n = static_cast<double>(x.size());
  return total > 0 ? 2 * weighted / (n * total) - (n + 1) / n : 0;
}

// Offer fairness: how often each cached defender is offered, by the engine and
// by a uniform choice among the players the match rule accepts for the same
// attacker (the fairest answer that the data allows), on the same cache.
void fairness(const mm::synthetic_population& pop, const mm::generic_profile& profile,
              std::size_t players, std::size_t queries) {
  using mm::bench::emit;
  mm::rng r(77);
  mm::options o;
  o.player_cache_size = static_cast<std::uint32_t>(players);
  o.player_remove_after_candidate_offer = mm::fill_threshold::never;  // the same cache throughout
  o.random_seed = 5;
  engine_type e(o, profile);
  const auto rows = mm::make_players(pop, 2 * players, 1, r);  // a cache holds a sample
  for (const auto& row : rows) e.apply_row(row);
  e.rebalance(0);
  for (const auto& row : rows) e.apply_row(row);

  // The cached players by region, in MMR order, for the eligible sets.
  std::vector<mm::generic_model> cached;
  e.for_each_player([&](const mm::generic_model& m) { cached.push_back(m); });
  std::sort(cached.begin(), cached.end(), [](const auto& a, const auto& b) {
    return a.attributes[0] != b.attributes[0] ? a.attributes[0] < b.attributes[0] : a.mmr < b.mmr;
  });
  std::unordered_map<mm::player_id, std::size_t> slot;
  for (std::size_t i = 0; i < cached.size(); ++i) slot[cached[i].id()] = i;
  std::vector<double> by_engine(cached.size()), by_uniform(cached.size());
  std::vector<std::size_t> eligible;
  std::size_t answered = 0;
  for (std::size_t q = 0; q < queries; ++q) {
    mm::match_request<mm::generic_query> req;
    req.query = mm::make_query(pop, 10 * players + q, r);
    const auto res = e.find_match(req);
    // Every player the rule accepts lies within the window in the same region.
    const float window = profile.config().mmr_window;
    const auto lo = std::lower_bound(
        cached.begin(), cached.end(), req.query, [&](const auto& m, const auto& x) {
          return m.attributes[0] != x.attributes[0] ? m.attributes[0] < x.attributes[0]
                                                    : m.mmr < x.mmr - window;
        });
    eligible.clear();
    for (auto it = lo; it != cached.end() && it->attributes[0] == req.query.attributes[0] &&
                       it->mmr <= req.query.mmr + window;
         ++it)
      if (profile.match(req.query, *it, 0).possible)
        eligible.push_back(static_cast<std::size_t>(it - cached.begin()));
    if (res.type != mm::match_type::success || eligible.empty()) continue;
    ++answered;
    by_engine[slot.at(res.best_candidate_id)] += 1;
    by_uniform[eligible[r.below(eligible.size())]] += 1;
  }
  const auto max_over_mean = [&](const std::vector<double>& x) {
    const double mean = static_cast<double>(answered) / static_cast<double>(x.size());
    return *std::max_element(x.begin(), x.end()) / mean;
  };
  const std::string params = "\"cache\": " + std::to_string(cached.size()) +
                             ", \"queries\": " + std::to_string(queries) +
                             ", \"answered\": " + std::to_string(answered);
  const double g_engine = gini(by_engine), g_uniform = gini(by_uniform);
  emit("engine", "offer_gini", g_engine, "gini", params);
  emit("engine", "offer_gini_uniform", g_uniform, "gini", params);
  emit("engine", "offer_gini_vs_uniform", g_engine / g_uniform, "ratio", params);
  emit("engine", "offer_max_over_mean", max_over_mean(by_engine), "ratio", params);
  emit("engine", "offer_max_over_mean_uniform", max_over_mean(by_uniform), "ratio", params);
}
}  // namespace

int main(int argc, char** argv) {
  using mm::bench::emit;
  using mm::bench::now_s;
  const std::size_t players = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const std::size_t oracle_queries = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2'000;
  const std::uint32_t candidates =
      argc > 3 ? static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10)) : 10;
  const std::size_t timed_queries = 2'000'000;

  mm::synthetic_population pop;
  mm::rng r(2026);
  const auto rows = mm::make_players(pop, players, 1, r);
  const mm::generic_profile profile(mm::demo_profile_config());
  std::vector<mm::generic_model> models;
  models.reserve(players);
  for (const auto& row : rows) profile.make_models(row, models);

  const long long rss_before_engine = mm::bench::resident_bytes();
  mm::options o;
  o.player_cache_size = static_cast<std::uint32_t>(players);
  o.buckets_rebalance_sample_count = static_cast<std::uint32_t>(players);
  o.matching_candidate_amount = candidates;
  o.random_seed = 11;
  engine_type e(o, profile);
  const std::string params = "\"players\": " + std::to_string(players) +
                             ", \"cache\": " + std::to_string(players) +
                             ", \"mmr_buckets\": " + std::to_string(o.mmr_bucket_count) +
                             ", \"candidate_amount\": " + std::to_string(candidates);

  // The scan's path: every player is sampled, the buckets are sized from the
  // samples, then the players are inserted.
  for (const auto& m : models) e.add_sample(m);
  const auto report = e.rebalance(0);
  const long long rss_before = mm::bench::resident_bytes();
  double t = now_s();
  for (const auto& m : models) e.update(m.id(), m);
  const double insert_s = now_s() - t;
  const long long rss_after = mm::bench::resident_bytes();
  const auto info = e.info();
  const double filter_bytes = static_cast<double>(info.memory_bytes) -
                              static_cast<double>(info.capacity * sizeof(mm::generic_model)) -
                              static_cast<double>(e.sample_memory_bytes());
  emit("engine", "players_cached", static_cast<double>(info.players), "players", params);
  emit("engine", "cache_fill", info.overall_fill, "ratio", params);
  emit("engine", "bucket_count", static_cast<double>(info.bucket_count), "buckets", params);
  emit("engine", "rebalance_players_lost", static_cast<double>(report.players_lost), "players",
       params);
  // The cache proper, from what the engine allocated: bucket slots plus the
  // membership filter. The sizing samples are shown apart: their size is set by
  // buckets_rebalance_sample_count, not by the cache. Resident-memory growth is
  // printed as a cross-check (it undercounts when the fill reuses memory the
  // allocator already had).
  const double cache_bytes =
      static_cast<double>(info.memory_bytes) - static_cast<double>(e.sample_memory_bytes());
  emit("engine", "bytes_per_cached_player", cache_bytes / static_cast<double>(info.players),
       "bytes", params);
  emit("engine", "rss_growth_per_cached_player",
       static_cast<double>(rss_after - rss_before) / static_cast<double>(info.players), "bytes",
       params);
  emit("engine", "bytes_per_cached_player_all_in",
       static_cast<double>(rss_after - rss_before_engine) / static_cast<double>(info.players),
       "bytes", params + ", \"samples\": " + std::to_string(e.sample_count()));
  emit("engine", "bytes_per_slot", static_cast<double>(sizeof(mm::generic_model)), "bytes", params);
  emit("engine", "sample_fifo_bytes", static_cast<double>(e.sample_memory_bytes()), "bytes",
       params);
  emit("engine", "membership_filter_bytes", filter_bytes, "bytes", params);
  emit("engine", "insert_per_s", static_cast<double>(players) / insert_s, "1/s", params);

  // Timed queries: a fresh attacker each time, default limits, no exclusions.
  std::vector<mm::match_request<mm::generic_query>> reqs(timed_queries / 4);
  for (std::size_t i = 0; i < reqs.size(); ++i)
    reqs[i].query = mm::make_query(pop, players + 1 + i, r);
  std::size_t successes = 0;
  std::uint64_t tested = 0;
  t = now_s();
  for (std::size_t i = 0; i < timed_queries; ++i) {
    const auto res = e.find_match(reqs[i % reqs.size()]);
    successes += res.type == mm::match_type::success;
    tested += res.players_tested;
  }
  const double engine_qps = static_cast<double>(timed_queries) / (now_s() - t);
  emit("engine", "engine_queries_per_s", engine_qps, "1/s", params);

  // Reference measured alongside, since this machine's speed drifts: the bare
  // memory work of a query, i.e. two random walks over random buckets reading as
  // many players as a query tests, with no labels, rule or bookkeeping.
  const auto tested_per_query = static_cast<std::size_t>(
      static_cast<double>(tested) / static_cast<double>(timed_queries) + 0.5);
  std::uint64_t checksum = 0;
  const double bare_qps =
      mm::bench::bare_walks_per_s(e, tested_per_query, timed_queries, r, checksum);
  emit("engine", "bare_walk_per_s", bare_qps, "1/s",
       params + ", \"reads\": " + std::to_string(tested_per_query) +
           ", \"checksum\": " + std::to_string(checksum % 1000));
  emit("engine", "engine_vs_bare_walk", engine_qps / bare_qps, "ratio", params);
  emit("engine", "players_tested_per_query",
       static_cast<double>(tested) / static_cast<double>(timed_queries), "players", params);
  emit("engine", "engine_success_share",
       static_cast<double>(successes) / static_cast<double>(timed_queries), "ratio", params);

  // Quality against the exhaustive oracle on the same cache.
  std::size_t oracle_any = 0, engine_success_when_any = 0, none_agree = 0;
  std::vector<double> quality_rank, gaps;
  double oracle_s = 0;
  for (std::size_t i = 0; i < oracle_queries; ++i) {
    mm::match_request<mm::generic_query> req;
    req.query = mm::make_query(pop, players + 1 + i, r);
    t = now_s();
    const mm::exhaustive_result best = mm::exhaustive_search(e, req);
    oracle_s += now_s() - t;
    const auto res = e.find_match(req);
    if (best.possible.empty()) {
      none_agree += res.type == mm::match_type::none_found;
      continue;
    }
    ++oracle_any;
    if (res.type != mm::match_type::success) continue;
    ++engine_success_when_any;
    const auto at_or_below = std::count_if(best.possible.begin(), best.possible.end(),
                                           [&](const auto& c) { return c.second <= res.quality; });
    quality_rank.push_back(static_cast<double>(at_or_below) /
                           static_cast<double>(best.possible.size()));
    gaps.push_back(std::abs(req.query.mmr - res.model->mmr));
    e.update(res.best_candidate_id, res.model);  // put back if removed after the offer
  }
  const std::string oparams = params + ", \"oracle_queries\": " + std::to_string(oracle_queries);
  emit("engine", "oracle_queries_per_s", static_cast<double>(oracle_queries) / oracle_s, "1/s",
       oparams);
  emit("engine", "engine_vs_oracle_speedup",
       engine_qps / (static_cast<double>(oracle_queries) / oracle_s), "ratio", oparams);
  emit("engine", "success_ratio_vs_oracle",
       oracle_any ? static_cast<double>(engine_success_when_any) / oracle_any : 1.0, "ratio",
       oparams);
  emit("engine", "oracle_none_queries", static_cast<double>(oracle_queries - oracle_any), "queries",
       oparams);
  if (oracle_queries > oracle_any)
    emit("engine", "none_found_agreement",
         static_cast<double>(none_agree) / static_cast<double>(oracle_queries - oracle_any),
         "ratio", oparams);
  emit("engine", "quality_percentile_p50", mm::percentile(quality_rank, 0.5), "rank", oparams);
  emit("engine", "quality_percentile_p05", mm::percentile(quality_rank, 0.05), "rank", oparams);
  emit("engine", "mean_mmr_gap",
       gaps.empty()
           ? 0.0
           : std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size()),
       "mmr", oparams);

  // A million excluded ids: the cost of honouring the list (ids the cache does
  // not hold, so the walk ends as usual), then the worst case where the list
  // excludes every cached player and the walk must visit all the buckets the
  // query may use.
  mm::match_request<mm::generic_query> big;
  big.query = mm::make_query(pop, players + 1, r);
  big.excluded_player_ids.resize(1'000'000);
  std::iota(big.excluded_player_ids.begin(), big.excluded_player_ids.end(), 2 * players);
  t = now_s();
  auto big_res = e.find_match(big);  // the first use grows the engine's reused table
  emit("engine", "query_with_1m_excluded_first_ms", (now_s() - t) * 1e3, "ms", params);
  t = now_s();
  big_res = e.find_match(big);
  emit("engine", "query_with_1m_excluded_ms", (now_s() - t) * 1e3, "ms",
       params + ", \"result\": \"" + std::string(mm::to_string(big_res.type)) + "\"");
  std::iota(big.excluded_player_ids.begin(), big.excluded_player_ids.end(), 1);
  t = now_s();
  big_res = e.find_match(big);
  emit("engine", "query_excluding_whole_cache_ms", (now_s() - t) * 1e3, "ms",
       params + ", \"result\": \"" + std::string(mm::to_string(big_res.type)) + "\"");

  fairness(pop, profile, 100'000, 1'000'000);

  // Updates: a known player whose MMR moved a little, and unknown players (the
  // common case for a sampled cache), which must probe every bucket.
  std::vector<mm::generic_model> moved(models.begin(), models.begin() + 200'000);
  for (auto& m : moved) m.mmr += 5;
  t = now_s();
  for (const auto& m : moved) e.update(m.id(), m);
  emit("engine", "update_known_per_s", static_cast<double>(moved.size()) / (now_s() - t), "1/s",
       params);
  std::vector<mm::generic_model> strangers(moved);
  for (auto& m : strangers) m = mm::generic_model(m.id() + 10 * players, m.mmr, m.attributes);
  o.player_ignore_update_insert = mm::fill_threshold::always;  // probe, never insert
  engine_type probe_only(o, profile);
  for (const auto& m : models) probe_only.add_sample(m);
  probe_only.rebalance(0);
  for (const auto& m : models) probe_only.update(m.id(), m);
  t = now_s();
  for (const auto& m : strangers) probe_only.update(m.id(), m);
  emit("engine", "update_unknown_per_s", static_cast<double>(strangers.size()) / (now_s() - t),
       "1/s", params);
  return 0;
}
