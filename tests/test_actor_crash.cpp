// Instances that crash: the supervisor's restarts and backoff, and routing
// past a member that is down.
#include <catch2/catch.hpp>

#include "actor_fixture.hpp"
#include "actor_test_support.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/testing/temp_dir.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using mm::test::config_for;
using mm::test::fill_table;
using mm::test::query_at;

namespace {
using iface = interfaces<generic_profile>;
using model = generic_model;

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
// Instance "mm" over the table at `path`, its worker on the test scheduler.
template <class Profile>
instance_config<Profile> instance_on(const std::string& path) {
  instance_config<Profile> c;
  c.id = "mm";
  c.opts = config_for(path).opts;
  c.database.path = path;
  c.detached_worker = false;
  return c;
}

// Instance "mm" over a table of 300 players at `path`, a leased shard of a
// node whose serving deadline stays open.
instance_config<generic_profile> leased_on(const std::string& path) {
  fill_table(path, 300);
  auto c = instance_on<generic_profile>(path);
  auto gate = std::make_shared<cluster::serving_deadline>();
  gate->extend_to(cluster::serving_deadline::clock::now() + 24h);
  c.lease_gate = gate;
  return c;
}
}  // namespace

TEST_CASE("a crashed instance restarts from its snapshot, backing off", "[actors]") {
  using civ = interfaces<crashing_profile>;
  test::temp_dir dir;
  const auto path = dir.file("mm.db");
  fill_table(path, 3000);
  test::actor_fixture f;
  const auto c = instance_on<crashing_profile>(path);
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

// (Were the instance left running, the actor system could not stop at the
// end of the test: it would wait for it, and ctest's timeout would fail it.)
TEST_CASE("a supervisor's instance ends with it, also when it is killed", "[actors]") {
  test::temp_dir dir;
  const auto path = dir.file("mm.db");
  fill_table(path, 300);
  test::actor_fixture f;
  const auto c = instance_on<generic_profile>(path);
  const auto running = [&] { return f.sys().registry().running(); };
  for (const auto reason : {caf::exit_reason::kill, caf::exit_reason::user_shutdown}) {
    f.run();
    const std::size_t before = running();
    iface::matchmaker sup = f.sys().spawn(supervisor_actor<generic_profile>, c, restart_backoff{});
    f.run();
    REQUIRE(f.ask<instance_info>(sup, info_atom::value).first);  // its instance serves
    CHECK(running() >= before + 2);                              // the supervisor and its instance
    caf::anon_send_exit(sup, reason);
    f.run();
    INFO("exit reason " << f.sys().render(caf::make_error(reason)));
    CHECK(running() == before);  // neither is left
  }
}

// A node that lost its heartbeat stops its shards and joins again as a new
// incarnation, which may be given the same shard while the last instance
// still writes its final snapshot. The lease waits for that instance
// (refused at once, it would cost the take a whole round of the agent), but
// not past lease_wait_limit, and not after a release. (A SQLite file takes
// no fence: the instance logs that and starts empty, which is all this test
// of the supervisor needs.)
TEST_CASE("a lease taken while the last instance stops starts once it is down",
          "[actors][cluster]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto sup = f.sys().spawn(supervisor_actor<generic_profile>, leased_on(dir.file("mm.db")),
                           restart_backoff{});
  const auto served = [&] {
    auto [info, e] = f.ask<instance_info>(sup, info_atom::value);
    if (!info) CHECK(error_code_of(e) == errc::not_owned_here);
    return info.has_value();
  };
  const auto lease = [&](std::uint64_t epoch) {
    return f.request<bool>(sup, lease_atom::value, "n#" + std::to_string(epoch), epoch);
  };
  CHECK_FALSE(served());  // dormant until leased
  CHECK(f.ask<bool>(sup, lease_atom::value, std::string("n#1"), std::uint64_t{1}).first);
  CHECK(served());

  // Released and leased again before the instance has stopped.
  auto released = f.request<bool>(sup, lease_atom::value, hand_over_atom::value);
  auto taken = lease(2);
  f.run_except("mm.instance");
  CHECK_FALSE(released->first);
  CHECK_FALSE(taken->first);
  CHECK_FALSE(taken->second);  // waiting, not refused
  f.run();                     // the instance stops: the new lease starts
  CHECK(released->first == std::optional<bool>(true));
  CHECK(taken->first == std::optional<bool>(true));
  CHECK(served());

  // An instance that does not stop in time: the lease is refused, and the
  // shard stays dormant once the instance is down.
  released = f.request<bool>(sup, lease_atom::value, hand_over_atom::value);
  taken = lease(3);
  f.run_except("mm.instance");
  f.sched().clock().advance_time(lease_wait_limit);
  f.run_except("mm.instance");
  CHECK_FALSE(taken->first);
  CHECK(error_code_of(taken->second) == errc::conflict);
  f.run();
  CHECK(released->first == std::optional<bool>(true));
  CHECK_FALSE(served());

  // A release while a lease waits: the lease is refused.
  CHECK(f.ask<bool>(sup, lease_atom::value, std::string("n#4"), std::uint64_t{4}).first);
  released = f.request<bool>(sup, lease_atom::value, hand_over_atom::value);
  taken = lease(5);
  f.run_except("mm.instance");
  auto again = f.request<bool>(sup, lease_atom::value, hand_over_atom::value);
  f.run();
  CHECK(error_code_of(taken->second) == errc::conflict);
  CHECK(error_code_of(again->second) == errc::conflict);  // already releasing
  CHECK(released->first == std::optional<bool>(true));
  CHECK_FALSE(served());
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
}

