#include <catch2/catch.hpp>
#include <set>

#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/player_scanner.hpp"
#include "mm/storage/player_table.hpp"
#include "mm/testing/temp_dir.hpp"
#include "test_support.hpp"

using namespace mm;

namespace {
// Players with gaps in their ids (every third id), so pointers land between rows.
void fill_table(database& db, std::size_t n) {
  rng r(1);
  auto rows = make_players(synthetic_population{}, n, 1, r);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].id = 3 * (i + 1);
  upsert_players(db, rows);
}
}  // namespace

TEST_CASE("over enough scans every player is seen, wrapping at the end", "[scan]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  fill_table(db, 1000);
  player_scanner scanner(dir.file("mm.db"), "players", 7);
  std::set<player_id> seen;
  std::uint32_t wraps = 0;
  int scans = 0;
  while (seen.size() < 1000 && scans < 500) {
    const auto res = scanner.scan(64, 16);
    CHECK(res.rows.size() == 64);
    CHECK(res.batches == 4);
    CHECK(res.unreadable == 0);
    wraps += res.wraps;
    for (const auto& row : res.rows) {
      CHECK(row.id % 3 == 0);
      seen.insert(row.id);
    }
    ++scans;
  }
  CHECK(seen.size() == 1000);
  CHECK(wraps > 0);
  INFO("scans needed: " << scans);
  CHECK(scans < 100);  // 4 pointers x 16 rows walk 1000 rows in ~16 scans
  CHECK(scanner.pointers().size() == 4);
}

TEST_CASE("a batch larger than the table reads each row once", "[scan]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  fill_table(db, 10);
  player_scanner scanner(dir.file("mm.db"), "players", 3);
  const auto res = scanner.scan(64, 64);
  std::set<player_id> ids;
  for (const auto& row : res.rows) ids.insert(row.id);
  CHECK(res.rows.size() == 10);
  CHECK(ids.size() == 10);
  database empty_db(dir.file("empty.db"));
  CHECK(player_scanner(dir.file("empty.db"), "players", 3).scan(64, 16).rows.empty());
}

TEST_CASE("the scan can read a game's own table through a view", "[scan]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  db.sql().exec(
      "CREATE TABLE game_users (user_id INTEGER PRIMARY KEY, rating REAL, region INTEGER, "
      "banned INTEGER)");
  db.sql().exec(
      "INSERT INTO game_users VALUES (10, 1500, 2, 0), (11, 1600, 1, 0), (12, 'x', 1, 0)");
  db.sql().exec(
      "CREATE VIEW mm_players AS SELECT user_id AS id, rating AS mmr, region AS attr0, "
      "0 AS attr1, 0 AS attr2, 0 AS attr3, NULL AS payload, banned AS is_bot FROM game_users");
  player_scanner scanner(dir.file("mm.db"), "mm_players", 1);
  const auto res = scanner.scan(10, 10);
  REQUIRE(res.rows.size() == 2);
  CHECK(res.rows[0].attributes[0] + res.rows[1].attributes[0] == 3);
  CHECK(res.unreadable == 1);  // rating 'x'
  REQUIRE(res.reports.size() == 1);
  CHECK(res.reports[0].find("player 12: mmr is TEXT") != std::string::npos);

  generic_engine e(test::small_options());
  e.apply_scan(res.rows, res.unreadable);
  CHECK(e.info().players == 2);
  CHECK(e.stats().rows_malformed == 1);
  CHECK(e.stats().scans == 1);
  CHECK(e.sample_count() == 2);
}

TEST_CASE("unusable scan sources are refused clearly", "[scan]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  db.sql().exec("CREATE TABLE other (id INTEGER PRIMARY KEY, mmr REAL)");
  CHECK_THROWS_WITH(player_scanner(dir.file("mm.db"), "nope", 1), Catch::Contains("no such table"));
  CHECK_THROWS_WITH(player_scanner(dir.file("mm.db"), "other", 1), Catch::Contains("attr0"));
  CHECK_THROWS_WITH(player_scanner(dir.file("mm.db"), "players; DROP TABLE players", 1),
                    Catch::Contains("not a plain table or view name"));
  CHECK(valid_sql_identifier("mm_players2"));
  CHECK_FALSE(valid_sql_identifier("2x"));
}

