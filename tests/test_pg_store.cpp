// The PostgreSQL player store against the SQLite one as its oracle: the same
// batches, rows, snapshots and scans, on a real PostgreSQL server started by
// the test and a real SQLite file, with data shaped like a game's (ids in
// clusters with gaps, MMR rising with the id, outliers, duplicates and bad rows
// in the batches).
#include <SQLiteCpp/Database.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <pqxx/pqxx>
#include <set>

#include "config_versions_checks.hpp"
#include "event_stream_checks.hpp"
#include "journal_groups_checks.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/pg_store.hpp"
#include "mm/testing/postgres_server.hpp"
#include "mm/testing/temp_dir.hpp"
#include "player_claims_checks.hpp"
#include "postgres_available.hpp"

using mm::test::have_postgres;
using mm::test::postgres_server;

namespace {

// Players as a game has them: ids in signup clusters with gaps between,
// veterans (low ids) stronger, a few outliers, payloads of any bytes.
std::vector<mm::player_row> game_players(std::size_t n, std::uint64_t seed) {
  mm::rng r(seed);
  auto rows = mm::make_players(mm::synthetic_population{}, n, 1, r);
  mm::player_id id = 1000;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (r.below(50) == 0) id += 1 + r.below(100'000);  // a gap between signup waves
    rows[i].id = id++;
    rows[i].mmr += 600.0 * (1.0 - static_cast<double>(i) / static_cast<double>(n));
    rows[i].payload.clear();
    if (i % 3 == 0)
      for (std::size_t b = 0; b < 1 + i % 40; ++b)
        rows[i].payload.push_back(static_cast<char>(r.below(256)));
    rows[i].updated_at_unix_ms = 1'700'000'000'000 + static_cast<std::int64_t>(i);
  }
  return rows;
}

bool same_row(const mm::player_row& a, const mm::player_row& b) {
  return a.id == b.id && a.mmr == b.mmr && a.attributes == b.attributes && a.payload == b.payload &&
         a.is_bot == b.is_bot;
}

// Every row of a store, in id order, through players_after pages.
std::vector<mm::player_row> all_rows(mm::player_store& s) {
  std::vector<mm::player_row> out;
  mm::player_id after = 0;
  for (;;) {
    auto page = s.players_after(after, 777);
    if (page.empty()) return out;
    after = page.back().id;
    out.insert(out.end(), page.begin(), page.end());
  }
}

struct both_stores {
  postgres_server server;
  mm::test::temp_dir dir;
  mm::sqlite_store sqlite{dir.file("oracle.db")};
  mm::pg_store pg{server.url()};

  void upsert(const std::vector<mm::player_row>& rows) {
    const auto a = sqlite.upsert_players(rows);
    const auto b = pg.upsert_players(rows);
    REQUIRE(a.written == b.written);
    REQUIRE(a.rejected.size() == b.rejected.size());
    for (std::size_t i = 0; i < a.rejected.size(); ++i) {
      CHECK(a.rejected[i].index == b.rejected[i].index);
      CHECK(a.rejected[i].reason == b.rejected[i].reason);
    }
  }
};

}  // namespace

