// Matchmaker options (docs/configuration.md) with their defaults, and the start-up checks that
// reject inconsistent settings with a message naming the option.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "mm/engine/error.hpp"
#include "mm/engine/types.hpp"

namespace mm {

struct options {
  std::string name = "matchmaker";

  // Cache sizing
  std::uint32_t player_cache_size = 100'000;
  std::uint32_t database_cache_size = 16'000;  // players kept in a snapshot
  std::uint32_t mmr_bucket_count = 100;
  std::uint32_t bucket_min_size = 20;
  std::uint32_t bucket_initial_size = 200;
  double initial_mmr_low = 0;
  double initial_mmr_high = 1000;
  // Percentiles of the sampled MMRs that bound the MMR range after a rebalance.
  // 0.5% per side: up to that share of outliers (smurfs, test accounts) on either
  // side cannot stretch the slices; the players beyond land in the edge buckets.
  double mmr_range_low_percentile = 0.005;
  double mmr_range_high_percentile = 0.995;

  // Rebalancing
  std::chrono::milliseconds buckets_rebalance_interval{4 * 3600 * 1000};
  std::uint32_t buckets_rebalance_sample_count = 1'000'000;

  // Database scan
  bool enable_database_scan = true;
  std::chrono::milliseconds database_scan_tick{30'000};
  std::chrono::milliseconds database_scan_first_delay{10'000};
  std::uint32_t database_scan_batch_size = 64;
  std::uint32_t database_scan_min_fetch = 64;
  std::uint32_t database_scan_max_fetch = 1024;
  bool scan_includes_bots = false;
  // Rows of the sizing sample a cold start takes before its first scan (an
  // instance with no sizing model): spread over the whole table whatever the
  // id order, so the first sizing is not made from a few runs of consecutive
  // ids. 0: none (the first sizing then comes from the scans).
  std::uint32_t sizing_sample_rows = 20'000;

  // Queries
  std::uint32_t matching_candidate_amount = 10;
  std::uint32_t matching_max_search = 500;
  std::uint32_t max_excluded_ids = 1'000'000;
  bool enable_fake_opponents = false;
  bool return_model_in_response = true;
  fill_threshold player_remove_after_candidate_offer = fill_threshold::high_population;

  // Updates
  bool allow_multiple_entries_per_player = false;
  fill_threshold player_ignore_update_insert = fill_threshold::never;

  // Persistence
  std::chrono::milliseconds state_snapshot_interval{3600 * 1000};

  // Seed of the engine's random choices; 0 draws one from the system.
  std::uint64_t random_seed = 0;
};

// What the game profile can do, for the checks that depend on it.
struct profile_capabilities {
  bool multiple_models_per_player = false;
  bool has_fake_opponents = false;
};

// Options or a configuration that cannot be used: the message names the key.
class config_error : public error {
 public:
  explicit config_error(const std::string& what) : error(errc::invalid_config, what) {}
};

// Every problem found, each naming its option; empty when the options are usable.
std::vector<std::string> check(const options& o, const profile_capabilities& caps);

// Throws config_error listing every problem found by check().
void validate(const options& o, const profile_capabilities& caps);

}  // namespace mm
