#include <SQLiteCpp/Statement.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <sstream>

#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/snapshot.hpp"
#include "mm/testing/temp_dir.hpp"
#include "test_support.hpp"

using namespace mm;
using namespace mm::test;

namespace {
generic_engine filled_engine(std::uint32_t cache, std::uint32_t db_cache) {
  auto o = small_options(cache);
  o.database_cache_size = db_cache;
  o.mmr_bucket_count = 20;
  generic_engine e(o, generic_profile(demo_profile_config()));
  rng r(4);
  const auto rows = make_players(synthetic_population{}, cache, 1, r);
  for (const auto& row : rows) e.apply_row(row);
  e.rebalance(1234);
  for (const auto& row : rows) e.apply_row(row);
  return e;
}

auto valid = [](const generic_model& m) { return m.id() != 0 && std::isfinite(m.mmr); };
}  // namespace

TEST_CASE("snapshot codec round trip", "[snapshot]") {
  auto e = filled_engine(5000, 1000);
  const auto snap = take_snapshot(e);
  CHECK(snap.players.size() <= 1000);
  CHECK(snap.players.size() >= 990);
  const std::string bytes = encode_snapshot(snap);
  auto decoded = decode_snapshot<generic_model>(bytes, valid);
  REQUIRE(std::holds_alternative<engine_snapshot<generic_model>>(decoded));
  const auto& d = std::get<engine_snapshot<generic_model>>(decoded);
  CHECK(d.player_cache_size == 5000);
  CHECK(d.last_rebalance_unix_ms == 1234);
  CHECK(d.sizing.mmr_low == snap.sizing.mmr_low);
  CHECK(d.sizing.ratios == snap.sizing.ratios);
  CHECK(d.strategy_states == snap.strategy_states);
  REQUIRE(d.players.size() == snap.players.size());
  for (std::size_t i = 0; i < d.players.size(); ++i) {
    CHECK(d.players[i].id() == snap.players[i].id());
    CHECK(d.players[i].mmr == snap.players[i].mmr);
    CHECK(d.players[i].attributes == snap.players[i].attributes);
  }
  CHECK(encode_snapshot(d) == bytes);  // deterministic
}

TEST_CASE("every truncation and corruption of a payload is a decode error", "[snapshot]") {
  auto e = filled_engine(2000, 200);
  const std::string bytes = encode_snapshot(take_snapshot(e));
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto d = decode_snapshot<generic_model>(std::string_view(bytes).substr(0, n), valid);
    REQUIRE(std::holds_alternative<decode_error>(d));
  }
  rng r(9);
  for (int i = 0; i < 2000; ++i) {
    std::string bad = bytes;
    const int flips = 1 + static_cast<int>(r.below(4));
    for (int f = 0; f < flips; ++f) {
      const auto at = r.below(bad.size());
      bad[at] = static_cast<char>(bad[at] ^ (1 + r.below(255)));
    }
    INFO("corruption " << i);
    REQUIRE(std::holds_alternative<decode_error>(decode_snapshot<generic_model>(bad, valid)));
  }
  std::string garbage(bytes.size(), '\0');
  for (auto& c : garbage) c = static_cast<char>(r.below(256));
  CHECK(std::holds_alternative<decode_error>(decode_snapshot<generic_model>(garbage, valid)));
  std::string newer = bytes;
  newer[4] = 9;
  auto err = decode_snapshot<generic_model>(newer, valid);
  REQUIRE(std::holds_alternative<decode_error>(err));
  CHECK(std::get<decode_error>(err).reason.find("newer") != std::string::npos);
  std::string longer = bytes + "x";
  CHECK(std::holds_alternative<decode_error>(decode_snapshot<generic_model>(longer, valid)));
}

TEST_CASE("save and restore: a warm restart", "[snapshot]") {
  temp_dir dir;
  database db(dir.file("mm.db"));
  auto e = filled_engine(5000, 1000);
  const auto saved = save_state(db, "mm-0", e, 99);
  CHECK(saved.players >= 990);
  CHECK(saved.bytes > 1000 * 28);

  auto o = e.opts();
  generic_engine fresh(o, generic_profile(demo_profile_config()));
  const auto r = load_state(db, "mm-0", fresh, 100);
  CHECK(r.found);
  CHECK(r.restored);
  CHECK_FALSE(r.resized);
  // The buckets come back with their slot seeds: nobody is lost to a collision.
  CHECK(r.players == saved.players);
  CHECK(fresh.info().players == r.players);
  CHECK(fresh.mmr().low() == e.mmr().low());
  CHECK(fresh.mmr().high() == e.mmr().high());
  CHECK(fresh.last_rebalance_unix_ms() == 1234);
  CHECK(fresh.sizing().ratios == e.sizing().ratios);
  // Every restored player is one the first engine had, with the same model.
  std::map<player_id, generic_model> before;
  for (const auto& m : cached(e)) before[m.id()] = m;
  for (const auto& m : cached(fresh)) {
    REQUIRE(before.count(m.id()));
    CHECK(before[m.id()].mmr == m.mmr);
  }
  CHECK_FALSE(load_state(db, "other", fresh, 100).found);
}

