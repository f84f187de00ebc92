// Persistence benchmark: a 2,000,000-row player table in a real SQLite
// file. Every rate is paired with a reference from the same run: the scan with a
// plain sequential read of the table, the engine with the indexed SQL lookup a
// team would write without a matchmaker.
//
//   mm_persistence_bench [rows] [directory]
#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "mm/engine/generic_engine.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/player_scanner.hpp"
#include "mm/storage/player_table.hpp"
#include "mm/storage/snapshot.hpp"

namespace {
using engine_type = mm::engine<mm::generic_profile>;
using mm::bench::emit;
using mm::bench::now_s;

mm::options cache_options(std::uint32_t cache) {
  mm::options o;
  o.player_cache_size = cache;
  o.buckets_rebalance_sample_count = cache;
  o.random_seed = 5;
  return o;
}

// Runs scans on a reader thread and hands each result to `apply` on this one,
// with at most one result waiting: the shape of the database worker and the
// instance actor. `apply` returns false to stop.
template <class Apply>
void scan_pipeline(mm::player_scanner& scanner, std::uint32_t fetch, std::uint32_t batch,
                   Apply apply) {
  std::mutex m;
  std::condition_variable cv;
  std::optional<mm::scan_result> ready;
  bool stop = false;
  std::thread reader([&] {
    for (;;) {
      mm::scan_result res = scanner.scan(fetch, batch);
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return stop || !ready; });
      if (stop) return;
      ready = std::move(res);
      cv.notify_all();
    }
  });
  for (bool more = true; more;) {
    mm::scan_result res;
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return ready.has_value(); });
      res = std::move(*ready);
      ready.reset();
      cv.notify_all();
    }
    more = apply(res);
  }
  {
    std::lock_guard lock(m);
    stop = true;
    cv.notify_all();
  }
  reader.join();
}

// Scans until the cache is full (overall fill >= 80%, the high-population
// threshold), rebalancing once as soon as there are enough samples.
double cold_fill(engine_type& e, mm::player_scanner& scanner, std::uint32_t fetch,
                 std::uint32_t batch, std::uint64_t& rows_read) {
  const double t = now_s();
  bool rebalanced = false;
  scan_pipeline(scanner, fetch, batch, [&](const mm::scan_result& res) {
    rows_read += res.rows.size();
    e.apply_scan(res.rows, res.unreadable);
    if (!rebalanced && e.enough_data()) {
      e.rebalance(0);
      rebalanced = true;
    }
    const auto& pool = e.pool();
    const bool full = rebalanced && static_cast<double>(pool.players()) >=
                                        0.8 * static_cast<double>(pool.capacity());
    return !full && rows_read < 20ull * e.opts().player_cache_size;  // or never fills
  });
  return now_s() - t;
}
}  // namespace

