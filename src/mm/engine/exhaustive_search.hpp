// The answer to a query by exhaustive search over everything an engine
// caches: the reference that tests and benchmarks compare find_match with
// (and that a game can use to test its own profile). O(players cached) per
// query; changes nothing.
#pragma once

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "mm/engine/engine.hpp"

namespace mm {

struct exhaustive_result {
  // Every candidate find_match may offer, with the match rule's quality.
  std::vector<std::pair<player_id, float>> possible;
  std::optional<float> best;  // the highest quality among them
};

// Candidates are the cached players other than the attacker and the excluded
// ids, with the query's label on every hard strategy, that the match rule
// accepts at the request's retries.
template <game_profile Profile>
exhaustive_result exhaustive_search(const engine<Profile>& e,
                                    const match_request<typename Profile::query_type>& req) {
  using model_type = typename Profile::model_type;
  exhaustive_result r;
  const player_id attacker = Profile::attacker_of(req.query);
  const label_tuple query_labels = e.labels_of(req.query);
  const auto traits = e.traits();
  e.for_each_player([&](const model_type& m) {
    const player_id id = Profile::id_of(m);
    if (id == attacker) return;
    if (std::find(req.excluded_player_ids.begin(), req.excluded_player_ids.end(), id) !=
        req.excluded_player_ids.end())
      return;
    const label_tuple labels = e.labels_of(m);
    for (std::size_t s = 0; s < traits.size(); ++s)
      if (traits[s].hard && labels.extra[s] != query_labels.extra[s]) return;
    const match_verdict v = e.profile().match(req.query, m, req.num_retries);
    if (!v.possible) return;
    r.possible.emplace_back(id, v.quality);
    if (!r.best || v.quality > *r.best) r.best = v.quality;
  });
  return r;
}

}  // namespace mm