TEST_CASE("unreadable rows are counted and a bounded number reported", "[scan]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  db.sql().exec("CREATE TABLE raw (id, mmr, attr0, attr1, attr2, attr3, payload, is_bot)");
  for (int i = 1; i <= 30; ++i)
    db.sql().exec("INSERT INTO raw VALUES (" + std::to_string(i) + ", 'bad', 0, 0, 0, 0, NULL, 0)");
  db.sql().exec("INSERT INTO raw VALUES (31, 100, 0, 0, 0, 0, NULL, 0)");
  db.sql().exec("INSERT INTO raw VALUES ('str', 100, 0, 0, 0, 0, NULL, 0)");
  player_scanner scanner(dir.file("mm.db"), "raw", 1);
  const auto res = scanner.scan(100, 100);
  CHECK(res.rows.size() == 1);
  CHECK(res.unreadable == 31);
  CHECK(res.reports.size() == player_scanner::max_reports);
}

TEST_CASE("the fetch count follows bucket density", "[scan]") {
  auto o = test::small_options(1000);
  o.database_scan_min_fetch = 64;
  o.database_scan_max_fetch = 1024;
  o.mmr_bucket_count = 2;  // slices [0, 500) and [500, 1000]
  o.bucket_initial_size = 100;
  generic_engine e(o);
  CHECK(e.scan_fetch_count() == 1024);  // no buckets yet
  // Bucket A nearly empty (density 0), bucket B crowded (density 1).
  e.update(1, test::model(1, 10));
  for (player_id id = 2; e.info().buckets.size() < 2 || e.info().buckets[1].fill < 0.8; ++id)
    e.update(id, test::model(id, 900));
  double expected = 0;
  for (const auto& b : e.info().buckets) {
    const double d = std::clamp((b.fill - 0.2) / 0.6, 0.0, 1.0);
    expected += (1 - d) * (1 - d);
  }
  expected = 64 + (1024 - 64) * expected / 2;
  CHECK(e.scan_fetch_count() == static_cast<std::uint32_t>(expected));
  CHECK(e.scan_fetch_count() == Approx(64 + 960 / 2).margin(2));
}

TEST_CASE("the scan fetch follows removals: what left, over what the last scan added per row",
          "[scan]") {
  auto o = test::small_options(4'000);
  o.mmr_bucket_count = 1;
  o.bucket_initial_size = 1'000;
  o.player_remove_after_candidate_offer = fill_threshold::never;
  generic_engine e(o);
  const auto row = [](player_id id, double mmr) {
    player_row r;
    r.id = id;
    r.mmr = mmr;
    return r;
  };
  // A full bucket: the density term is the minimum.
  std::vector<player_row> rows;
  for (player_id id = 1; id <= 20'000; ++id) rows.push_back(row(id, 500));
  e.apply_scan(rows, 0);
  REQUIRE(e.info().buckets.at(0).fill > 0.99);
  CHECK(e.scan_fetch_count() == 64);
  // A scan of 1,000 rows that adds 50 players (into 50 emptied slots): its
  // yield is 1/20 a row.
  std::vector<player_id> cached;
  e.for_each_player([&](const generic_model& m) { cached.push_back(m.id()); });
  for (std::size_t i = 0; i < 50; ++i) e.remove(cached[i]);
  std::vector<player_row> next(rows.begin(), rows.begin() + 1'000);
  for (std::size_t i = 0; i < 50; ++i) next[i] = row(cached[i], 500);
  e.apply_scan(next, 0);
  CHECK(e.scan_fetch_count() == 64);  // nobody left since
  // 30 leave: 30 / (1/20) = 600 rows to put them back.
  cached.clear();
  e.for_each_player([&](const generic_model& m) { cached.push_back(m.id()); });
  for (std::size_t i = 0; i < 30; ++i) e.remove(cached[i]);
  CHECK(e.scan_fetch_count() == 600);
  // Many leave: never past the max.
  for (std::size_t i = 30; i < 500; ++i) e.remove(cached[i]);
  CHECK(e.scan_fetch_count() == 1024);
  // A scan starts the count again.
  e.apply_scan(std::span<const player_row>(), 0);
  CHECK(e.scan_fetch_count() < 1024);
}

TEST_CASE("each scan pointer jumps to a random id about 1% of the scans", "[scan]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  fill_table(db, 10'000);  // ids 3, 6, 9, ...
  player_scanner scanner(dir.file("mm.db"), "players", 11);
  scanner.scan(1, 1);
  int jumps = 0;
  const int scans = 4000;
  for (int s = 0; s < scans; ++s) {
    const std::int64_t before = scanner.pointers().at(0);
    const auto res = scanner.scan(1, 1);
    REQUIRE(res.rows.size() == 1);
    const auto expected = static_cast<player_id>(before >= 30'000 ? 3 : before - before % 3 + 3);
    if (res.rows[0].id != expected) ++jumps;
  }
  // Binomial(4000, 1%): 40 expected; 15..70 holds with overwhelming odds.
  CHECK(jumps >= 15);
  CHECK(jumps <= 70);
}
