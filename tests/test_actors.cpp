#include <catch2/catch.hpp>
#include <set>

#include "actor_fixture.hpp"
#include "actor_test_support.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/actors/query_bridge.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/player_table.hpp"
#include "mm/testing/temp_dir.hpp"
#include "test_support.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using mm::test::config_for;
using mm::test::query_at;

namespace {
using iface = interfaces<generic_profile>;
using model = generic_model;

void fill_table(const std::string& path, std::size_t n) {
  database db(path);
  rng r(3);
  upsert_players(db, make_players(synthetic_population{}, n, 1, r));
}

std::uint64_t scans(test::actor_fixture& f, const iface::matchmaker& h) {
  auto [info, err] = f.ask<instance_info>(h, info_atom::value);
  REQUIRE(info);
  return info->engine.stats.scans;
}

// A matchmaker that takes requests and never answers them.
struct silent_state {
  silent_state() = default;
  std::vector<caf::typed_response_promise<match_reply<model>>> held;
};
iface::matchmaker::behavior_type silent_matchmaker(
    iface::matchmaker::stateful_pointer<silent_state> self) {
  auto never = [] { return caf::make_error(caf::sec::unexpected_message); };
  return {
      [=](find_atom, const match_request<generic_query>&) -> caf::result<match_reply<model>> {
        auto rp = self->make_response_promise<match_reply<model>>();
        self->state.held.push_back(rp);
        return rp;
      },
      [=](find_atom, const std::vector<match_request<generic_query>>&)
          -> caf::result<std::vector<match_reply<model>>> { return never(); },
      [=](find_atom, const match_request<generic_query>&,
          set_route) -> caf::result<match_reply<model>> {
        auto rp = self->make_response_promise<match_reply<model>>();
        self->state.held.push_back(rp);
        return rp;
      },
      [](update_atom, const player_update<model>&) {},
      [=](enroll_atom, player_id) -> caf::result<bool> { return never(); },
      [=](remove_atom, player_id) -> caf::result<bool> { return never(); },
      [=](info_atom) -> caf::result<instance_info> { return never(); },
      [=](player_atom, player_id) -> caf::result<player_info> { return never(); },
      [=](inspect_atom, std::uint32_t, std::uint32_t,
          std::uint32_t) -> caf::result<std::vector<model>> { return never(); },
      [=](top_atom, std::uint32_t) -> caf::result<std::vector<model>> { return never(); },
      [=](rebalance_atom) -> caf::result<rebalance_report> { return never(); },
      [=](clear_atom) -> caf::result<bool> { return never(); },
      [=](explain_atom, const match_request<generic_query>&,
          std::uint32_t) -> caf::result<query_explanation> { return never(); },
  };
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

    // Players that arrive after the last snapshot are in the one written at shutdown.
    for (player_id id = 100'000; id < 100'050; ++id)
      caf::anon_send(inst, update_atom::value, player_update<model>{id, {test::model(id, 1500)}});
    f.run();
    caf::anon_send_exit(inst, caf::exit_reason::user_shutdown);
    f.run();
    auto last = read_state(db, "mm");
    REQUIRE(last);
    generic_engine reread(config_for(path).opts);
    REQUIRE(restore_stored(reread, *last, 0).restored);
    CHECK(reread.player(100'000).participating);
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

namespace {
// A game whose model factory crashes on one player while the test arms it:
// the instance dies with it. (Disarmed, the scan may read that player like any
// other: its rows are visited in a random order.)
bool crash_armed = false;  // the test scheduler runs every actor on this thread
struct crashing_profile : generic_profile {
  row_verdict make_models(const player_row& row, std::vector<generic_model>& out) const {
    if (crash_armed && row.id == 666) throw std::runtime_error("model factory bug");
    return generic_profile::make_models(row, out);
  }
  std::vector<std::unique_ptr<strategy<crashing_profile>>> make_strategies() const { return {}; }
};
}  // namespace

TEST_CASE("a crashed instance restarts from its snapshot, backing off", "[actors]") {
  using civ = interfaces<crashing_profile>;
  test::temp_dir dir;
  const auto path = dir.file("mm.db");
  fill_table(path, 3000);
  test::actor_fixture f;
  instance_config<crashing_profile> c;
  c.id = "mm";
  c.opts = config_for(path).opts;
  c.database.path = path;
  c.detached_worker = false;
  civ::matchmaker sup = f.sys().spawn(supervisor_actor<crashing_profile>, c, restart_backoff{});
  f.run();
  f.advance(10s);  // a scan fills the cache and writes a snapshot
  auto [before, e0] = f.ask<instance_info>(sup, info_atom::value);
  REQUIRE(before);
  REQUIRE(before->engine.players > 0);

  auto crash = [&] {
    crash_armed = true;
    f.ask<bool>(sup, enroll_atom::value, player_id{666});
    crash_armed = false;
  };
  crash();
  auto [down, e1] = f.ask<instance_info>(sup, info_atom::value);
  CHECK_FALSE(down);  // an error at once, never a hang
  CHECK(error_code_of(e1) == errc::instance_down);
  caf::anon_send(sup, update_atom::value, player_update<model>{5, {test::model(5, 100)}});
  f.run();
  f.advance(100ms);  // first backoff
  auto [after, e2] = f.ask<instance_info>(sup, info_atom::value);
  REQUIRE(after);
  CHECK(after->engine.players > 0);  // restored from the snapshot
  CHECK(after->engine.stats.scans == 0);
  CHECK(after->supervisor.restarts == 1);         // the supervisor's own figures are reported
  CHECK(after->supervisor.updates_dropped == 1);  // the update sent while it was down

  crash();  // again right away: the backoff doubles
  f.advance(100ms);
  CHECK_FALSE(f.ask<instance_info>(sup, info_atom::value).first);
  f.advance(100ms);
  CHECK(f.ask<instance_info>(sup, info_atom::value).first);
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
}

TEST_CASE("a routed query passes over a member that is down and the set answers for it",
          "[actors]") {
  test::temp_dir dir;
  const auto path = dir.file("mm.db");
  fill_table(path, 3000);  // the crash needs player 666's row
  test::actor_fixture f;
  instance_config<crashing_profile> c;
  c.id = "mm";
  c.opts = config_for(path).opts;
  c.opts.enable_database_scan = false;
  c.database.path = path;
  c.detached_worker = false;
  const restart_backoff slow{std::chrono::hours(1), std::chrono::hours(1), std::chrono::hours(2)};
  for (std::uint32_t n : {2u, 3u}) {
    auto set = spawn_instance_set<crashing_profile>(f.sys(), n, c, slow);
    set_router<crashing_profile> router(set, 5);
    f.run();
    // Player 1 lives on member 1; member 0 (the owner of 666) crashes.
    caf::anon_send(set[1], update_atom::value, player_update<model>{1, {test::model(1, 900)}});
    crash_armed = true;
    f.ask<bool>(set[0], enroll_atom::value, player_id{666});
    crash_armed = false;
    CHECK_FALSE(f.ask<instance_info>(set[0], info_atom::value).first);  // down for an hour
    const auto ask = [&](float mmr) {
      auto out = std::make_shared<std::optional<match_reply<model>>>();
      f.sys().spawn([out, &router, mmr](caf::event_based_actor* self) {
        router.find(self, 24h, query_at(mmr)).then([out](match_reply<model>& r) { *out = r; });
      });
      f.run();
      REQUIRE(*out);
      return **out;
    };
    for (int q = 0; q < 12; ++q) {
      const auto found = ask(905);
      CHECK(found.type == match_type::success);
      CHECK(found.best_candidate_id == 1);
      // Nobody near: NoneFound, also when the last member asked is the one
      // that is down (its supervisor answers for the set).
      CHECK(ask(5000).type == match_type::none_found);
    }
    // A batch through the client actor passes over the member that is down too.
    auto client = spawn_client<crashing_profile>(f.sys(), set, std::uint64_t{n});
    for (int q = 0; q < 6; ++q) {
      auto [replies, be] = f.ask<std::vector<match_reply<model>>>(
          client, find_atom::value,
          std::vector<match_request<generic_query>>{query_at(905), query_at(5000)});
      REQUIRE(replies);
      REQUIRE(replies->size() == 2);
      CHECK((*replies)[0].best_candidate_id == 1);
      CHECK((*replies)[1].type == match_type::none_found);
    }
    caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
    f.advance(std::chrono::hours(1));  // member 0 is back; its supervisor kept its counts
    auto [info, e] = f.ask<instance_info>(set[0], info_atom::value);
    REQUIRE(info);
    CHECK(info->supervisor.routed.passed_on > 0);
    if (n == 2) CHECK(info->supervisor.routed.none_found > 0);
    for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    f.run();
  }
  // A set of one that is down: an error with the cause, at once.
  auto single = spawn_instance_set<crashing_profile>(f.sys(), 1, c, slow);
  set_router<crashing_profile> router(single, 5);
  f.run();
  crash_armed = true;
  f.ask<bool>(single[0], enroll_atom::value, player_id{666});
  crash_armed = false;
  caf::error failure;
  f.sys().spawn([&](caf::event_based_actor* self) {
    router.find(self, 24h, query_at(500))
        .then([](match_reply<model>&) {}, [&](caf::error& err) { failure = err; });
  });
  f.run();
  CHECK(error_code_of(failure) == errc::instance_down);
  caf::anon_send_exit(single[0], caf::exit_reason::user_shutdown);
}

TEST_CASE("backoff doubles up to its maximum", "[actors]") {
  restart_backoff b{100ms, 1000ms, 60s};
  CHECK(backoff_delay(b, 1) == 100ms);
  CHECK(backoff_delay(b, 2) == 200ms);
  CHECK(backoff_delay(b, 4) == 800ms);
  CHECK(backoff_delay(b, 5) == 1000ms);
  CHECK(backoff_delay(b, 50) == 1000ms);
}

// Asks `router`'s set from a game actor of the test, in that actor's own
// context (no client actor): the reply, or the error.
std::pair<std::optional<match_reply<model>>, caf::error> ask_set(
    test::actor_fixture& f, set_router<generic_profile>& router,
    const match_request<generic_query>& req, caf::timespan timeout = 24h) {
  auto out = std::make_shared<std::pair<std::optional<match_reply<model>>, caf::error>>();
  f.sys().spawn([out, &router, req, timeout](caf::event_based_actor* self) {
    router.find(self, timeout, req)
        .then([out](match_reply<model>& r) { out->first = std::move(r); },
              [out](caf::error& e) { out->second = std::move(e); });
  });
  f.run();
  return *out;
}

// The set's final answers as its members counted them.
routed_answers set_answers(test::actor_fixture& f, const std::vector<iface::matchmaker>& set) {
  routed_answers sum;
  for (const auto& h : set) {
    auto [info, e] = f.ask<instance_info>(h, info_atom::value);
    REQUIRE(info);
    sum += info->instance.routed;
    sum += info->supervisor.routed;
  }
  return sum;
}

TEST_CASE("routing sends updates by id mod N and a query on through the set", "[actors]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  auto set = spawn_instance_set<generic_profile>(f.sys(), 3, base);
  auto client = spawn_client<generic_profile>(f.sys(), set, std::uint64_t{7});
  set_router<generic_profile> router(set, 13);
  f.run();
  for (player_id id = 1; id <= 30; ++id)
    caf::anon_send(client, update_atom::value, player_update<model>{id, {test::model(id, 100)}});
  f.run();
  for (std::uint32_t i = 0; i < 3; ++i)
    for (player_id id = 1; id <= 30; ++id) {
      auto [p, e] = f.ask<player_info>(set[i], player_atom::value, id);
      REQUIRE(p);
      CHECK(p->participating == (id % 3 == i));
      CHECK((*router.owner_of(id) == set[i]) == (id % 3 == i));
    }
  // Only instance 1 holds a player near MMR 900: every query finds it, wherever
  // it starts, through the client actor and through a router in the caller.
  caf::anon_send(client, update_atom::value, player_update<model>{4, {test::model(4, 900)}});
  f.run();
  std::set<std::uint64_t> first_asked;
  for (int q = 0; q < 12; ++q) {
    const auto before = set_answers(f, set);
    auto [r, e] = f.ask<match_reply<model>>(client, find_atom::value, query_at(905));
    REQUIRE(r);
    CHECK(r->type == match_type::success);
    CHECK(r->best_candidate_id == 4);
    auto [g, ge] = ask_set(f, router, query_at(905));
    REQUIRE(g);
    CHECK(g->type == match_type::success);
    CHECK(g->best_candidate_id == 4);
    CHECK(set_answers(f, set).success - before.success == 2);  // one count per query
  }
  // The members that found none on the way counted NoneFound in their engines:
  // the queries did start elsewhere than instance 1.
  std::uint64_t none_on_the_way = 0;
  for (auto& h : set) {
    auto [info, e] = f.ask<instance_info>(h, info_atom::value);
    REQUIRE(info);
    none_on_the_way += info->engine.stats.queries_none_found;
  }
  CHECK(none_on_the_way > 0);
  auto [none, e] = f.ask<match_reply<model>>(client, find_atom::value, query_at(5000));
  REQUIRE(none);
  CHECK(none->type == match_type::none_found);
  auto [gnone, ge] = ask_set(f, router, query_at(5000));
  REQUIRE(gnone);
  CHECK(gnone->type == match_type::none_found);
  CHECK(set_answers(f, set).none_found == 2);
  for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
}

TEST_CASE("a batch of queries is answered in order, through the set or by one instance",
          "[actors]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  auto set = spawn_instance_set<generic_profile>(f.sys(), 3, base);
  auto client = spawn_client<generic_profile>(f.sys(), set, std::uint64_t{9});
  f.run();
  // Player k (MMR 1000 k) lives on member k % 3.
  for (player_id id = 1; id <= 6; ++id)
    caf::anon_send(client, update_atom::value,
                   player_update<model>{id, {test::model(id, 1000.0f * static_cast<float>(id))}});
  f.run();
  using batch_t = std::vector<match_request<generic_query>>;
  using replies_t = std::vector<match_reply<model>>;
  batch_t batch;
  for (player_id id : {3, 1, 6, 2, 5, 4})
    batch.push_back(query_at(1000.0f * static_cast<float>(id) + 5));
  batch.push_back(query_at(9500));  // nobody near
  auto [replies, e] = f.ask<replies_t>(client, find_atom::value, batch);
  REQUIRE(replies);
  REQUIRE(replies->size() == 7);
  const player_id expected[] = {3, 1, 6, 2, 5, 4};
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK((*replies)[i].type == match_type::success);
    CHECK((*replies)[i].best_candidate_id == expected[i]);
  }
  CHECK((*replies)[6].type == match_type::none_found);
  auto [stats, se] = f.ask<client_stats>(client, stats_atom::value);
  REQUIRE(stats);
  CHECK(stats->queries == 7);
  CHECK(stats->batches.success == 6);
  CHECK(stats->batches.none_found == 1);
  // One instance answers a batch alone: member 0 holds players 3 and 6.
  auto [alone, ae] = f.ask<replies_t>(set[0], find_atom::value, batch);
  REQUIRE(alone);
  REQUIRE(alone->size() == 7);
  CHECK((*alone)[0].best_candidate_id == 3);
  CHECK((*alone)[2].best_candidate_id == 6);
  CHECK((*alone)[1].best_candidate_id != 1);  // held by member 1
  // Empty: an empty answer. Over the limit: refused, naming it.
  auto [empty, ee] = f.ask<replies_t>(client, find_atom::value, batch_t{});
  REQUIRE(empty);
  CHECK(empty->empty());
  const batch_t huge(max_batch_queries + 1, query_at(500));
  for (const auto& h : {iface::matchmaker{set[1]}}) {
    auto [r, err] = f.ask<replies_t>(h, find_atom::value, huge);
    CHECK_FALSE(r);
    CHECK(error_code_of(err) == errc::invalid_argument);
    CHECK(f.sys().render(err).find("at most 4096") != std::string::npos);
  }
  auto [r, err] = f.ask<replies_t>(client, find_atom::value, huge);
  CHECK_FALSE(r);
  CHECK(error_code_of(err) == errc::invalid_argument);
  for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
}

TEST_CASE("a member that never answers costs the caller its own timeout, not a hang", "[actors]") {
  test::actor_fixture f;
  iface::matchmaker silent = f.sys().spawn(silent_matchmaker);
  set_router<generic_profile> router({silent}, 1);
  auto client = spawn_client<generic_profile>(f.sys(), std::vector<iface::matchmaker>{silent},
                                              std::uint64_t{1});
  caf::error via_client;
  f.sys().spawn([&](caf::event_based_actor* self) {
    self->request(client, 250ms, find_atom::value, query_at(500))
        .then([](match_reply<model>&) {}, [&](caf::error& e) { via_client = e; });
  });
  auto [r, e] = ask_set(f, router, query_at(500), 250ms);
  CHECK_FALSE(r);
  CHECK_FALSE(e);  // still waiting
  f.advance(250ms);
  CHECK(via_client == caf::sec::request_timeout);
  caf::anon_send_exit(silent, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
}

TEST_CASE("the query bridge answers each callback once: the set's answer, a timeout or its stop",
          "[actors]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  auto set = spawn_instance_set<generic_profile>(f.sys(), 3, base);
  f.run();
  caf::anon_send(set[1], update_atom::value, player_update<model>{4, {test::model(4, 900)}});
  f.run();
  using answer = caf::expected<match_reply<model>>;
  struct answers {
    std::vector<answer> got;
    auto callback() {
      return [this](answer a) { got.push_back(std::move(a)); };
    }
  };
  {
    query_bridge<generic_profile> bridge(f.sys(), set, 1000ms, 3);
    answers a;
    for (int q = 0; q < 6; ++q) bridge.find(query_at(905), a.callback());
    bridge.find(query_at(5000), a.callback());
    f.run();
    REQUIRE(a.got.size() == 7);
    for (int q = 0; q < 6; ++q) {
      REQUIRE(a.got[q]);
      CHECK(a.got[q]->best_candidate_id == 4);
    }
    REQUIRE(a.got[6]);
    CHECK(a.got[6]->type == match_type::none_found);
  }
  // A set that never answers: each query times out on the bridge's own sweep,
  // after its timeout and before 1.125 × it, once.
  iface::matchmaker silent = f.sys().spawn(silent_matchmaker);
  answers late;
  {
    query_bridge<generic_profile> bridge(f.sys(), {silent}, 800ms, 3);
    bridge.find(query_at(500), late.callback());
    f.run();
    f.advance(400ms);
    bridge.find(query_at(500), late.callback());
    f.run();
    f.advance(399ms);
    CHECK(late.got.empty());
    f.advance(100ms);
    REQUIRE(late.got.size() == 1);
    CHECK(late.got[0].error() == caf::sec::request_timeout);
    f.advance(500ms);
    REQUIRE(late.got.size() == 2);
    f.advance(2s);
    CHECK(late.got.size() == 2);  // nothing twice
    // A query still owed when the bridge stops is answered with an error.
    bridge.find(query_at(500), late.callback());
    f.run();
  }
  f.run();
  REQUIRE(late.got.size() == 3);
  CHECK(late.got[2].error() == caf::sec::request_receiver_down);
  caf::anon_send_exit(silent, caf::exit_reason::user_shutdown);
  for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

TEST_CASE("with fake opponents on a real opponent on any instance beats a bot", "[actors]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  base.opts.enable_fake_opponents = true;
  auto set = spawn_instance_set<generic_profile>(f.sys(), 2, base);
  auto client = spawn_client<generic_profile>(f.sys(), set, std::uint64_t{11});
  f.run();
  // The one real defender lives on mm-0 (even id).
  caf::anon_send(client, update_atom::value, player_update<model>{4, {test::model(4, 500)}});
  f.run();
  for (player_id attacker = 1001; attacker <= 1030; ++attacker) {
    auto [r, e] = f.ask<match_reply<model>>(client, find_atom::value, query_at(505, attacker));
    REQUIRE(r);
    CHECK(r->type == match_type::success);
    CHECK(r->best_candidate_id == 4);
  }
  auto totals = [&] {
    std::pair<std::uint64_t, std::uint64_t> fakes_and_none{0, 0};
    for (auto& h : set) {
      auto [info, e] = f.ask<instance_info>(h, info_atom::value);
      REQUIRE(info);
      fakes_and_none.first += info->engine.stats.queries_fake;
      fakes_and_none.second += info->engine.stats.queries_none_found;
    }
    return fakes_and_none;
  };
  const auto before = totals();
  CHECK(before.first == 0);
  // Nobody near: one fake, made once at the end of the fallback.
  for (int q = 0; q < 10; ++q) {
    auto [r, e] = f.ask<match_reply<model>>(client, find_atom::value, query_at(9000));
    REQUIRE(r);
    CHECK(r->type == match_type::fake_opponent);
  }
  const auto after = totals();
  CHECK(after.first == 10);
  CHECK(after.second - before.second == 10);  // the first instance of each fallback
  // The client passed each query on once; the set counted each answer once,
  // as the game saw it.
  auto [stats, serr] = f.ask<client_stats>(client, stats_atom::value);
  REQUIRE(stats);
  CHECK(stats->queries == 40);
  CHECK(stats->updates == 1);
  const auto answers = set_answers(f, set);
  CHECK(answers.success == 30);
  CHECK(answers.fake_opponent == 10);
  CHECK(answers.none_found == 0);
  // A request that allows no fake gets NoneFound from the whole set.
  auto req = query_at(9000);
  req.allow_fake_opponent = false;
  auto [r, e] = f.ask<match_reply<model>>(client, find_atom::value, req);
  REQUIRE(r);
  CHECK(r->type == match_type::none_found);
  for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
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
