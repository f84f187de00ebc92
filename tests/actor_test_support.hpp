// Helpers shared by the actor tests: an instance's config for tests and a
// query at a given MMR.
#pragma once

#include <chrono>
#include <string>

#include "mm/actors/instance.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/player_table.hpp"
#include "test_support.hpp"

namespace mm::test {

inline actors::instance_config<generic_profile> config_for(const std::string& db_path,
                                                           std::string id = "mm") {
  actors::instance_config<generic_profile> c;
  c.id = std::move(id);
  c.opts = small_options(10'000);
  c.opts.database_cache_size = 10'000;  // snapshots keep every cached player
  c.opts.bucket_initial_size = 4096;
  c.opts.database_scan_first_delay = std::chrono::seconds(10);
  c.opts.database_scan_tick = std::chrono::seconds(30);
  c.opts.state_snapshot_interval = std::chrono::hours(1);
  c.opts.buckets_rebalance_interval = std::chrono::hours(4);
  c.opts.player_remove_after_candidate_offer = fill_threshold::never;
  c.opts.sizing_sample_rows = 0;  // these tests count the scans' rows; one test turns it on
  c.database.path = db_path;
  c.detached_worker = false;
  return c;
}

// A SQLite player table at `path` with `n` synthetic players (ids 1..n).
inline void fill_table(const std::string& path, std::size_t n) {
  database db(path);
  rng r(3);
  upsert_players(db, make_players(synthetic_population{}, n, 1, r));
}

inline match_request<generic_query> query_at(float mmr, player_id attacker = 999'999) {
  match_request<generic_query> r;
  r.query = query(attacker, mmr);
  return r;
}

}  // namespace mm::test
