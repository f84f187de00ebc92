#include <SQLiteCpp/Statement.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "config_versions_checks.hpp"
#include "event_stream_checks.hpp"
#include "journal_groups_checks.hpp"
#include "mm/storage/csv_import.hpp"
#include "mm/storage/database.hpp"
#include "mm/storage/player_table.hpp"
#include "mm/testing/temp_dir.hpp"
#include "player_claims_checks.hpp"

using namespace mm;

TEST_CASE("an empty file is migrated to the latest schema with WAL and foreign keys", "[db]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  CHECK(db.schema_version() == database::latest_schema_version());
  CHECK(db.sql().tableExists("players"));
  CHECK(db.sql().tableExists("matchmaker_state"));
  CHECK(db.sql().tableExists("matchmaker_state_rejected"));
  CHECK(db.sql().execAndGet("PRAGMA journal_mode").getString() == "wal");
  CHECK(db.sql().execAndGet("PRAGMA foreign_keys").getInt() == 1);
  CHECK(db.sql().execAndGet("PRAGMA busy_timeout").getInt() == 5000);
  CHECK(db.sql().execAndGet("SELECT COUNT(*) FROM schema_migrations").getInt() ==
        database::latest_schema_version());
  // Opening again applies nothing twice.
  database again(dir.file("mm.db"));
  CHECK(again.schema_version() == database::latest_schema_version());
}

TEST_CASE("connections that open a new file at once each find it migrated, every step once",
          "[db]") {
  // Each reads the version, then migrates: the one that comes second must
  // not apply again what the first applied in between.
  for (int round = 0; round < 20; ++round) {
    test::temp_dir dir;
    const std::string path = dir.file("mm.db");
    std::atomic<int> ready{0};
    std::atomic<int> failed{0};
    std::vector<std::thread> openers;
    for (int k = 0; k < 3; ++k)
      openers.emplace_back([&] {
        ++ready;
        while (ready < 3) std::this_thread::yield();  // all start together
        try {
          database db(path);
          if (db.schema_version() != database::latest_schema_version()) ++failed;
        } catch (const std::exception& e) {
          UNSCOPED_INFO(e.what());
          ++failed;
        }
      });
    for (auto& t : openers) t.join();
    REQUIRE(failed == 0);
    database db(path);
    CHECK(db.sql().execAndGet("SELECT COUNT(*) FROM schema_migrations").getInt() ==
          database::latest_schema_version());
  }
}

TEST_CASE("a database newer than the binary is refused, untouched", "[db]") {
  test::temp_dir dir;
  {
    database db(dir.file("mm.db"));
    db.sql().exec("INSERT INTO schema_migrations VALUES (999, '999_future.sql', 0)");
  }
  CHECK_THROWS_WITH(database(dir.file("mm.db")), Catch::Contains("newer than this build"));
  CHECK_THROWS_AS(database(dir.file("mm.db")), store_error);
}

TEST_CASE("a file that is not a database gets a clear error", "[db]") {
  test::temp_dir dir;
  std::ofstream(dir.file("junk.db")) << std::string(4096, 'x');
  CHECK_THROWS_WITH(database(dir.file("junk.db")), Catch::Contains("junk.db"));
  CHECK_THROWS_AS(database(dir.file("missing/dir/mm.db")), store_error);
}

TEST_CASE("players are upserted and deleted in batches, bad rows are skipped", "[db][players]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  std::vector<player_row> rows(3);
  rows[0].id = 1;
  rows[0].mmr = 1200;
  rows[0].attributes = {1, 2, 3, 4};
  rows[0].payload = std::string("\0\1binary", 8);
  rows[1].id = 0;  // invalid
  rows[2].id = 3;
  rows[2].mmr = std::nan("");
  auto report = upsert_players(db, rows);
  CHECK(report.written == 1);
  REQUIRE(report.rejected.size() == 2);
  CHECK(report.rejected[0].index == 1);
  CHECK(report.rejected[1].reason.find("MMR") != std::string::npos);
  auto p = find_player(db, 1);
  REQUIRE(p);
  CHECK(p->mmr == 1200);
  CHECK(p->attributes[3] == 4);
  CHECK(p->payload == rows[0].payload);
  CHECK(p->updated_at_unix_ms > 0);

  rows[0].mmr = 1300;
  upsert_players(db, std::span(rows).first(1));
  CHECK(find_player(db, 1)->mmr == 1300);
  CHECK(count_players(db) == 1);

  player_row huge;
  huge.id = 0x8000000000000000ull;
  CHECK(upsert_players(db, std::span(&huge, 1)).rejected.size() == 1);

  const player_id gone[] = {1, 2, 0};
  CHECK(delete_players(db, gone) == 1);
  CHECK(count_players(db) == 0);
  CHECK_FALSE(find_player(db, 1).has_value());
}

