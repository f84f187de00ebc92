// Instances as actors: the scan's schedule, snapshots, rebalancing, sizing,
// errors across actors.
#include <catch2/catch.hpp>
#include <set>

#include "actor_fixture.hpp"
#include "actor_test_support.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/storage/player_table.hpp"
#include "mm/testing/temp_dir.hpp"
#include "test_support.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using mm::test::config_for;
using mm::test::fill_table;
using mm::test::query_at;

namespace {
using iface = interfaces<generic_profile>;
using model = generic_model;

std::uint64_t scans(test::actor_fixture& f, const iface::matchmaker& h) {
  auto [info, err] = f.ask<instance_info>(h, info_atom::value);
  REQUIRE(info);
  return info->engine.stats.scans;
}
}  // namespace

TEST_CASE("the scan runs first after the delay, then every tick", "[actors]") {
  test::temp_dir dir;
  fill_table(dir.file("mm.db"), 2000);
  test::actor_fixture f;
  iface::matchmaker inst =
      f.sys().spawn(instance_actor<generic_profile>, config_for(dir.file("mm.db")));
  f.run();
  CHECK(scans(f, inst) == 0);
  f.advance(9s);
  CHECK(scans(f, inst) == 0);
  f.advance(1s);
  CHECK(scans(f, inst) == 1);
  f.advance(29s);
  CHECK(scans(f, inst) == 1);
  f.advance(1s);
  CHECK(scans(f, inst) == 2);
  auto [info, err] = f.ask<instance_info>(inst, info_atom::value);
  REQUIRE(info);
  CHECK(info->engine.players > 0);
  CHECK(info->engine.stats.rows_applied == 2 * 1024);  // no buckets yet: max fetch, twice
  caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
}

TEST_CASE("at most one scan is in flight", "[actors]") {
  test::temp_dir dir;
  fill_table(dir.file("mm.db"), 2000);
  test::actor_fixture f;
  iface::matchmaker inst =
      f.sys().spawn(instance_actor<generic_profile>, config_for(dir.file("mm.db")));
  f.run();
  // Ticks fire while the worker is held back: the second finds a scan running.
  for (int tick = 0; tick < 3; ++tick) {
    f.sched().clock().advance_time(tick == 0 ? 10s : 30s);
    f.run_except("mm.db_worker");
  }
  f.run();  // the worker now answers the one request it got
  CHECK(scans(f, inst) == 1);
  f.advance(30s);
  CHECK(scans(f, inst) == 2);
  caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
}

TEST_CASE("snapshots on the interval and at shutdown, restored at start", "[actors]") {
  test::temp_dir dir;
  const auto path = dir.file("mm.db");
  fill_table(path, 3000);
  {
    test::actor_fixture f;
    iface::matchmaker inst = f.sys().spawn(instance_actor<generic_profile>, config_for(path));
    f.run();
    f.advance(10s);  // first scan: enough samples, so the first rebalance and a snapshot
    database db(path);
    auto first = read_state(db, "mm");
    REQUIRE(first);
    f.advance(1h);  // the snapshot interval
    auto second = read_state(db, "mm");
    REQUIRE(second);
    CHECK(second->persisted_at_unix_ms >= first->persisted_at_unix_ms);
    auto [info, err] = f.ask<instance_info>(inst, info_atom::value);
    REQUIRE(info);
    CHECK(info->instance.last_snapshot_unix_ms == second->persisted_at_unix_ms);
    CHECK(info->instance.state_bytes == second->payload.size());

    // Players that arrive after the last snapshot are in the one written at
    // shutdown: exactly those the cache held then. (Later arrivals may have
    // replaced earlier ones in a full bucket: replace-on-insert.)
    for (player_id id = 100'000; id < 100'050; ++id)
      caf::anon_send(inst, update_atom::value, player_update<model>{id, {test::model(id, 1500)}});
    f.run();
    std::vector<player_id> cached_late;
    for (player_id id = 100'000; id < 100'050; ++id) {
      auto [p, pe] = f.ask<player_info>(inst, player_atom::value, id);
      REQUIRE(p);
      if (p->participating) cached_late.push_back(id);
    }
    REQUIRE(cached_late.size() > 25);
    caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
    f.run();
    auto last = read_state(db, "mm");
    REQUIRE(last);
    generic_engine reread(config_for(path).opts);
    REQUIRE(restore_stored(reread, *last, 0).restored);
    std::vector<player_id> restored_late;
    for (player_id id = 100'000; id < 100'050; ++id)
      if (reread.player(id).participating) restored_late.push_back(id);
    CHECK(restored_late == cached_late);
  }
  test::actor_fixture f;
  iface::matchmaker inst = f.sys().spawn(instance_actor<generic_profile>, config_for(path));
  f.run();
  auto [info, err] = f.ask<instance_info>(inst, info_atom::value);
  REQUIRE(info);
  CHECK(info->engine.players > 0);  // warm before any scan
  CHECK(info->engine.stats.scans == 0);
  caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
}