TEST_CASE("PostgreSQL keeps the same players as SQLite, batch for batch", "[postgres][store]") {
  if (!have_postgres()) return;
  both_stores s;
  auto rows = game_players(5000, 3);
  // Bad rows and a player given twice (the later row wins) in the batch.
  rows[10].mmr = std::nan("");
  rows[20].id = 0;
  rows[30].id = mm::max_stored_player_id + 1;
  auto again = rows[40];
  again.mmr = 2222.5;
  again.payload = std::string("\0\xff\x01", 3);
  rows.push_back(again);
  rows[50].mmr = 1e300;  // extreme but finite
  rows[60].attributes = {-1, std::numeric_limits<std::int64_t>::min(),
                         std::numeric_limits<std::int64_t>::max(), 0};
  s.upsert(rows);
  CHECK(s.pg.count_players() == s.sqlite.count_players());
  const auto a = all_rows(s.sqlite), b = all_rows(s.pg);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(same_row(a[i], b[i]));
  const auto twice = s.pg.find_player(rows[40].id);
  REQUIRE(twice);
  CHECK(twice->mmr == 2222.5);
  CHECK(twice->payload == std::string("\0\xff\x01", 3));
  CHECK(!s.pg.find_player(123));
  CHECK(!s.pg.find_player(0));

  // Updates of some, deletes of others (with unknown and invalid ids).
  auto changed = std::vector<mm::player_row>(rows.begin() + 100, rows.begin() + 2600);
  for (auto& r : changed) r.mmr += 17.25;
  s.upsert(changed);
  std::vector<mm::player_id> gone;
  for (std::size_t i = 0; i < rows.size(); i += 7) gone.push_back(rows[i].id);
  gone.push_back(99);
  gone.push_back(0);
  CHECK(s.pg.delete_players(gone) == s.sqlite.delete_players(gone));
  const auto c = all_rows(s.sqlite), d = all_rows(s.pg);
  REQUIRE(c.size() == d.size());
  for (std::size_t i = 0; i < c.size(); ++i) CHECK(same_row(c[i], d[i]));
}