TEST_CASE("CSV import: good rows land, bad rows are reported by line", "[db][csv]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  std::istringstream csv(
      "id,mmr,attr0,attr1,attr2,attr3,is_bot\n"  // line 1: header
      "1,1500,0,7,3,2,0\n"
      "\n"
      "# a comment\n"
      "2,1500.5\n"
      "x,100\n"                // line 6: bad id
      "4,abc,1\n"              // line 7: bad mmr
      "5,100,1,2,3,4,5,6\n"    // line 8: too many fields
      "6,100,1,2,3,4,maybe\n"  // line 9: bad is_bot
      "7,100,-3,0,0,0,1\n"
      "0,100\n"  // line 11: id 0
      "9,nan\n"  // line 12: not finite
      "10 , 99 , 5 \r\n");
  std::vector<std::uint64_t> progress;
  csv_import_options o;
  o.batch_size = 2;
  o.progress = [&](std::uint64_t lines) { progress.push_back(lines); };
  const auto r = import_players_csv(db, csv, o);
  CHECK(r.lines == 13);
  CHECK(r.imported == 4);
  CHECK(r.bad_rows == 6);
  std::vector<std::size_t> lines;
  for (auto& p : r.problems) lines.push_back(p.index);
  CHECK(lines == std::vector<std::size_t>{6, 7, 8, 9, 11, 12});
  CHECK(count_players(db) == 4);
  CHECK(find_player(db, 7)->is_bot);
  CHECK(find_player(db, 7)->attributes[0] == -3);
  CHECK(find_player(db, 10)->attributes[0] == 5);
  CHECK(find_player(db, 2)->mmr == 1500.5);
  CHECK_FALSE(progress.empty());
  CHECK(progress.back() == 13);
}

TEST_CASE("players_after pages through the table in id order", "[db][players]") {
  test::temp_dir dir;
  database db(dir.file("mm.db"));
  std::vector<player_row> rows;
  for (player_id id : {7u, 3u, 11u, 5u, 2u}) {
    player_row r;
    r.id = id;
    r.mmr = static_cast<double>(id) * 10;
    r.attributes = {static_cast<std::int64_t>(id), 0, 0, 1};
    rows.push_back(r);
  }
  upsert_players(db, rows);
  std::vector<player_id> seen;
  player_id after = 0;
  for (;;) {
    const auto page = players_after(db, after, 2);
    if (page.empty()) break;
    CHECK(page.size() <= 2);
    for (const auto& r : page) {
      seen.push_back(r.id);
      CHECK(r.mmr == r.id * 10.0);
      CHECK(r.attributes[0] == static_cast<std::int64_t>(r.id));
    }
    after = page.back().id;
  }
  CHECK(seen == std::vector<player_id>{2, 3, 5, 7, 11});
  CHECK(players_after(db, max_stored_player_id, 10).empty());
}

TEST_CASE("configuration versions are only added, one writer per number", "[db][config]") {
  mm::test::temp_dir dir;
  mm::sqlite_store a(dir.file("mm.db")), b(dir.file("mm.db"));
  mm::test::check_config_versions(a, b);
}

TEST_CASE("player claims: a ticket takes all its players or none, and its outcome frees them",
          "[db][claims]") {
  mm::test::temp_dir dir;
  mm::sqlite_store a(dir.file("mm.db")), b(dir.file("mm.db"));
  mm::test::check_player_claims(a, b);
}

TEST_CASE("two services claiming the same players at once never both hold one, on SQLite",
          "[db][claims]") {
  mm::test::temp_dir dir;
  mm::sqlite_store a(dir.file("mm.db")), b(dir.file("mm.db"));
  mm::test::check_claims_under_contention(a, b);
}

TEST_CASE("a ticket over two services: guest rows, the first outcome wins, a lost match whole",
          "[db][groups]") {
  mm::test::temp_dir dir;
  mm::sqlite_store a(dir.file("mm.db")), b(dir.file("mm.db"));
  mm::test::check_contested_groups(a, b);
}

TEST_CASE("two services racing for tickets they share never both match one, on SQLite",
          "[db][groups]") {
  mm::test::temp_dir dir;
  mm::sqlite_store a(dir.file("mm.db")), b(dir.file("mm.db"));
  mm::test::check_contested_race(a, b, 300);
}

TEST_CASE("a running match id is held by one partition at a time, on SQLite", "[db][claims]") {
  mm::test::temp_dir dir;
  mm::sqlite_store a(dir.file("mm.db")), b(dir.file("mm.db"));
  mm::test::check_match_claims(a, b);
}

TEST_CASE("services of one event stream share one sequence, in commit order, on SQLite",
          "[db][events]") {
  mm::test::temp_dir dir;
  mm::sqlite_store a(dir.file("mm.db")), b(dir.file("mm.db"));
  mm::test::check_event_stream(a, b);
}

TEST_CASE("two writers of one event stream at once take every number once, on SQLite",
          "[db][events]") {
  mm::test::temp_dir dir;
  mm::sqlite_store a(dir.file("mm.db")), b(dir.file("mm.db"));
  mm::test::check_event_stream_under_contention(a, b);
}
