// Helpers shared by the engine tests: small generic-profile engines and an
// exhaustive oracle over what an engine holds.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "mm/engine/exhaustive_search.hpp"
#include "mm/engine/generic_engine.hpp"

namespace mm::test {

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

// The answer by exhaustive search (mm/engine/exhaustive_search.hpp).
using oracle_result = exhaustive_result;
inline oracle_result oracle(const generic_engine& e, const match_request<generic_query>& req) {
  return exhaustive_search(e, req);
}

}  // namespace mm::test
