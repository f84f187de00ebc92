// The engine's read-only views (docs/design.md, Introspection): labels in
// words, info, one bucket, one player, a page of a bucket, the top N by MMR,
// and the "why no match" tool. Definitions of members that engine.hpp
// declares; engine.hpp includes this file at its end.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mm/engine/engine.hpp"

namespace mm {

template <game_profile Profile>
auto engine<Profile>::explain(const request_type& req, std::uint32_t max_retries,
                              std::size_t max_rejected) -> query_explanation {
  query_explanation out;
  out.error = std::string(request_error(req));
  if (!out.error.empty()) return out;

  const query_type& q = req.query;
  const player_id attacker = Profile::attacker_of(q);
  const double attack_mmr = Profile::mmr_of(q);
  rng walk_rng = rng_;
  out.players_cached = pool().players();
  excluded_.assign(attacker, req.excluded_player_ids);
  max_retries = std::max(max_retries, req.num_retries);
  for (std::uint32_t retries = req.num_retries; retries <= max_retries; ++retries) {
    std::vector<bool> walked(pool().size());
    std::vector<rejected_candidate> rejected;
    std::uint32_t excluded_seen = 0;
    const auto observe = [&](candidate_event e, const model_type& m, std::uint32_t bucket) {
      walked[bucket] = true;
      const player_id id = Profile::id_of(m);
      if (e == candidate_event::excluded) {
        ++excluded_seen;
        rejected.push_back({id, Profile::mmr_of(m), bucket,
                            id == attacker ? "the attacker itself" : "excluded by the request"});
      } else if (e == candidate_event::rejected) {
        rejected.push_back({id, Profile::mmr_of(m), bucket, rejection_reason(q, m, retries)});
      }
    };
    bucket_order<pool_type> order = order_for(q, walk_rng);
    const auto found = search_candidates(pool(), profile_, q, retries, order, excluded_, limits(),
                                         walk_rng, observe);
    query_try t;
    t.retries = retries;
    t.players_tested = found.tested;
    t.possible = found.possible;
    if (found.best) {
      t.type = match_type::success;
      t.best_candidate_id = Profile::id_of(*found.best);
      t.quality = found.best_quality;
      t.mmr_gap = std::abs(attack_mmr - Profile::mmr_of(*found.best));
    }
    out.tries.push_back(t);
    if (!found.best && retries < max_retries) continue;
    out.buckets_walked = static_cast<std::uint32_t>(std::count(walked.begin(), walked.end(), true));
    out.excluded_seen = excluded_seen;
    // Buckets a hard label keeps out of every order of this query.
    bucket_order<pool_type> every = order_for(q, walk_rng);
    std::uint32_t ordered = 0;
    while (every.next()) ++ordered;
    out.buckets_never_walked = pool().size() - ordered;
    const auto nearer = [&](const rejected_candidate& a, const rejected_candidate& b) {
      return std::abs(a.mmr - attack_mmr) < std::abs(b.mmr - attack_mmr);
    };
    std::stable_sort(rejected.begin(), rejected.end(), nearer);
    if (rejected.size() > max_rejected) rejected.resize(max_rejected);
    out.rejected = std::move(rejected);
    break;
  }
  return out;
}

template <game_profile Profile>
auto engine<Profile>::describe(const label_tuple& t) const -> std::vector<std::string> {
  std::vector<std::string> out;
  out.push_back("mmr#" + std::to_string(t.mmr_index));
  for (std::uint32_t s = 0; s < t.extra_count; ++s)
    out.push_back(strategies_[s]->describe(t.extra[s]));
  return out;
}

template <game_profile Profile>
auto engine<Profile>::info() const -> engine_info {
  engine_info i;
  i.name = opt_.name;
  i.players = pool().players();
  i.capacity = pool().capacity();
  i.overall_fill = i.capacity ? static_cast<double>(i.players) / i.capacity : 0.0;
  i.bucket_count = pool().size();
  for (std::uint32_t b = 0; b < pool().size(); ++b) i.buckets.push_back(bucket_view(b));
  i.mmr_low = mmr_.low();
  i.mmr_high = mmr_.high();
  i.samples = samples_.size();
  i.enough_data_for_rebalance = samples_.enough_data();
  i.last_rebalance_unix_ms = last_rebalance_ms_;
  i.memory_bytes =
      samples_.memory_bytes() + cache_.filter_memory_bytes() + i.capacity * sizeof(model_type);
  i.stats = stats();
  i.row_reports.assign(row_reports_.begin(), row_reports_.end());
  return i;
}

template <game_profile Profile>
auto engine<Profile>::bucket_view(std::uint32_t b) const -> bucket_info {
  const auto& e = pool().at(b);
  return {b,
          describe(e.labels),
          mmr_.slice_low(e.labels.mmr_index),
          mmr_.slice_high(e.labels.mmr_index),
          e.slots.count(),
          e.slots.capacity(),
          e.slots.fill()};
}

template <game_profile Profile>
auto engine<Profile>::player(player_id id) const -> player_info {
  player_info p;
  if (id == invalid_player) return p;
  for (std::uint32_t b = 0; b < pool().size(); ++b) {
    if (const model_type* m = pool().at(b).slots.find(id)) {
      p.participating = true;
      p.mmr = Profile::mmr_of(*m);
      p.buckets.push_back(b);
    }
  }
  if (!p.participating) return p;
  std::uint64_t at_or_below = 0, all = 0;
  for_each_player([&](const model_type& m) {
    ++all;
    if (Profile::mmr_of(m) <= p.mmr) ++at_or_below;
  });
  p.percentile = static_cast<double>(at_or_below) / all;
  return p;
}

template <game_profile Profile>
auto engine<Profile>::inspect_bucket(std::uint32_t b, std::uint32_t offset,
                                     std::uint32_t limit) const -> std::vector<model_type> {
  std::vector<model_type> all;
  if (b >= pool().size()) return all;
  pool().at(b).slots.for_each([&](const model_type& m) { all.push_back(m); });
  std::sort(all.begin(), all.end(), by_mmr_descending);
  if (offset >= all.size()) return {};
  const auto end = std::min<std::size_t>(all.size(), std::size_t{offset} + limit);
  return {all.begin() + offset, all.begin() + static_cast<std::ptrdiff_t>(end)};
}

template <game_profile Profile>
auto engine<Profile>::top_by_mmr(std::uint32_t n) const -> std::vector<model_type> {
  std::vector<const model_type*> all;
  for_each_player([&](const model_type& m) { all.push_back(&m); });
  const std::size_t k = std::min<std::size_t>(n, all.size());
  std::partial_sort(
      all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
      [](const model_type* a, const model_type* b) { return by_mmr_descending(*a, *b); });
  std::vector<model_type> out;
  for (std::size_t i = 0; i < k; ++i) out.push_back(*all[i]);
  return out;
}

}  // namespace mm
