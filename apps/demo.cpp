// The demo: the matchmaker's whole path on a real SQLite file.
//  1. a player table: synthetic players written as CSV and imported (first run);
//  2. the engine restores its last snapshot (a warm start), if there is one;
//  3. the scan reads the table and fills the cache, sizing buckets from samples;
//  4. a stream of queries, with the summary a game team wants first: the result
//     mix, how far apart attacker and defender are, the time per query;
//  5. a snapshot is written for the next start.
//
//   mm_demo [players] [queries] [database]      (defaults: 100000 200000 demo-data/matchmaker.db)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mm/engine/generic_engine.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/csv_import.hpp"
#include "mm/storage/player_scanner.hpp"
#include "mm/storage/snapshot.hpp"
#include "mm/strategies/percentile.hpp"

namespace {
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

// Writes the synthetic population as CSV, the format teams bring players in.
void write_csv(const std::string& path, std::size_t players) {
  mm::rng r(7);
  std::ofstream out(path);
  out << "id,mmr,attr0,attr1,attr2,attr3,is_bot\n";
  for (const auto& p : mm::make_players(mm::synthetic_population{}, players, 1, r))
    out << p.id << ',' << p.mmr << ',' << p.attributes[0] << ',' << p.attributes[1] << ','
        << p.attributes[2] << ',' << p.attributes[3] << ",0\n";
}
}  // namespace

int main(int argc, char** argv) try {
  const std::size_t players = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100'000;
  const std::size_t queries = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200'000;
  const std::string path = argc > 3 ? argv[3] : "demo-data/matchmaker.db";
  if (players == 0 || queries == 0) {
    std::fprintf(stderr, "usage: mm_demo [players > 0] [queries > 0] [database]\n");
    return 2;
  }
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);

  mm::database db(path);
  std::printf("database %s (schema version %d)\n", path.c_str(), db.schema_version());
  if (mm::count_players(db) == 0) {
    const std::string csv = (dir.empty() ? std::string(".") : dir.string()) + "/players.csv";
    write_csv(csv, players);
    std::ifstream in(csv);
    const auto t = clock_type::now();
    const auto report = mm::import_players_csv(db, in);
    std::printf("imported %llu players from %s in %.2f s (%llu bad rows)\n",
                static_cast<unsigned long long>(report.imported), csv.c_str(), seconds_since(t),
                static_cast<unsigned long long>(report.bad_rows));
  }
  const auto table_size = mm::count_players(db);

  mm::options o;
  o.name = "demo";
  o.player_cache_size = static_cast<std::uint32_t>(std::min<std::uint64_t>(table_size, 1'000'000));
  o.database_cache_size = std::min<std::uint32_t>(o.database_cache_size, o.player_cache_size);
  o.bucket_initial_size = std::min<std::uint32_t>(o.bucket_initial_size, o.player_cache_size);
  o.bucket_min_size = std::min(o.bucket_min_size, o.bucket_initial_size);
  o.enable_fake_opponents = true;
  mm::engine<mm::generic_profile> engine(o, mm::generic_profile(mm::demo_profile_config()));

  const auto now_ms = mm::unix_ms_now();
  const auto restored = mm::load_state(db, "demo", engine, now_ms);
  if (restored.restored)
    std::printf("warm start: snapshot restored, %llu players, MMR range [%.0f, %.0f]\n",
                static_cast<unsigned long long>(restored.players), engine.mmr().low(),
                engine.mmr().high());
  else
    std::printf("cold start: %s\n", restored.found ? restored.problem.c_str() : "no snapshot yet");

  // The scan, back to back (the service spreads it over ticks).
  mm::player_scanner scanner(path, "players", 42);
  mm::scan_result scan;
  std::uint64_t rows = 0;
  const auto t0 = clock_type::now();
  while (rows < 2 * table_size) {
    scanner.scan_into(std::max<std::uint32_t>(engine.scan_fetch_count(), 4096), 256, scan);
    rows += scan.rows.size();
    engine.apply_scan(scan.rows, scan.unreadable);
    if (engine.last_rebalance_unix_ms() == 0 && engine.enough_data()) engine.rebalance(now_ms);
    const auto& pool = engine.pool();
    if (engine.last_rebalance_unix_ms() != 0 && pool.players() >= 0.8 * pool.capacity()) break;
  }
  const auto info = engine.info();
  std::printf(
      "scanned %llu rows in %.2f s: %llu players cached in %llu buckets (capacity %llu, "
      "fill %.0f%%), MMR range [%.0f, %.0f] (outliers ignored)\n",
      static_cast<unsigned long long>(rows), seconds_since(t0),
      static_cast<unsigned long long>(info.players),
      static_cast<unsigned long long>(info.bucket_count),
      static_cast<unsigned long long>(info.capacity), info.overall_fill * 100, info.mmr_low,
      info.mmr_high);

  mm::rng r(11);
  mm::synthetic_population pop;
  std::vector<double> gaps;
  std::size_t counts[4] = {};
  std::uint64_t tested = 0;
  const auto t1 = clock_type::now();
  for (std::size_t i = 0; i < queries; ++i) {
    mm::match_request<mm::generic_query> req;
    req.query = mm::make_query(pop, table_size + 1 + i, r);
    const auto res = engine.find_match(req);
    ++counts[static_cast<int>(res.type)];
    tested += res.players_tested;
    if (res.type == mm::match_type::success) {
      gaps.push_back(std::abs(req.query.mmr - res.model->mmr));
      // The game would now fight and push the defender's new state; the demo
      // puts the offered defender back, as that update would.
      engine.update(res.best_candidate_id, res.model);
    }
  }
  const double secs = seconds_since(t1);
  std::printf(
      "%zu queries in %.2f s: %.2f us per query (including the update that puts the "
      "defender back), %.1f players tested per query\n",
      queries, secs, secs * 1e6 / static_cast<double>(queries),
      static_cast<double>(tested) / static_cast<double>(queries));
  std::printf("results: Success %.2f%%, FakeOpponent %.2f%%, NoneFound %.2f%%, Invalid %zu\n",
              100.0 * counts[0] / queries, 100.0 * counts[2] / queries, 100.0 * counts[1] / queries,
              counts[3]);
  std::printf(
      "MMR gap attacker-defender on Success: median %.1f, p90 %.1f, p99 %.1f "
      "(window %.0f at the first try)\n",
      mm::percentile(gaps, 0.5), mm::percentile(gaps, 0.9), mm::percentile(gaps, 0.99),
      engine.profile().window(0));

  const auto saved = mm::save_state(db, "demo", engine, mm::unix_ms_now());
  std::printf("snapshot written: %zu players, %zu bytes, %.1f ms (the next run starts warm)\n",
              saved.players, saved.bytes, saved.seconds * 1e3);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "mm_demo: %s\n", e.what());
  return 1;
}
