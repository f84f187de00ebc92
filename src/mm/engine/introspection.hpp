// Plain views of an engine's state, produced by the engine so
// that actors and the admin API only forward them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mm/engine/types.hpp"

namespace mm {

struct bucket_info {
  std::uint32_t index = 0;
  std::vector<std::string> labels;  // one per strategy, MMR first
  double mmr_low = 0, mmr_high = 0;
  std::uint32_t count = 0, capacity = 0;
  double fill = 0;
};

// Upper bounds of the MMR-gap histogram of successful matches; one more count
// past the last bound holds the wider gaps.
inline constexpr std::array<double, 10> mmr_gap_bounds{5,   10,  25,  50,   100,
                                                       200, 400, 800, 1600, 3200};

inline std::size_t mmr_gap_slot(double gap) {
  std::size_t i = 0;
  while (i < mmr_gap_bounds.size() && gap > mmr_gap_bounds[i]) ++i;
  return i;
}

struct engine_stats {
  std::uint64_t queries_success = 0, queries_none_found = 0, queries_fake = 0, queries_invalid = 0;
  std::uint64_t updates_inserted = 0, updates_updated = 0, updates_bucket_changed = 0,
                updates_removed = 0, updates_no_op = 0, updates_rejected = 0;
  std::uint64_t evictions = 0;  // players pushed out by inserts
  // Inserts of a tuple with no bucket when a new bucket would pass the
  // capacity limit (engine::capacity_limit); a rebalance gives it room.
  std::uint64_t inserts_refused_capacity = 0;
  std::uint64_t removed_after_offer = 0;  // winners taken out (design.md, Queries)
  std::uint64_t scans = 0;                // database scans applied
  std::uint64_t rows_applied = 0;         // player rows through the model factory
  std::uint64_t rows_malformed = 0;       // unreadable rows and rows the factory refused
  std::uint64_t samples_taken = 0;
  std::uint64_t rebalances = 0;
  std::uint64_t players_lost_in_rebalance = 0;
  // |attack MMR - defense MMR| of every Success: counts per mmr_gap_bounds slot
  // (not cumulative) and their sum.
  std::vector<std::uint64_t> mmr_gap_counts = std::vector<std::uint64_t>(mmr_gap_bounds.size() + 1);
  double mmr_gap_sum = 0;
};

struct engine_info {
  std::string name;
  std::uint64_t players = 0;   // cached entries
  std::uint64_t capacity = 0;  // sum of bucket capacities
  double overall_fill = 0;
  std::uint64_t bucket_count = 0;
  std::vector<bucket_info> buckets;
  double mmr_low = 0, mmr_high = 0;
  std::uint64_t samples = 0;
  bool enough_data_for_rebalance = false;
  std::int64_t last_rebalance_unix_ms = 0;  // 0: never
  std::uint64_t memory_bytes = 0;           // buckets + samples
  engine_stats stats;
  // The latest rows the engine could not use, explained (at most 10).
  std::vector<std::string> row_reports;
};

struct player_info {
  bool participating = false;
  double mmr = 0;
  double percentile = 0;               // share of cached players with an MMR <= this one
  std::vector<std::uint32_t> buckets;  // indices into engine_info::buckets
};

// The "why no match" tool: a query tried with retries 0, 1, ... without side
// effects on the cache, and the reasons the nearest rejected candidates were
// rejected on the last try.
struct query_try {
  std::uint32_t retries = 0;
  match_type type = match_type::none_found;
  player_id best_candidate_id = invalid_player;
  float quality = 0;
  double mmr_gap = 0;  // of the best candidate
  std::uint32_t players_tested = 0;
  std::uint32_t possible = 0;  // candidates the match rule accepted
};

struct rejected_candidate {
  player_id id = invalid_player;
  double mmr = 0;
  std::uint32_t bucket = 0;
  std::string reason;
};

struct query_explanation {
  std::string error;                         // set when the request itself is invalid
  std::vector<query_try> tries;              // until the first Success, at most max_retries + 1
  std::vector<rejected_candidate> rejected;  // nearest in MMR first
  std::uint64_t players_cached = 0;
  std::uint32_t buckets_walked = 0;        // on the last try
  std::uint32_t buckets_never_walked = 0;  // excluded by a hard label
  std::uint32_t excluded_seen = 0;         // excluded ids met on the last try
};

struct rebalance_report {
  bool performed = false;
  std::string reason;  // why not, when not performed
  bool mmr_range_changed = false;
  double mmr_low = 0, mmr_high = 0;
  std::uint64_t samples = 0;
  std::uint64_t buckets_before = 0, buckets_after = 0, buckets_resized = 0, buckets_pruned = 0;
  std::uint64_t players_before = 0, players_after = 0, players_lost = 0;
  std::uint64_t capacity_after = 0;
};

}  // namespace mm
