#include "mm/engine/options.hpp"

#include <cmath>

namespace mm {

std::vector<std::string> check(const options& o, const profile_capabilities& caps) {
  std::vector<std::string> e;
  auto positive = [&](const char* key, auto v) {
    if (v <= 0) e.push_back(std::string(key) + " must be greater than 0");
  };
  positive("player_cache_size", o.player_cache_size);
  positive("mmr_bucket_count", o.mmr_bucket_count);
  positive("bucket_min_size", o.bucket_min_size);
  positive("bucket_initial_size", o.bucket_initial_size);
  positive("buckets_rebalance_sample_count", o.buckets_rebalance_sample_count);
  positive("buckets_rebalance_interval", o.buckets_rebalance_interval.count());
  positive("database_scan_tick", o.database_scan_tick.count());
  positive("database_scan_batch_size", o.database_scan_batch_size);
  positive("database_scan_min_fetch", o.database_scan_min_fetch);
  positive("database_scan_max_fetch", o.database_scan_max_fetch);
  positive("matching_candidate_amount", o.matching_candidate_amount);
  positive("matching_max_search", o.matching_max_search);
  positive("state_snapshot_interval", o.state_snapshot_interval.count());
  if (o.database_scan_first_delay.count() < 0)
    e.push_back("database_scan_first_delay must not be negative");

  if (o.bucket_min_size > o.bucket_initial_size)
    e.push_back("bucket_min_size (" + std::to_string(o.bucket_min_size) +
                ") must not exceed bucket_initial_size (" + std::to_string(o.bucket_initial_size) +
                ")");
  if (o.bucket_initial_size > o.player_cache_size)
    e.push_back("bucket_initial_size must not exceed player_cache_size");
  if (o.database_cache_size > o.player_cache_size)
    e.push_back("database_cache_size must not exceed player_cache_size");
  if (o.sizing_sample_rows > 10'000'000) e.push_back("sizing_sample_rows must be at most 10000000");
  if (o.database_scan_min_fetch > o.database_scan_max_fetch)
    e.push_back("database_scan_min_fetch must not exceed database_scan_max_fetch");
  if (o.matching_candidate_amount > o.matching_max_search)
    e.push_back("matching_candidate_amount must not exceed matching_max_search");
  if (!std::isfinite(o.initial_mmr_low) || !std::isfinite(o.initial_mmr_high) ||
      !(o.initial_mmr_low < o.initial_mmr_high))
    e.push_back("initial_mmr_low/initial_mmr_high must be finite with low < high");
  if (!(o.mmr_range_low_percentile >= 0 && o.mmr_range_low_percentile < 0.5) ||
      !(o.mmr_range_high_percentile > 0.5 && o.mmr_range_high_percentile <= 1))
    e.push_back(
        "mmr_range_low_percentile must be in [0, 0.5) and mmr_range_high_percentile in "
        "(0.5, 1]");

  if (o.enable_fake_opponents && !o.return_model_in_response)
    e.push_back("enable_fake_opponents requires return_model_in_response");
  if (o.enable_fake_opponents && !caps.has_fake_opponents)
    e.push_back("enable_fake_opponents requires a game profile with a fake opponent factory");
  if (o.allow_multiple_entries_per_player) {
    if (!o.return_model_in_response)
      e.push_back("allow_multiple_entries_per_player requires return_model_in_response");
    if (!caps.multiple_models_per_player)
      e.push_back(
          "allow_multiple_entries_per_player requires a model factory that returns several "
          "models per player");
    if (!o.enable_database_scan && o.player_ignore_update_insert != fill_threshold::never)
      e.push_back(
          "allow_multiple_entries_per_player with enable_database_scan off requires "
          "player_ignore_update_insert = never");
  }
  return e;
}

void validate(const options& o, const profile_capabilities& caps) {
  auto errors = check(o, caps);
  if (errors.empty()) return;
  std::string msg = "invalid matchmaker options:";
  for (auto& s : errors) msg += "\n  - " + s;
  throw config_error(msg);
}

}  // namespace mm
