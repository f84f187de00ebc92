// One try of one query over the cached players, shared by engine::find_match
// and engine::explain so that the two cannot drift apart: the bucket order,
// two lanes over it, the request's exclusions, the match rule, and the two
// stop rules (docs/design.md, "Queries").
#pragma once

#include <cstdint>

#include "mm/engine/bucket_pool.hpp"
#include "mm/engine/exclusion_set.hpp"
#include "mm/engine/game_profile.hpp"
#include "mm/engine/random.hpp"

namespace mm {

// What happened to one candidate met by the walk.
enum class candidate_event : std::uint8_t {
  excluded,  // the attacker, or an id the request excluded: not tested
  rejected,  // tested, and the match rule said no
  possible,  // tested, and the match rule said yes
};

template <class Model>
struct search_outcome {
  const Model* best = nullptr;  // highest quality; on equal quality, the first seen
  std::uint32_t best_bucket = 0;
  float best_quality = 0;
  std::uint32_t tested = 0;    // candidates the match rule saw
  std::uint32_t possible = 0;  // ... and accepted
};

// The walk stops after `max_tested` candidates tested or `max_possible`
// accepted, whichever comes first, or when the order has no bucket left.
struct search_limits {
  std::uint32_t max_tested = 0;
  std::uint32_t max_possible = 0;
};

// A candidate observer that does nothing (find_match's: the calls inline away).
struct ignore_candidates {
  template <class Model>
  void operator()(candidate_event, const Model&, std::uint32_t) const {}
};

// Walks `order` and returns the best candidate for `q` at `retries`;
// `observe(event, model, bucket)` sees every candidate met, in walk order.
// `r` drives the walk's random choices: pass a copy to leave the caller's
// generator where it was.
template <game_profile Profile, class Pool, class Observer>
search_outcome<typename Profile::model_type> search_candidates(
    const Pool& pool, const Profile& profile, const typename Profile::query_type& q,
    std::uint32_t retries, bucket_order<Pool>& order, const exclusion_set& excluded,
    search_limits limits, rng& r, Observer&& observe) {
  using model_type = typename Profile::model_type;
  two_lane_walk<Pool> walk(pool, order, r);
  search_outcome<model_type> out;
  std::uint32_t bucket = 0;
  while (out.tested < limits.max_tested && out.possible < limits.max_possible) {
    const model_type* m = walk.template next<model_type>(bucket);
    if (!m) break;
    if (excluded.contains(Profile::id_of(*m))) {
      observe(candidate_event::excluded, *m, bucket);
      continue;
    }
    ++out.tested;
    const match_verdict v = profile.match(q, *m, retries);
    if (!v.possible) {
      observe(candidate_event::rejected, *m, bucket);
      continue;
    }
    ++out.possible;
    observe(candidate_event::possible, *m, bucket);
    if (!out.best || v.quality > out.best_quality) {
      out.best = m;
      out.best_quality = v.quality;
      out.best_bucket = bucket;
    }
  }
  return out;
}

}  // namespace mm