TEST_CASE("an instance stopped before its snapshot is read back leaves the snapshot as it was",
          "[actors]") {
  test::temp_dir dir;
  const auto path = dir.file("mm.db");
  fill_table(path, 3000);
  {
    test::actor_fixture f;
    iface::matchmaker inst = f.sys().spawn(instance_actor<generic_profile>, config_for(path));
    f.run();
    f.advance(10s);  // a scan, a rebalance, a snapshot
    caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
    f.run();
  }
  database db(path);
  const auto before = read_state(db, "mm");
  REQUIRE(before);
  REQUIRE(!before->payload.empty());
  {
    // Started and stopped at once (a shard handed over and handed on): the
    // worker has not answered the restore when the stop comes.
    test::actor_fixture f;
    iface::matchmaker inst = f.sys().spawn(instance_actor<generic_profile>, config_for(path));
    f.run_except("mm.db_worker");
    caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
    f.run_except("mm.db_worker");
    f.run();
  }
  const auto after = read_state(db, "mm");
  REQUIRE(after);
  CHECK(after->persisted_at_unix_ms == before->persisted_at_unix_ms);
  CHECK(after->payload == before->payload);
}

TEST_CASE("the rebalance schedule goes on from the persisted last rebalance", "[actors]") {
  test::temp_dir dir;
  const auto path = dir.file("mm.db");
  auto c = config_for(path);
  c.opts.enable_database_scan = false;
  {
    // A snapshot whose last rebalance was 3 h ago (the interval is 4 h).
    generic_engine e(c.opts, c.profile);
    rng r(2);
    for (const auto& row : make_players(synthetic_population{}, 3000, 1, r)) e.apply_row(row);
    REQUIRE(e.rebalance(wall_unix_ms() - 3 * 3600 * 1000).performed);
    database db(path);
    save_state(db, c.id, e, wall_unix_ms());
  }
  test::actor_fixture f;
  iface::matchmaker inst = f.sys().spawn(instance_actor<generic_profile>, c);
  f.run();
  auto last = [&] {
    auto [info, err] = f.ask<instance_info>(inst, info_atom::value);
    REQUIRE(info);
    return info->engine.last_rebalance_unix_ms;
  };
  const auto restored = last();
  REQUIRE(restored != 0);
  // Updates bring enough samples for a rebalance (fewer than tenfold the
  // snapshot's, so none comes early).
  for (player_id id = 1; id <= 1500; ++id)
    caf::anon_send(inst, update_atom::value,
                   player_update<model>{id, {test::model(id, static_cast<float>(id % 900))}});
  f.run();
  CHECK(last() == restored);
  f.advance(59min);
  CHECK(last() == restored);  // not restarted from 4 h: due 1 h after the start
  f.advance(2min);
  CHECK(last() > restored);
  caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
}

TEST_CASE("with the scan off state updates alone size the buckets", "[actors]") {
  test::temp_dir dir;
  auto c = config_for(dir.file("mm.db"));
  c.opts.enable_database_scan = false;
  test::actor_fixture f;
  iface::matchmaker inst = f.sys().spawn(instance_actor<generic_profile>, c);
  f.run();
  rng r(5);
  for (player_id id = 1; id <= 1200; ++id)
    caf::anon_send(
        inst, update_atom::value,
        player_update<model>{id, {test::model(id, 1000 + static_cast<float>(r.below(500)))}});
  f.run();
  auto [info, err] = f.ask<instance_info>(inst, info_atom::value);
  REQUIRE(info);
  CHECK(info->engine.stats.rebalances == 1);
  CHECK(info->engine.mmr_low > 900);  // the range came from the updates' MMRs
  CHECK(info->engine.mmr_high < 1600);
  caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
}

