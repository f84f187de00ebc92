// Queries answered on the caller's thread through the instances' engine
// slots (engine_slot.hpp), and through the actors where a slot is busy or
// closed: the same answers either way, each callback once.
#include <catch2/catch.hpp>
#include <future>
#include <thread>

#include "actor_fixture.hpp"
#include "actor_test_support.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/actors/query_bridge.hpp"
#include "mm/testing/temp_dir.hpp"
#include "test_support.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using mm::test::config_for;
using mm::test::query_at;

namespace {
using model = generic_model;
using slot_type = engine_slot<generic_profile>;
using answer = caf::expected<match_reply<model>>;

// Holds a slot's mutex on another thread (the recursive mutex would let this
// thread in) until release() returns.
class holder {
 public:
  explicit holder(slot_type& slot) {
    std::promise<void> held;
    auto is_held = held.get_future();
    thread_ = std::thread([&slot, held = std::move(held), go = go_.get_future()]() mutable {
      const auto lock = slot.lock();
      held.set_value();
      go.wait();
    });
    is_held.wait();
  }
  void release() {
    go_.set_value();
    thread_.join();
  }

 private:
  std::promise<void> go_;
  std::thread thread_;
};

std::uint64_t routed_success(test::actor_fixture& f,
                             const std::vector<interfaces<generic_profile>::matchmaker>& set) {
  std::uint64_t n = 0;
  for (const auto& h : set) {
    auto [info, e] = f.ask<instance_info>(h, info_atom::value);
    REQUIRE(info);
    n += info->instance.routed.success;
  }
  return n;
}
}  // namespace

TEST_CASE("an engine slot answers other threads only while open, and lets go of a retired engine",
          "[actors]") {
  test::temp_dir dir;
  const auto base = config_for(dir.file("mm.db"));
  slot_type slot;
  auto eng = std::make_unique<engine<generic_profile>>(base.opts, base.profile);
  const model m = test::model(4, 900);
  eng->update(4, std::span<const model>(&m, 1));
  auto lease = std::make_shared<cluster::serving_deadline>();
  const std::uint64_t gen = slot.install(std::move(eng), lease);
  lease->extend_to(cluster::serving_deadline::clock::now() + 1h);
  CHECK_FALSE(slot.try_find(query_at(905), true));  // not restored yet
  slot.open(gen);
  auto r = slot.try_find(query_at(905), true);
  REQUIRE(r);
  CHECK(r->best_candidate_id == 4);
  // A query that finds none is counted only where it is the last answer.
  REQUIRE(slot.try_find(query_at(5000), false));
  CHECK(slot.routed().none_found == 0);
  REQUIRE(slot.try_find(query_at(5000), true));
  CHECK(slot.routed().none_found == 1);
  CHECK(slot.routed().success == 1);
  // Busy: the caller is told to ask the actor, and is not held up.
  {
    holder busy(slot);
    CHECK_FALSE(slot.try_find(query_at(905), true));
    busy.release();
  }
  CHECK(slot.try_find(query_at(905), true));
  // The node may not serve the shard now.
  lease->close();
  CHECK_FALSE(slot.try_find(query_at(905), true));
  lease->extend_to(cluster::serving_deadline::clock::now() + 1h);
  // A stopping run closes; a later run's install makes the old one's calls
  // no-ops.
  slot.close(gen);
  CHECK_FALSE(slot.try_find(query_at(905), true));
  auto next = std::make_unique<engine<generic_profile>>(base.opts, base.profile);
  const std::uint64_t gen2 = slot.install(std::move(next), nullptr);
  slot.open(gen);
  CHECK_FALSE(slot.try_find(query_at(905), true));
  slot.open(gen2);
  auto none = slot.try_find(query_at(905), true);  // the new engine is empty
  REQUIRE(none);
  CHECK(none->type == match_type::none_found);
  slot.retire(gen);
  CHECK(slot.try_find(query_at(905), true));
  slot.retire(gen2);
  CHECK_FALSE(slot.try_find(query_at(905), true));
}