// A lost lease (the node's heartbeat lapsed) stops the instance without its
// last snapshot: that write would wait on a database the node has lost, and
// the node's next incarnation retaking the shard would wait for it. A
// hand-over writes it, for the next owner. The database worker is held back
// here: a lost lease's stop is answered without it, a hand-over's only once
// the worker has answered the write. (SQLite refuses a fenced write, which
// is logged; the attempt is what this test of the supervisor needs.)
TEST_CASE("a lost lease stops its instance without the last snapshot, a hand-over writes it",
          "[actors][cluster]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto sup = f.sys().spawn(supervisor_actor<generic_profile>, leased_on(dir.file("mm.db")),
                           restart_backoff{});
  const auto served = [&] { return f.ask<instance_info>(sup, info_atom::value).first.has_value(); };

  CHECK(f.ask<bool>(sup, lease_atom::value, std::string("n#1"), std::uint64_t{1}).first);
  REQUIRE(served());
  auto lost = f.request<bool>(sup, lease_atom::value, lease_lost_atom::value);
  f.run_except("mm.db_worker");
  CHECK(lost->first == std::optional<bool>(true));  // the instance is down, nothing written
  f.run();
  CHECK_FALSE(served());

  CHECK(f.ask<bool>(sup, lease_atom::value, std::string("n#2"), std::uint64_t{2}).first);
  REQUIRE(served());
  auto handed = f.request<bool>(sup, lease_atom::value, hand_over_atom::value);
  f.run_except("mm.db_worker");
  CHECK_FALSE(handed->first);  // waits for its last snapshot's write
  f.run();
  CHECK(handed->first == std::optional<bool>(true));
  CHECK_FALSE(served());
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
}

TEST_CASE("backoff doubles up to its maximum", "[actors]") {
  restart_backoff b{100ms, 1000ms, 60s};
  CHECK(backoff_delay(b, 1) == 100ms);
  CHECK(backoff_delay(b, 2) == 200ms);
  CHECK(backoff_delay(b, 4) == 800ms);
  CHECK(backoff_delay(b, 5) == 1000ms);
  CHECK(backoff_delay(b, 50) == 1000ms);
}
