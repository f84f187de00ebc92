// Helpers shared by the engine tests: small generic-profile engines and an
// exhaustive oracle over what an engine holds.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "engine.hpp"
#include "generic_profile.hpp"

namespace mm::test {

using generic_engine = engine<generic_profile>;

inline options small_options(std::uint32_t cache = 1000) {
  options o;
  o.player_cache_size = cache;
  o.database_cache_size = std::min<std::uint32_t>(cache, 100);
  o.bucket_min_size = 1;
  o.bucket_initial_size = std::min<std::uint32_t>(cache, 64);
  o.mmr_bucket_count = 10;
  o.buckets_rebalance_sample_count = 10'000;
  o.random_seed = 1;
  return o;
}

inline generic_model model(player_id id, float mmr, std::array<std::uint32_t, 4> a = {}) {
  return generic_model{id, mmr, a};
}

inline generic_query query(player_id attacker, float mmr, std::array<std::uint32_t, 4> a = {}) {
  return generic_query{attacker, mmr, a};
}

inline std::vector<generic_model> cached(const generic_engine& e) {
  std::vector<generic_model> all;
  e.for_each_player([&](const generic_model& m) { all.push_back(m); });
  return all;
}

// The answer by exhaustive search: every cached player except the attacker and
// the excluded ones, that the match rule allows and that shares the query's
// labels of every hard strategy.
struct oracle_result {
  std::vector<std::pair<player_id, float>> possible;
  std::optional<float> best;
};

inline oracle_result oracle(const generic_engine& e, const match_request<generic_query>& req) {
  oracle_result r;
  const label_tuple ql = e.labels_of(req.query);
  std::vector<bool> hard;
  for (auto& a : e.profile().config().attributes)
    if (a.bucketing != attribute_bucketing::none)
      hard.push_back(a.bucketing == attribute_bucketing::distinct_hard);
  e.for_each_player([&](const generic_model& m) {
    if (m.id() == req.query.attacker) return;
    if (std::find(req.excluded_player_ids.begin(), req.excluded_player_ids.end(), m.id()) !=
        req.excluded_player_ids.end())
      return;
    const label_tuple ml = e.labels_of(m);
    for (std::size_t s = 0; s < hard.size(); ++s)
      if (hard[s] && ml.extra[s] != ql.extra[s]) return;
    const match_verdict v = e.profile().match(req.query, m, req.num_retries);
    if (!v.possible) return;
    r.possible.emplace_back(m.id(), v.quality);
    if (!r.best || v.quality > *r.best) r.best = v.quality;
  });
  return r;
}

}  // namespace mm::test