TEST_CASE("the scan's pointers are seeded from random_seed and at random without one", "[actors]") {
  test::temp_dir dir;
  fill_table(dir.file("mm.db"), 20'000);
  auto first_scan = [&](std::uint64_t random_seed, const std::string& id) {
    auto c = config_for(dir.file("mm.db"), id);
    c.opts.random_seed = random_seed;
    c = member_config(c, 1, 0);
    test::actor_fixture f;
    iface::matchmaker inst = f.sys().spawn(instance_actor<generic_profile>, c);
    f.run();
    f.advance(10s);
    std::set<player_id> ids;
    for (std::uint32_t b = 0;; ++b) {
      auto [page, err] = f.ask<std::vector<model>>(inst, inspect_atom::value, b, 0u, 10'000u);
      if (!page || page->empty()) break;
      for (const auto& m : *page) ids.insert(m.id());
    }
    caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
    return ids;
  };
  const auto a = first_scan(5, "a"), b = first_scan(5, "b");
  REQUIRE(a.size() > 500);
  CHECK(a == b);  // a seed repeats the walk
  const auto c = first_scan(0, "c"), d = first_scan(0, "d");
  REQUIRE(c.size() > 500);
  CHECK(c != d);  // no seed: every cold start walks other rows
}

// Ids sparse and clustered (signup waves), MMR growing with the id (veterans
// are stronger) and a long upper tail: a few runs of consecutive ids tell
// little of the whole. The first sizing must still see the real top.
TEST_CASE("a cold start sizes from a sample spread over the whole table", "[actors][sizing]") {
  test::temp_dir dir;
  const auto path = dir.file("mm.db");
  std::vector<player_row> rows;
  {
    rng r(9);
    player_id id = 1000;
    while (rows.size() < 100'000) {
      id += 1 + r.below(5'000'000);           // a gap between signup waves
      const auto wave = 200 + r.below(3000);  // a wave of consecutive ids
      for (std::uint64_t k = 0; k < wave && rows.size() < 100'000; ++k) {
        player_row row;
        row.id = id++;
        const double rank = static_cast<double>(rows.size()) / 100'000;
        // Reversed: the lowest ids are the veterans, strongest, with a tail.
        row.mmr = 1000 + 1200 * (1 - rank) + 600 * std::pow(1 - rank, 8) + r.below(50);
        rows.push_back(row);
      }
    }
    database db(path);
    upsert_players(db, rows);
  }
  std::vector<double> mmrs;
  for (const auto& row : rows) mmrs.push_back(row.mmr);
  std::sort(mmrs.begin(), mmrs.end());
  const auto rank_of = [&](double x) {
    return static_cast<double>(std::upper_bound(mmrs.begin(), mmrs.end(), x) - mmrs.begin()) /
           static_cast<double>(mmrs.size());
  };

  auto c = config_for(path);
  c.opts.sizing_sample_rows = 20'000;
  c.opts.buckets_rebalance_sample_count = 200'000;
  c.opts.player_cache_size = 20'000;
  c.opts.bucket_initial_size = 200;
  c.opts.mmr_bucket_count = 50;
  test::actor_fixture f;
  iface::matchmaker inst = f.sys().spawn(instance_actor<generic_profile>, c);
  f.run();  // restore (none), then the sample and the first sizing
  auto [info, err] = f.ask<instance_info>(inst, info_atom::value);
  REQUIRE(info);
  CHECK(info->engine.stats.rebalances == 1);
  CHECK(info->engine.stats.scans == 0);  // sized before the first scan
  CHECK(info->engine.samples > 15'000);
  // The range's ends sit at the 0.5% and 99.5% points of the real table.
  CHECK(rank_of(info->engine.mmr_high) == Approx(0.995).margin(0.003));
  CHECK(rank_of(info->engine.mmr_low) == Approx(0.005).margin(0.003));
  f.advance(10s);  // the first scan adds its runs; no resizing from them yet
  auto [later, err2] = f.ask<instance_info>(inst, info_atom::value);
  REQUIRE(later);
  CHECK(later->engine.stats.scans == 1);
  CHECK(later->engine.stats.rebalances == 1);
  caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
}

TEST_CASE("errors carry the project's cause across actors", "[actors][errors]") {
  test::actor_fixture f;
  test::temp_dir dir;
  // The database worker cannot open a file in a directory that does not
  // exist: enrolling (which reads the player's row) fails with the cause
  // "database", not a generic runtime error.
  iface::matchmaker inst =
      f.sys().spawn(instance_actor<generic_profile>, config_for(dir.file("missing/dir/mm.db")));
  f.run();
  auto [changed, failure] = f.ask<bool>(inst, enroll_atom::value, player_id{5});
  CHECK_FALSE(changed);
  REQUIRE(failure);
  CHECK(error_code_of(failure) == errc::database);
  CHECK(f.sys().render(failure).find("mm.database") != std::string::npos);
  CHECK(f.sys().render(failure).find("missing/dir/mm.db") != std::string::npos);

  // A client given no instance says so with its own cause.
  auto none =
      spawn_client<generic_profile>(f.sys(), std::vector<iface::matchmaker>{}, std::uint64_t{1});
  auto [reply, no_instance] = f.ask<match_reply<model>>(none, find_atom::value, query_at(500));
  CHECK_FALSE(reply);
  CHECK(error_code_of(no_instance) == errc::no_instances);
  caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(none, caf::exit_reason::user_shutdown);
  f.run();
}
