// The PostgreSQL store against the best paths PostgreSQL itself offers, in the
// same run on a server the bench starts (mm/testing/postgres_server.hpp):
// - batched upserts against COPY of the same rows into a plain table;
// - the scan (random pointers, batches of 64) against one sequential SELECT
//   of the whole table, and against SQLite's scan of the same rows;
// - a shard's scan through its index against the whole table's scan;
// - two scanners at once (two nodes) against one.
// Usage: mm_pg_bench [rows=200000] [seconds=2]. JSON lines.
#include <pqxx/pqxx>
#include <pqxx/stream_to>
#include <thread>

#include "bench_util.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/pg_store.hpp"
#include "mm/testing/postgres_server.hpp"
#include "mm/testing/temp_dir.hpp"

using mm::bench::emit;
using mm::bench::now_s;

namespace {

constexpr const char* bench = "pg";

// Rows read per second by `scanner` over `seconds`: scans of 4096 rows in
// batches of 64, as an instance with empty buckets fetches.
double scan_rate(mm::row_scanner& scanner, double seconds) {
  mm::scan_result out;
  std::uint64_t rows = 0;
  const double start = now_s();
  double t = start;
  while (t - start < seconds) {
    scanner.scan_into(4096, 64, out);
    rows += out.rows.size();
    t = now_s();
  }
  return static_cast<double>(rows) / (t - start);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t rows = argc > 1 ? std::stoul(argv[1]) : 200'000;
  const double seconds = argc > 2 ? std::stod(argv[2]) : 2.0;
  if (mm::test::postgres_server::binaries().empty()) {
    std::printf("mm_pg_bench: skipped, PostgreSQL's server is not installed\n");
    return 0;
  }
  mm::test::postgres_server pg;
  mm::rng r(2026);
  auto players = mm::make_players(mm::synthetic_population{}, rows, 1, r);
  for (auto& p : players) p.payload.clear();  // COPY below writes no payload either
  const std::string extra = "\"rows\": " + std::to_string(rows);

  // Upserts in batches of 10,000 against COPY of the same rows.
  mm::pg_store store(pg.url());
  double start = now_s();
  for (std::size_t from = 0; from < rows; from += 10'000)
    store.upsert_players(
        std::span(players).subspan(from, std::min<std::size_t>(10'000, rows - from)));
  const double upsert = static_cast<double>(rows) / (now_s() - start);
  store.db().sql().exec("CREATE TABLE players_copy (LIKE players INCLUDING ALL)");
  start = now_s();
  {
    // COPY through libpqxx's stream_to, on a connection of its own: the
    // reference for the upsert's rate (a bench, not the stores' path).
    pqxx::connection c(pg.url());
    pqxx::work w(c);
    pqxx::stream_to copy(w, "players_copy",
                         std::vector<std::string>{"id", "mmr", "attr0", "attr1", "attr2", "attr3",
                                                  "is_bot", "updated_at"});
    for (const auto& p : players)
      copy << std::make_tuple(static_cast<std::int64_t>(p.id), p.mmr, p.attributes[0],
                              p.attributes[1], p.attributes[2], p.attributes[3],
                              std::int64_t{p.is_bot}, p.updated_at_unix_ms);
    copy.complete();
    w.commit();
  }
  const double copy = static_cast<double>(rows) / (now_s() - start);
  emit(bench, "pg_upsert_rows_per_s", upsert, "rows/s", extra);
  emit(bench, "pg_copy_rows_per_s", copy, "rows/s", extra);
  emit(bench, "pg_upsert_vs_copy", upsert / copy, "ratio", extra);
  store.db().sql().exec("DROP TABLE players_copy");
  store.db().sql().exec("VACUUM ANALYZE players");  // outside a transaction, as VACUUM must

  // The scan against one sequential read of everything.
  auto scanner = store.open_scanner({"players", 7, 1, 0});
  scan_rate(*scanner, 0.5);  // warm: the table in PostgreSQL's cache
  const double scan = scan_rate(*scanner, seconds);
  start = now_s();
  std::uint64_t read = 0;
  {
    const auto all = store.db().sql().exec(
        "SELECT id, mmr, attr0, attr1, attr2, attr3, payload, is_bot FROM players");
    for (std::size_t i = 0; i < all.size(); ++i) read += all.int64(i, 0) > 0;
  }
  const double select = static_cast<double>(read) / (now_s() - start);
  emit(bench, "pg_scan_rows_per_s", scan, "rows/s", extra);
  emit(bench, "pg_select_rows_per_s", select, "rows/s", extra);
  emit(bench, "pg_scan_vs_select", scan / select, "ratio", extra);

  // SQLite's scan of the same rows, for scale.
  {
    mm::test::temp_dir dir;
    mm::sqlite_store lite(dir.file("bench.db"));
    for (std::size_t from = 0; from < rows; from += 10'000)
      lite.upsert_players(
          std::span(players).subspan(from, std::min<std::size_t>(10'000, rows - from)));
    auto lite_scanner = lite.open_scanner({"players", 7, 1, 0});
    scan_rate(*lite_scanner, 0.5);
    const double lite_scan = scan_rate(*lite_scanner, seconds);
    emit(bench, "sqlite_scan_rows_per_s", lite_scan, "rows/s", extra);
    emit(bench, "pg_scan_vs_sqlite", scan / lite_scan, "ratio", extra);
  }

  // A shard of four through its index, against the whole table's scan: near
  // 1 when the shard's scan reads only its own rows.
  auto shard = store.open_scanner({"players", 7, 4, 1});
  store.db().sql().exec("ANALYZE players");
  scan_rate(*shard, 0.5);
  const double shard_scan = scan_rate(*shard, seconds);
  emit(bench, "pg_shard_scan_rows_per_s", shard_scan, "rows/s", extra + ", \"shards\": 4");
  emit(bench, "pg_shard_scan_vs_whole", shard_scan / scan, "ratio", extra + ", \"shards\": 4");

  // Two nodes' scanners at once against one: total rows per second.
  auto other = store.open_scanner({"players", 8, 1, 0});
  double rate_a = 0, rate_b = 0;
  std::thread t([&] { rate_b = scan_rate(*other, seconds); });
  rate_a = scan_rate(*scanner, seconds);
  t.join();
  emit(bench, "pg_two_scanners_rows_per_s", rate_a + rate_b, "rows/s", extra);
  emit(bench, "pg_two_scanners_vs_one", (rate_a + rate_b) / scan, "ratio", extra);
  return 0;
}