TEST_CASE("a warm restart of a full cache keeps every player", "[snapshot]") {
  temp_dir dir;
  database db(dir.file("mm.db"));
  // The snapshot holds the whole cache, buckets filled as a scan leaves them.
  auto e = filled_engine(8000, 8000);
  const auto held = e.info().players;
  REQUIRE(held > 4000);
  save_state(db, "mm-0", e, 5);
  generic_engine fresh(e.opts(), generic_profile(demo_profile_config()));
  const auto r = load_state(db, "mm-0", fresh, 6);
  REQUIRE(r.restored);
  CHECK(r.players == held);
  CHECK(fresh.info().capacity == e.info().capacity);
  std::set<player_id> before, after;
  for (const auto& m : cached(e)) before.insert(m.id());
  for (const auto& m : cached(fresh)) after.insert(m.id());
  CHECK(before == after);
}

TEST_CASE("a restore leaves out the players another instance owns", "[snapshot]") {
  temp_dir dir;
  database db(dir.file("mm.db"));
  auto e = filled_engine(5000, 5000);  // written by a single instance
  save_state(db, "mm-1", e, 5);
  generic_engine fresh(e.opts(), generic_profile(demo_profile_config()));
  const auto r = load_state(db, "mm-1", fresh, 6, shard{3, 1});  // now one of 3
  REQUIRE(r.restored);
  CHECK(r.other_shard > 0);
  CHECK(r.players + r.other_shard == e.info().players);
  for (const auto& m : cached(fresh)) CHECK(m.id() % 3 == 1);
}

TEST_CASE("a version 1 snapshot (no bucket layout) is still restored", "[snapshot]") {
  auto e = filled_engine(2000, 2000);
  auto snap = take_snapshot(e);
  snap.buckets.clear();
  std::string bytes = encode_snapshot(snap);
  // Version 1 is version 2 without the layout's length (eight zero bytes).
  std::string body = bytes.substr(detail::header_size, bytes.size() - detail::header_size - 8);
  std::string v1 = "MMSS";
  v1 += std::string("\x01\x00\x00\x00", 4);
  detail::put_u64(v1, body.size());
  detail::put_u64(v1, fnv1a64(body));
  v1 += body;
  generic_engine fresh(e.opts(), generic_profile(demo_profile_config()));
  const auto r = restore_stored(fresh, stored_state{1, 1, v1}, 2);
  REQUIRE(r.restored);
  CHECK(r.players > e.info().players / 2);
}

TEST_CASE("a snapshot that claims more entries than its bytes hold is refused before allocating",
          "[snapshot]") {
  std::ostringstream out;
  {
    cereal::PortableBinaryOutputArchive ar(out);
    ar(0.0, 1000.0, std::uint32_t{100}, std::uint64_t{0}, std::int64_t{0});
    ar(cereal::make_size_tag(cereal::size_type{0}));  // ratios
    ar(std::uint32_t{100}, std::int64_t{0});
    ar(cereal::make_size_tag(cereal::size_type{0}));           // strategy states
    ar(cereal::make_size_tag(cereal::size_type{10'000'000}));  // "ten million players"
    ar(std::uint64_t{1}, std::uint64_t{2});
  }
  const std::string body = out.str();
  std::string bytes = "MMSS";
  bytes += std::string("\x02\x00\x00\x00", 4);
  detail::put_u64(bytes, body.size());
  detail::put_u64(bytes, fnv1a64(body));
  bytes += body;
  auto decoded = decode_snapshot<generic_model>(bytes, valid);
  REQUIRE(std::holds_alternative<decode_error>(decoded));
  CHECK_THAT(std::get<decode_error>(decoded).reason, Catch::Contains("does not fit"));
}

TEST_CASE("a changed player_cache_size resizes the buckets after the restore", "[snapshot]") {
  temp_dir dir;
  database db(dir.file("mm.db"));
  auto e = filled_engine(5000, 1000);
  save_state(db, "mm-0", e, 1);
  auto o = e.opts();
  o.player_cache_size = 10'000;
  generic_engine bigger(o, generic_profile(demo_profile_config()));
  const auto r = load_state(db, "mm-0", bigger, 2);
  CHECK(r.restored);
  CHECK(r.resized);
  CHECK(bigger.last_rebalance_unix_ms() == 2);
  // Buckets are sized for the new cache: about twice the capacity.
  double ratio_sum = 0;
  int counted = 0;
  for (const auto& b : bigger.info().buckets) {
    const auto want = bigger.planned_capacity(bigger.pool().at(b.index).labels);
    CHECK(b.capacity == want);
    if (want > 100) {
      ratio_sum +=
          static_cast<double>(b.capacity) /
          capacity_plan(bigger.sizing(), e.opts()).capacity_of(bigger.pool().at(b.index).labels);
      ++counted;
    }
  }
  REQUIRE(counted > 0);
  CHECK(ratio_sum / counted == Approx(2.0).epsilon(0.05));
}