TEST_CASE("the PostgreSQL scan reads the rows SQLite's reads, pointer for pointer",
          "[postgres][store][scan]") {
  if (!have_postgres()) return;
  both_stores s;
  s.upsert(game_players(20'000, 5));
  for (const std::uint32_t shards : {1u, 3u}) {
    const mm::scan_options o{"players", 77, shards, shards - 1};
    auto oracle = s.sqlite.open_scanner(o);
    auto scanner = s.pg.open_scanner(o);
    mm::rng r(shards);
    std::uint64_t wraps = 0;
    for (int tick = 0; tick < 60; ++tick) {
      // The table changes between ticks, at both ends too.
      if (tick % 10 == 5) {
        auto more = game_players(300, 100 + static_cast<std::uint64_t>(tick));
        for (auto& m : more) m.id += 10'000'000 * static_cast<mm::player_id>(tick);
        s.upsert(more);
      }
      const auto fetch = static_cast<std::uint32_t>(1 + r.below(3000));
      const auto batch = static_cast<std::uint32_t>(1 + r.below(700));
      const auto a = oracle->scan(fetch, batch), b = scanner->scan(fetch, batch);
      REQUIRE(a.rows.size() == b.rows.size());
      for (std::size_t i = 0; i < a.rows.size(); ++i) {
        CHECK(same_row(a.rows[i], b.rows[i]));
        CHECK(b.rows[i].id % shards == shards - 1);
      }
      CHECK(a.batches == b.batches);
      CHECK(a.wraps == b.wraps);
      CHECK(oracle->pointers() == scanner->pointers());
      wraps += b.wraps;
    }
    CHECK(wraps > 0);  // the scans went round the end of the table
  }
}

TEST_CASE("a shard's scan on PostgreSQL reads only its own rows, through an index",
          "[postgres][store][scan]") {
  if (!have_postgres()) return;
  both_stores s;
  s.upsert(game_players(30'000, 8));
  auto scanner = s.pg.open_scanner({"players", 1, 4, 2});
  auto& w = s.pg.db().sql();
  w.exec("ANALYZE players");
  CHECK(scanner->scan(500, 100).rows.size() == 500);
  w.exec(std::string("SET random_page_cost = ") +
         mm::pg_scanner::scan_random_page_cost);  // as the scanner sets it
  const auto plan =
      w.exec(
           "EXPLAIN (ANALYZE, FORMAT JSON) SELECT id, mmr, attr0, attr1, attr2, attr3, payload, "
           "is_bot FROM players WHERE id > 5000 AND id % 4 = 2 ORDER BY id LIMIT 200")
          .text(0, 0);
  INFO(plan);
  CHECK(plan.find("\"Index Name\": \"" + mm::pg_scanner::shard_index_name("players", 4) + "\"") !=
        std::string::npos);
  CHECK(plan.find("Rows Removed by Filter") == std::string::npos);
  CHECK(plan.find("\"Actual Rows\": 200") != std::string::npos);
}

TEST_CASE("the PostgreSQL sample is uniform over a table whose MMR follows the ids",
          "[postgres][store][scan]") {
  if (!have_postgres()) return;
  both_stores s;
  const auto rows = game_players(40'000, 9);
  s.upsert(rows);
  // The mean MMR of shard 1, outliers left out (a few of them at 1e6 would
  // swing any sample's mean).
  double mean = 0;
  std::size_t in_shard = 0, usual = 0;
  for (const auto& r : rows) {
    if (r.id % 2 != 1) continue;
    ++in_shard;
    if (r.mmr > 5000) continue;
    mean += r.mmr;
    ++usual;
  }
  mean /= static_cast<double>(usual);
  auto scanner = s.pg.open_scanner({"players", 1, 2, 1});
  const auto sample = scanner->sample(4000, 12);
  // About 4,000 of the shard's 20,000, each from shard 1, drawn across the ids.
  CHECK(sample.rows.size() > 3600);
  CHECK(sample.rows.size() < 4400);
  double got = 0;
  std::size_t got_usual = 0;
  std::set<mm::player_id> ids;
  for (const auto& r : sample.rows) {
    CHECK(r.id % 2 == 1);
    ids.insert(r.id);
    if (r.mmr > 5000) continue;
    got += r.mmr;
    ++got_usual;
  }
  got /= static_cast<double>(got_usual);
  CHECK(ids.size() == sample.rows.size());
  // A run of consecutive ids would be off by up to 300 here.
  CHECK(std::abs(got - mean) < 25);
  // Shuffled: not in id order.
  CHECK(!std::is_sorted(sample.rows.begin(), sample.rows.end(),
                        [](const auto& a, const auto& b) { return a.id < b.id; }));
  // Asking for more than there is: every row of the shard.
  CHECK(scanner->sample(50'000, 3).rows.size() == in_shard);
}

TEST_CASE("unreadable rows of a PostgreSQL view are reported as on SQLite",
          "[postgres][store][scan]") {
  if (!have_postgres()) return;
  both_stores s;
  s.upsert(game_players(1000, 4));
  const std::string view =
      "CREATE VIEW odd_players AS SELECT CASE WHEN id % 100 = 0 THEN -id ELSE id END AS id, "
      "CASE WHEN id % 100 = 1 THEN NULL ELSE mmr END AS mmr, attr0, attr1, attr2, attr3, "
      "payload, CASE WHEN id % 100 = 2 THEN NULL ELSE is_bot END AS is_bot FROM players";
  s.sqlite.db().sql().exec(view);
  s.pg.db().sql().exec(view);
  auto a = s.sqlite.open_scanner({"odd_players", 4});
  auto b = s.pg.open_scanner({"odd_players", 4});
  const auto x = a->scan(1000, 1000), y = b->scan(1000, 1000);
  CHECK(y.unreadable == x.unreadable);
  CHECK(y.unreadable > 0);
  CHECK(y.rows.size() == x.rows.size());
  REQUIRE(!y.reports.empty());
  CHECK(y.reports.size() == x.reports.size());
  bool named_mmr = false;
  for (const auto& r : y.reports) named_mmr |= r.find("mmr is NULL") != std::string::npos;
  CHECK(named_mmr);
  CHECK_THROWS_WITH(
      s.pg.open_scanner({"no_such_table", 1}),
      Catch::Contains("scan source 'no_such_table'") && Catch::Contains("cannot be read"));
  CHECK_THROWS_WITH(s.pg.open_scanner({"players; DROP TABLE players", 1}),
                    Catch::Contains("not a plain table or view name"));
}

TEST_CASE("snapshots on PostgreSQL: one row per instance, set aside with a reason",
          "[postgres][store][state]") {
  if (!have_postgres()) return;
  both_stores s;
  std::string bytes;
  for (int i = 0; i < 256 * 4; ++i) bytes.push_back(static_cast<char>(i));
  for (mm::player_store* store :
       {static_cast<mm::player_store*>(&s.sqlite), static_cast<mm::player_store*>(&s.pg)}) {
    CHECK(!store->read_state("a"));
    store->write_state("a", {1, 3, "first"});
    store->write_state("b", {2, 3, bytes});
    store->write_state("a", {5, 4, bytes + "!"});
    const auto a = store->read_state("a");
    REQUIRE(a);
    CHECK(a->persisted_at_unix_ms == 5);
    CHECK(a->payload_version == 4);
    CHECK(a->payload == bytes + "!");
    CHECK(store->read_state("b")->payload == bytes);
    store->set_aside_state("b", "cannot decode", 9);
    CHECK(!store->read_state("b"));
    const auto rejected = store->rejected_states("b");
    REQUIRE(rejected.size() == 1);
    CHECK(rejected[0].reason == "cannot decode");
    CHECK(rejected[0].set_aside_at_unix_ms == 9);
    CHECK(rejected[0].persisted_at_unix_ms == 2);
    CHECK(rejected[0].payload == bytes);
    CHECK(store->rejected_states("a").empty());
  }
}

TEST_CASE("session state on PostgreSQL as on SQLite: replaced per service, taken once",
          "[postgres][store][state]") {
  if (!have_postgres()) return;
  both_stores s;
  mm::session_state_rows a;
  for (std::uint64_t i = 0; i < 300; ++i)
    a.tickets.push_back({(2ull << 48) + 1000 - i, i % 2 ? "coop" : "ranked",
                         1'700'000'000'000 + static_cast<std::int64_t>(i),
                         "{\"queue\": \"coop\", \"players\": [{\"id\": " + std::to_string(i + 1) +
                             ", \"mmr\": 1500.5}]}"});
  a.lobbies = {{"z-9", "ctf", "paris", 12, 7, false, "game-a"},
               {"auto-1", "race", "tokyo", 16, 0, true, ""}};
  mm::session_state_rows b;
  b.tickets = {{7, "duel", 5, "{}"}};
  for (mm::player_store* store :
       {static_cast<mm::player_store*>(&s.sqlite), static_cast<mm::player_store*>(&s.pg)}) {
    CHECK(store->take_session_state("node-a").tickets.empty());
    store->write_session_state("node-a", b, 1);
    store->write_session_state("node-a", a, 2);  // replaces node-a's rows
    store->write_session_state("node-b", b, 3);
    const auto got = store->take_session_state("node-a");
    REQUIRE(got.tickets.size() == 300);
    for (std::size_t i = 1; i < got.tickets.size(); ++i)
      CHECK(got.tickets[i - 1].id < got.tickets[i].id);  // by id
    CHECK(got.tickets.front().id == (2ull << 48) + 701);
    CHECK(got.tickets.front().queue == "coop");
    CHECK(got.tickets.front().created_unix_ms == 1'700'000'000'299);
    CHECK(got.tickets.back().ticket == a.tickets.front().ticket);
    REQUIRE(got.lobbies.size() == 2);
    CHECK(got.lobbies[0].id == "auto-1");
    CHECK(got.lobbies[0].created_by_find);
    CHECK(got.lobbies[1].owner == "game-a");  // who may change it after the restart
    CHECK(got.lobbies[1].players == 7);
    CHECK(got.lobbies[1].max_players == 12);
    CHECK(store->take_session_state("node-a").tickets.empty());  // taken once
    const auto other = store->take_session_state("node-b");
    REQUIRE(other.tickets.size() == 1);
    CHECK(other.tickets[0].id == 7);
  }
}

TEST_CASE("the event sequence survives a prune of every event, on both stores",
          "[postgres][store][events]") {
  if (!have_postgres()) return;
  both_stores s;
  mm::journal_batch first;
  first.created.push_back({11, "duel", "alice", 1000, "t"});
  for (std::uint64_t seq = 1; seq <= 6; ++seq)
    first.events.push_back({seq, 11, "", "duel", 1000 + static_cast<std::int64_t>(seq), "e"});
  for (mm::player_store* store :
       {static_cast<mm::player_store*>(&s.sqlite), static_cast<mm::player_store*>(&s.pg)}) {
    store->write_journal("node-a", first);
    store->write_journal("node-b", {});  // another service's counter stays apart
    mm::journal_read everything;
    everything.max_events = 100;
    everything.max_retained = 100;
    CHECK(store->read_journal("node-a", everything).last_seq == 6);
    // Retention deletes every event: the counter is not derived from them.
    store->prune_journal("node-a", {1'000'000'000, 0, 0});
    const auto after = store->read_journal("node-a", everything);
    CHECK(after.events.empty());
    CHECK(after.last_seq == 6);
    CHECK(store->read_journal("node-b", everything).last_seq == 0);
    // An older batch never moves the counter back.
    mm::journal_batch stale;
    stale.events.push_back({3, 11, "", "duel", 2000, "e"});
    store->write_journal("node-a", stale);
    CHECK(store->read_journal("node-a", everything).last_seq == 6);
  }
}

TEST_CASE("a large journal batch reads back the same from both stores, first outcome kept",
          "[postgres][store][events]") {
  if (!have_postgres()) return;
  both_stores s;
  // 2,500 tickets (three multi-row statements of each kind on PostgreSQL),
  // every byte value in their bytes, an outcome for each of the first 1,200
  // given twice (the first is kept), an event each.
  std::string every_byte;
  for (int i = 0; i < 256; ++i) every_byte.push_back(static_cast<char>(i));
  mm::journal_batch b;
  for (std::uint64_t id = 1; id <= 2500; ++id) {
    b.created.push_back({id, id % 2 ? "duel" : "duel,coop", "game-" + std::to_string(id % 3),
                         1000 + static_cast<std::int64_t>(id), every_byte + std::to_string(id)});
    b.events.push_back({id, id, id % 5 ? "" : "other", "duel", 2000, "e" + std::to_string(id)});
  }
  for (std::uint64_t id = 1; id <= 1200; ++id) b.finished.push_back({id, "", 1, 3000, "first"});
  for (std::uint64_t id = 1; id <= 1200; ++id) b.finished.push_back({id, "", 2, 3001, "second"});
  mm::journal_read everything;
  everything.max_events = 10'000;
  everything.max_retained = 10'000;
  std::vector<mm::journal_contents> read;
  for (mm::player_store* store :
       {static_cast<mm::player_store*>(&s.sqlite), static_cast<mm::player_store*>(&s.pg)}) {
    store->write_journal("node-a", b);
    read.push_back(store->read_journal("node-a", everything));
  }
  const auto& lite = read[0];
  const auto& pg = read[1];
  REQUIRE(pg.waiting.size() == 1300);
  REQUIRE(pg.waiting.size() == lite.waiting.size());
  for (std::size_t i = 0; i < pg.waiting.size(); ++i) {
    CHECK(pg.waiting[i].id == lite.waiting[i].id);
    CHECK(pg.waiting[i].queues == lite.waiting[i].queues);
    CHECK(pg.waiting[i].credential == lite.waiting[i].credential);
    CHECK(pg.waiting[i].ticket == lite.waiting[i].ticket);
  }
  REQUIRE(pg.retained.size() == 1200);
  REQUIRE(lite.retained.size() == 1200);
  std::size_t first_kept = 0;
  for (const auto& r : pg.retained) first_kept += r.state == 1 && r.outcome == "first";
  CHECK(first_kept == 1200);
  REQUIRE(pg.events.size() == 2500);
  REQUIRE(lite.events.size() == 2500);
  for (std::size_t i = 0; i < pg.events.size(); ++i) {
    CHECK(pg.events[i].seq == lite.events[i].seq);
    CHECK(pg.events[i].credential == lite.events[i].credential);
    CHECK(pg.events[i].event == lite.events[i].event);
  }
  CHECK(pg.last_seq == 2500);
}

TEST_CASE("configuration versions on PostgreSQL: only added, one writer per number",
          "[postgres][store][config]") {
  if (!have_postgres()) return;
  postgres_server server;
  mm::pg_store a{server.url()}, b{server.url()};
  mm::test::check_config_versions(a, b);
}

TEST_CASE("the journal's rows of before version 9 read back and drop the same on both stores",
          "[postgres][store]") {
  if (!have_postgres()) return;
  both_stores s;
  // Two rows as version 8 kept them (by public id): one waiting, one matched.
  const char* rows =
      "INSERT INTO session_ticket_journal_v8 (ticket_id, service, queues, credential, "
      "created_at, ticket, state, finished_at, outcome) VALUES "
      "(-7, 'node-a', 'duel,coop', 'game', 1000, 'waiting', 0, NULL, NULL), "
      "(42, 'node-a', 'duel', 'game', 1001, 'left', 1, 2000, 'matched'), "
      "(43, 'node-b', 'duel', 'other', 1002, 'theirs', 0, NULL, NULL)";
  {
    SQLite::Database db(s.dir.file("oracle.db"), SQLite::OPEN_READWRITE);
    db.exec(std::string(rows).replace(std::string(rows).find("'waiting'"), 9, "x'77'"));
    pqxx::connection c(s.server.url());
    pqxx::work w(c);
    w.exec(std::string(rows).replace(std::string(rows).find("'waiting'"), 9, "'\\x77'::bytea"));
    w.commit();
  }
  for (mm::player_store* store :
       {static_cast<mm::player_store*>(&s.sqlite), static_cast<mm::player_store*>(&s.pg)}) {
    auto v8 = store->read_v8_journal("node-a");
    REQUIRE(v8.size() == 2);
    std::sort(v8.begin(), v8.end(), [](const auto& a, const auto& b) {
      return a.ticket.created_unix_ms < b.ticket.created_unix_ms;
    });
    CHECK(v8[0].ticket.id == static_cast<std::uint64_t>(-7));
    CHECK(v8[0].ticket.queues == "duel,coop");
    CHECK(v8[0].ticket.ticket == "w");
    CHECK(v8[0].state == 0);
    CHECK(v8[1].ticket.id == 42);
    CHECK(v8[1].state == 1);
    CHECK(v8[1].finished_unix_ms == 2000);
    CHECK(v8[1].outcome == "matched");
    store->drop_v8_journal("node-a");
    CHECK(store->read_v8_journal("node-a").empty());
    CHECK(store->read_v8_journal("node-b").size() == 1);  // another service's stay
  }
}

TEST_CASE("player claims on PostgreSQL as on SQLite: all players or none, freed by the outcome",
          "[postgres][store][claims]") {
  if (!have_postgres()) return;
  postgres_server server;
  mm::pg_store a(server.url()), b(server.url());
  mm::test::check_player_claims(a, b);
}

TEST_CASE("two services claiming the same players at once never both hold one, on PostgreSQL",
          "[postgres][store][claims]") {
  if (!have_postgres()) return;
  postgres_server server;
  mm::pg_store a(server.url()), b(server.url());
  mm::test::check_claims_under_contention(a, b);
}

TEST_CASE("a ticket over two services on PostgreSQL as on SQLite: the first outcome wins",
          "[postgres][store][groups]") {
  if (!have_postgres()) return;
  postgres_server server;
  mm::pg_store a(server.url()), b(server.url());
  mm::test::check_contested_groups(a, b);
}

TEST_CASE("two services racing for tickets they share never both match one, on PostgreSQL",
          "[postgres][store][groups]") {
  if (!have_postgres()) return;
  postgres_server server;
  mm::pg_store a(server.url()), b(server.url());
  mm::test::check_contested_race(a, b, 300);
}

TEST_CASE("a running match id is held by one partition at a time, on PostgreSQL",
          "[postgres][store][claims]") {
  if (!have_postgres()) return;
  postgres_server server;
  mm::pg_store a(server.url()), b(server.url());
  mm::test::check_match_claims(a, b);
}

TEST_CASE("services of one event stream share one sequence, in commit order, on PostgreSQL",
          "[postgres][store][events]") {
  if (!have_postgres()) return;
  postgres_server server;
  mm::pg_store a(server.url()), b(server.url());
  mm::test::check_event_stream(a, b);
}

TEST_CASE("two writers of one event stream at once take every number once, on PostgreSQL",
          "[postgres][store][events]") {
  if (!have_postgres()) return;
  postgres_server server;
  mm::pg_store a(server.url()), b(server.url());
  mm::test::check_event_stream_under_contention(a, b);
}