int main(int argc, char** argv) {
  const std::size_t rows_n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
  const std::filesystem::path dir =
      argc > 2 ? std::filesystem::path(argv[2])
               : std::filesystem::temp_directory_path() / "mm-persistence-bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "players.db").string();
  const std::string params = "\"rows\": " + std::to_string(rows_n);
  const std::uint32_t cache =
      static_cast<std::uint32_t>(std::min<std::size_t>(rows_n / 2, 1'000'000));

  // The table.
  mm::database db(path);
  {
    mm::synthetic_population pop;
    mm::rng r(1);
    const double t = now_s();
    for (std::size_t done = 0; done < rows_n; done += 50'000) {
      const auto rows =
          mm::make_players(pop, std::min<std::size_t>(50'000, rows_n - done), 1 + done, r);
      mm::upsert_players(db, rows);
    }
    emit("persistence", "table_upsert_rows_per_s", static_cast<double>(rows_n) / (now_s() - t),
         "1/s", params + ", \"batch\": 50000");
  }

  // Reference: a plain sequential read of the same columns into the same rows,
  // through SQLite's C API on a connection set up as the scanner's is (read
  // only, no mutex, memory-mapped): the fastest way to read the table.
  {
    mm::database reader(path, {5000, /*read_only=*/true, /*single_thread=*/true});
    reader.sql().exec("PRAGMA mmap_size = 1073741824");
    reader.sql().exec("PRAGMA cache_size = -65536");
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(reader.sql().getHandle(),
                       "SELECT id, mmr, attr0, attr1, attr2, attr3, payload, is_bot FROM players",
                       -1, &q, nullptr);
    std::vector<mm::player_row> rows;
    rows.reserve(rows_n);
    std::uint64_t n = 0;
    const double t = now_s();
    while (sqlite3_step(q) == SQLITE_ROW) {
      mm::player_row& row = rows.emplace_back();
      row.id = static_cast<mm::player_id>(sqlite3_column_int64(q, 0));
      row.mmr = sqlite3_column_double(q, 1);
      for (int a = 0; a < 4; ++a) row.attributes[a] = sqlite3_column_int64(q, 2 + a);
      row.payload.assign(static_cast<const char*>(sqlite3_column_blob(q, 6)),
                         static_cast<std::size_t>(sqlite3_column_bytes(q, 6)));
      row.is_bot = sqlite3_column_int64(q, 7) != 0;
      ++n;
    }
    sqlite3_finalize(q);
    const double raw = static_cast<double>(n) / (now_s() - t);
    emit("persistence", "raw_sqlite_rows_per_s", raw, "1/s", params);

    // The scan as the service runs it: the reader on its own thread and
    // connection (the database worker), the engine applying each result on
    // another (the instance), so reading and applying overlap.
    for (std::uint32_t batch : {64u, 1024u}) {
      const std::uint32_t fetch = 65'536;
      engine_type e(cache_options(cache), mm::generic_profile(mm::demo_profile_config()));
      mm::player_scanner scanner(path, "players", 9);
      std::uint64_t applied = 0;
      const double t2 = now_s();
      scan_pipeline(scanner, fetch, batch, [&](const mm::scan_result& res) {
        applied += res.rows.size();
        e.apply_scan(res.rows, res.unreadable);
        if (e.sample_count() > 100'000 && e.last_rebalance_unix_ms() == 0) e.rebalance(1);
        return applied < rows_n;
      });
      const double scan = static_cast<double>(applied) / (now_s() - t2);
      const std::string p = params + ", \"batch\": " + std::to_string(batch) +
                            ", \"fetch\": " + std::to_string(fetch);
      emit("persistence", "scan_rows_per_s", scan, "1/s", p);
      emit("persistence", "scan_ratio", scan / raw, "ratio", p);
    }
  }

  // Cold fill at the fastest settings, then the figures that need a full cache.
  engine_type e(cache_options(cache), mm::generic_profile(mm::demo_profile_config()));
  {
    mm::player_scanner scanner(path, "players", 11);
    std::uint64_t rows_read = 0;
    const double secs = cold_fill(e, scanner, 65'536, 1024, rows_read);
    const std::string p = params + ", \"cache\": " + std::to_string(cache) +
                          ", \"rows_read\": " + std::to_string(rows_read) +
                          ", \"players_cached\": " + std::to_string(e.pool().players());
    emit("persistence", "cold_fill_1m_s", secs, "s", p);
  }

  // Snapshot of 16,000 players, then a restore into a fresh engine.
  {
    const double t = now_s();
    const auto saved = mm::save_state(db, "bench", e, 1);
    emit("persistence", "snapshot_write_ms", (now_s() - t) * 1e3, "ms",
         params + ", \"players\": " + std::to_string(saved.players) +
             ", \"bytes\": " + std::to_string(saved.bytes));
    // Into a new engine: this includes the kernel mapping the bucket memory of
    // a 1,000,000-player cache (28 MB) as the restored players first touch it.
    engine_type fresh(cache_options(cache), mm::generic_profile(mm::demo_profile_config()));
    double t2 = now_s();
    auto r = mm::load_state(db, "bench", fresh, 2);
    emit("persistence", "restore_16k_ms", (now_s() - t2) * 1e3, "ms",
         params + ", \"players\": " + std::to_string(r.players) +
             ", \"restored\": " + (r.restored ? "true" : "false"));
    // Again into an engine of the same process (a supervisor's restart): the
    // memory is already mapped, so this is the restore work itself.
    fresh.reset();
    t2 = now_s();
    r = mm::load_state(db, "bench", fresh, 3);
    emit("persistence", "restore_16k_mapped_memory_ms", (now_s() - t2) * 1e3, "ms",
         params + ", \"players\": " + std::to_string(r.players));
  }

  // The lookup a team would write without a matchmaker: an indexed query per
  // attack (same region, MMR window, not the own guild, no bots), best of up to
  // 10 rows by the same match rule. Versus the engine on the same players.
  {
    db.sql().exec("CREATE INDEX IF NOT EXISTS players_region_mmr ON players(attr0, mmr)");
    db.sql().exec("ANALYZE");
    const mm::generic_profile& profile = e.profile();
    SQLite::Statement q(db.sql(),
                        "SELECT id, mmr, attr0, attr1, attr2, attr3 FROM players "
                        "WHERE attr0 = ?1 AND mmr BETWEEN ?2 - 100 AND ?2 + 100 "
                        "AND attr1 != ?3 AND is_bot = 0 AND id != ?4 LIMIT 10");
    mm::synthetic_population pop;
    mm::rng r(21);
    const std::size_t n = 20'000;
    std::size_t found = 0;
    double t = now_s();
    for (std::size_t i = 0; i < n; ++i) {
      const auto query = mm::make_query(pop, rows_n + 1 + i, r);
      q.bind(1, static_cast<int64_t>(query.attributes[0]));
      q.bind(2, static_cast<double>(query.mmr));
      q.bind(3, static_cast<int64_t>(query.attributes[1]));
      q.bind(4, static_cast<int64_t>(query.attacker));
      float best = -1e30f;
      while (q.executeStep()) {
        const mm::generic_model m(static_cast<mm::player_id>(q.getColumn(0).getInt64()),
                                  static_cast<float>(q.getColumn(1).getDouble()),
                                  {static_cast<std::uint32_t>(q.getColumn(2).getInt64()),
                                   static_cast<std::uint32_t>(q.getColumn(3).getInt64()),
                                   static_cast<std::uint32_t>(q.getColumn(4).getInt64()),
                                   static_cast<std::uint32_t>(q.getColumn(5).getInt64())});
        const auto v = profile.match(query, m, 0);
        if (v.possible && v.quality > best) best = v.quality;
      }
      found += best > -1e30f;
      q.reset();
    }
    const double sql_qps = static_cast<double>(n) / (now_s() - t);
    emit("persistence", "sql_lookup_queries_per_s", sql_qps, "1/s",
         params + ", \"found_share\": " + std::to_string(static_cast<double>(found) / n));

    const std::size_t m = 2'000'000;
    std::vector<mm::match_request<mm::generic_query>> reqs(100'000);
    for (auto& req : reqs) req.query = mm::make_query(pop, rows_n + 1, r);
    std::size_t success = 0;
    t = now_s();
    for (std::size_t i = 0; i < m; ++i)
      success += e.find_match(reqs[i % reqs.size()]).type == mm::match_type::success;
    const double engine_qps = static_cast<double>(m) / (now_s() - t);
    emit("persistence", "engine_queries_per_s", engine_qps, "1/s",
         params + ", \"success_share\": " + std::to_string(static_cast<double>(success) / m));
    emit("persistence", "engine_vs_sql_ratio", engine_qps / sql_qps, "ratio", params);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