TEST_CASE("the query bridge answers single queries on the caller's thread, else through the actors",
          "[actors]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  base.opts.enable_fake_opponents = true;
  auto slots = std::make_shared<engine_slots<generic_profile>>(3);
  base.slots = slots;
  auto set = spawn_instance_set<generic_profile>(f.sys(), 3, base);
  f.run();
  // Player 4 is instance 1's (4 mod 3): the only one that can answer 905.
  caf::anon_send(set[1], update_atom::value, player_update<model>{4, {test::model(4, 900)}});
  f.run();
  query_bridge<generic_profile> bridge(f.sys(), set, 1000ms, 7, slots->slots);
  std::vector<answer> got;
  const auto callback = [&got](answer a) { got.push_back(std::move(a)); };
  const auto fake_allowed = [](float mmr) {
    auto r = query_at(mmr);
    r.allow_fake_opponent = true;
    return r;
  };

  SECTION("free slots: answered before find() returns, from any first member") {
    for (int q = 0; q < 30; ++q) {
      bridge.find(fake_allowed(905), callback);
      REQUIRE(got.size() == static_cast<std::size_t>(q + 1));  // on this thread, already
      REQUIRE(got.back());
      // A fake only from the last member asked: the real one always wins.
      CHECK(got.back()->type == match_type::success);
      CHECK(got.back()->best_candidate_id == 4);
    }
    auto no_fake = query_at(5000);  // nobody near, no fakes wanted
    no_fake.allow_fake_opponent = false;
    bridge.find(no_fake, callback);
    REQUIRE(got.size() == 31);
    REQUIRE(got.back());
    CHECK(got.back()->type == match_type::none_found);
    bridge.find(fake_allowed(5000), callback);
    REQUIRE(got.size() == 32);
    REQUIRE(got.back());
    CHECK(got.back()->type == match_type::fake_opponent);
    CHECK(bridge.answered_inline() == 32);
    f.run();
    CHECK(got.size() == 32);              // nothing twice
    CHECK(routed_success(f, set) == 30);  // counted by the instance that answered
  }

  SECTION("a busy slot: the query goes on through the actor from that member") {
    holder busy(*slots->slots[1]);
    for (int q = 0; q < 12; ++q) bridge.find(fake_allowed(905), callback);
    CHECK(got.empty());  // every route meets member 1, busy
    busy.release();      // before the actors run: their instance takes the mutex
    f.run();
    REQUIRE(got.size() == 12);
    for (const auto& a : got) {
      REQUIRE(a);
      CHECK(a->type == match_type::success);
      CHECK(a->best_candidate_id == 4);
    }
    CHECK(bridge.answered_inline() == 0);
    got.clear();
    bridge.find(query_at(905), callback);
    CHECK(got.size() == 1);  // free again: answered here
    CHECK(bridge.answered_inline() == 1);
  }

  SECTION("a stopped instance's slot is closed: its queries go through the actors") {
    caf::anon_send_exit(set[0], caf::exit_reason::user_shutdown);
    f.run();
    for (int q = 0; q < 12; ++q) bridge.find(fake_allowed(905), callback);
    const std::size_t here = got.size();
    CHECK(here < 12);  // the routes that meet member 0 before member 1
    f.run();
    REQUIRE(got.size() == 12);
    for (const auto& a : got) {
      REQUIRE(a);
      CHECK(a->best_candidate_id == 4);
    }
  }
  for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  f.run();
}

TEST_CASE("single queries from several threads while the instances change: each answered once",
          "[actors]") {
  test::temp_dir dir;
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};  // real threads: the slots' mutexes are contended
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  base.opts.enable_fake_opponents = true;
  auto slots = std::make_shared<engine_slots<generic_profile>>(2);
  base.slots = slots;
  auto set = spawn_instance_set<generic_profile>(sys, 2, base);
  constexpr int askers = 3, per_asker = 4000, total = askers * per_asker;
  constexpr player_id players = 2000;
  std::atomic<int> answered{0}, wrong{0};
  std::promise<void> all_answered;
  {
    query_bridge<generic_profile> bridge(sys, set, 10'000ms, 5, slots->slots);
    // The instances take players, lose some, rebalance and are cleared while
    // the queries come: every one of them changes an engine under its slot's
    // mutex. Bounded: a changer that outpaces the instances queues messages.
    std::atomic<bool> stop{false};
    std::thread changer([&] {
      rng r(99);
      for (int k = 0; k < 200'000 && !stop; ++k) {
        const auto id = static_cast<player_id>(1 + r.below(players));
        const auto member = set[id % 2];
        caf::anon_send(member, update_atom::value,
                       player_update<model>{id, {test::model(id, 500 + r.below(2000))}});
        if (k % 97 == 0) caf::anon_send(member, remove_atom::value, id);
        if (k % 5000 == 0) caf::anon_send(member, rebalance_atom::value);
        if (k % 20'000 == 10'000) caf::anon_send(member, clear_atom::value);
      }
    });
    // Once both slots answer here (their instances restored), the askers go.
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    while (bridge.answered_inline() < 10 && std::chrono::steady_clock::now() < give_up) {
      bridge.find(query_at(1000), [](answer) {});
      std::this_thread::yield();
    }
    const std::uint64_t warm = bridge.answered_inline();
    REQUIRE(warm >= 10);
    std::vector<std::thread> threads;
    for (int t = 0; t < askers; ++t)
      threads.emplace_back([&, t] {
        rng r(static_cast<std::uint64_t>(t) + 1);
        for (int i = 0; i < per_asker; ++i) {
          auto q = query_at(static_cast<float>(500 + r.below(2000)),
                            1'000'000 + static_cast<player_id>(t * per_asker + i));
          const bool fake_allowed = i % 2 == 0;
          q.allow_fake_opponent = fake_allowed;
          bridge.find(q, [&, fake_allowed](answer a) {
            const bool ok = a && a->type != match_type::invalid_request &&
                            (a->type != match_type::success ||
                             (a->best_candidate_id >= 1 && a->best_candidate_id <= players)) &&
                            (fake_allowed || a->type != match_type::fake_opponent);
            if (!ok) ++wrong;
            if (++answered == total) all_answered.set_value();
          });
        }
      });
    for (auto& t : threads) t.join();
    stop = true;
    changer.join();
    REQUIRE(all_answered.get_future().wait_for(60s) == std::future_status::ready);
    CHECK(wrong == 0);
    CHECK(answered == total);  // once each: a second call would count past it
    // Some on the askers' threads, the rest (a slot busy) through the
    // actors: how many of each depends on the timing, not checked.
    CHECK(bridge.answered_inline() - warm <= static_cast<std::uint64_t>(total));
    // After the storm no mutex is left held and no slot closed: once the
    // instances have taken every change (an answer to a later message),
    // queries are answered here again.
    caf::scoped_actor self{sys};
    for (const auto& h : set)
      self->request(h, 10s, info_atom::value)
          .receive([](const instance_info&) {}, [](caf::error& e) { FAIL(to_string(e)); });
    const std::uint64_t before = bridge.answered_inline();
    for (int k = 0; k < 100; ++k) bridge.find(query_at(1000), [](answer) {});
    CHECK(bridge.answered_inline() - before >= 1);
  }
  for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}
