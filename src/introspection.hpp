// Plain views of an engine's state (SPEC §10 shapes), produced by the engine so
// that actors and the admin API only forward them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "types.hpp"

namespace mm {

struct bucket_info {
  std::uint32_t index = 0;
  std::vector<std::string> labels;  // one per strategy, MMR first
  double mmr_low = 0, mmr_high = 0;
  std::uint32_t count = 0, capacity = 0;
  double fill = 0;
};

struct engine_stats {
  std::uint64_t queries_success = 0, queries_none_found = 0, queries_fake = 0,
                queries_invalid = 0;
  std::uint64_t updates_inserted = 0, updates_updated = 0, updates_bucket_changed = 0,
                updates_removed = 0, updates_no_op = 0, updates_rejected = 0;
  std::uint64_t evictions = 0;            // players pushed out by inserts
  std::uint64_t removed_after_offer = 0;  // winners taken out (SPEC §6.6)
  std::uint64_t scans = 0;                // database scans applied
  std::uint64_t rows_applied = 0;         // player rows through the model factory
  std::uint64_t rows_malformed = 0;       // unreadable rows and rows the factory refused
  std::uint64_t samples_taken = 0;
  std::uint64_t rebalances = 0;
  std::uint64_t players_lost_in_rebalance = 0;
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
};

struct player_info {
  bool participating = false;
  double mmr = 0;
  double percentile = 0;  // share of cached players with an MMR <= this one
  std::vector<std::uint32_t> buckets;  // indices into engine_info::buckets
};

struct rebalance_report {
  bool performed = false;
  std::string reason;  // why not, when not performed
  bool mmr_range_changed = false;
  double mmr_low = 0, mmr_high = 0;
  std::uint64_t samples = 0;
  std::uint64_t buckets_before = 0, buckets_after = 0, buckets_resized = 0,
                buckets_pruned = 0;
  std::uint64_t players_before = 0, players_after = 0, players_lost = 0;
  std::uint64_t capacity_after = 0;
};

}  // namespace mm