TEST_CASE("a bad snapshot is set aside and the engine starts empty", "[snapshot]") {
  temp_dir dir;
  database db(dir.file("mm.db"));
  std::vector<std::string> logged;
  set_log_sink([&](const log_record& r) { logged.emplace_back(r.message); });
  write_state(db, "mm-0", stored_state{5, 1, "definitely not a snapshot"});
  generic_engine e(small_options());
  e.update(1, model(1, 10));
  const auto r = load_state(db, "mm-0", e, 77);
  set_log_sink({});
  CHECK(r.found);
  CHECK_FALSE(r.restored);
  CHECK_FALSE(r.problem.empty());
  CHECK(e.info().players == 1);  // a failed decode touches nothing
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].find("set aside") != std::string::npos);
  CHECK_FALSE(read_state(db, "mm-0").has_value());  // never read again...
  const auto rejected = rejected_states(db, "mm-0");
  REQUIRE(rejected.size() == 1);  // ...but kept for inspection
  CHECK(rejected[0].payload == "definitely not a snapshot");
  CHECK(rejected[0].set_aside_at_unix_ms == 77);
  CHECK(rejected[0].persisted_at_unix_ms == 5);
  CHECK(rejected[0].reason == r.problem);
  CHECK_FALSE(load_state(db, "mm-0", e, 78).found);  // no crash loop
}

TEST_CASE("an unreadable strategy state rejects the snapshot", "[snapshot]") {
  temp_dir dir;
  database db(dir.file("mm.db"));
  auto e = filled_engine(2000, 100);
  auto snap = take_snapshot(e);
  snap.strategy_states[0].second = "broken";
  write_state(db, "mm-0", stored_state{1, snapshot_version, encode_snapshot(snap)});
  generic_engine fresh(e.opts(), generic_profile(demo_profile_config()));
  set_log_sink([](const log_record&) {});
  const auto r = load_state(db, "mm-0", fresh, 2);
  set_log_sink({});
  CHECK_FALSE(r.restored);
  CHECK(r.problem.find("strategy state") != std::string::npos);
  CHECK(fresh.info().players == 0);
  CHECK(fresh.sizing().empty());
  CHECK(rejected_states(db, "mm-0").size() == 1);
}

namespace {
// Runs `child` in a forked process that is killed with SIGKILL when it returns
// (or when `signal_ready` is written and `before_kill` ran in the parent).
template <class Child, class Parent>
void in_killed_child(Child child, Parent before_kill) {
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(ready[0]);
    child();
    const char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(3);
    pause();  // wait for the parent's SIGKILL, mid-transaction
    _exit(2);
  }
  close(ready[1]);
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  close(ready[0]);
  before_kill();
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));
}
}  // namespace

TEST_CASE("a write abandoned midway leaves the previous snapshot readable", "[snapshot]") {
  temp_dir dir;
  const std::string path = dir.file("mm.db");
  auto e = filled_engine(2000, 500);
  {
    database db(path);
    save_state(db, "mm-0", e, 1);
    db.sql().exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  auto expect_first_snapshot = [&](const std::string& file) {
    database db(file);
    generic_engine fresh(e.opts(), generic_profile(demo_profile_config()));
    const auto r = load_state(db, "mm-0", fresh, 2);
    CHECK(r.restored);
    CHECK(read_state(db, "mm-0")->persisted_at_unix_ms == 1);
  };

  SECTION("killed between the statements of the write") {
    in_killed_child(
        [&] {
          // Leaked on purpose: the process dies inside the transaction, before
          // any destructor could roll it back or commit it.
          auto* db = new database(path);
          db->sql().exec("BEGIN IMMEDIATE");
          db->sql().exec("UPDATE matchmaker_state SET payload = x'00', persisted_at = 2");
          db->sql().exec("INSERT INTO players (id, mmr, updated_at) VALUES (1, 1, 1)");
          // A large uncommitted change, so pages spill to the WAL before the kill.
          db->sql().exec("CREATE TABLE filler AS SELECT randomblob(1000000) AS b");
        },
        [] {});
    expect_first_snapshot(path);
  }

  SECTION("a copy of the files taken while a write is open") {
    const std::string copy = dir.file("copy.db");
    in_killed_child(
        [&] {
          auto* db = new database(path);  // open, mid-transaction, until killed
          db->sql().exec("BEGIN IMMEDIATE");
          db->sql().exec("UPDATE matchmaker_state SET payload = x'00', persisted_at = 2");
          db->sql().exec("CREATE TABLE filler AS SELECT randomblob(1000000) AS b");
        },
        [&] {
          namespace fs = std::filesystem;
          fs::copy_file(path, copy);
          if (fs::exists(path + "-wal")) fs::copy_file(path + "-wal", copy + "-wal");
        });
    expect_first_snapshot(copy);
    expect_first_snapshot(path);
  }
}
