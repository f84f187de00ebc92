// Routing through a set of instances: updates by shard, queries on through
// the set, batches, members that never answer, the query bridge.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

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
using mm::test::fill_table;
using mm::test::query_at;

namespace {
using iface = interfaces<generic_profile>;
using model = generic_model;

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
      [](update_atom, const std::vector<player_update<model>>&) {},
      [=](enroll_atom, player_id) -> caf::result<bool> { return never(); },
      [=](remove_atom, player_id) -> caf::result<bool> { return never(); },
      [=](info_atom) -> caf::result<instance_info> { return never(); },
      [=](player_atom, player_id) -> caf::result<player_info> { return never(); },
      [=](inspect_atom, std::uint32_t, std::uint32_t,
          std::uint32_t) -> caf::result<std::vector<model>> { return never(); },
      [=](top_atom, std::uint32_t) -> caf::result<std::vector<model>> { return never(); },
      [=](rebalance_atom) -> caf::result<rebalance_report> { return never(); },
      [=](clear_atom) -> caf::result<bool> { return never(); },
      [=](configure_atom, profile_change<generic_profile>&) -> caf::result<bool> {
        return never();
      },
      [=](explain_atom, const match_request<generic_query>&,
          std::uint32_t) -> caf::result<query_explanation> { return never(); },
  };
}

// A matchmaker that records the messages it gets: it finds the attacker
// itself as the candidate when `finds`, else none.
struct recorded {
  bool finds = false;
  std::size_t singles = 0;
  std::vector<std::size_t> batches;  // sizes
  std::vector<bool> fake_allowed;    // per query seen, in order
};
struct recording_state {
  recording_state() = default;
  std::shared_ptr<recorded> rec;
};
iface::matchmaker::behavior_type recording_matchmaker(
    iface::matchmaker::stateful_pointer<recording_state> self, std::shared_ptr<recorded> rec) {
  self->state.rec = rec;
  auto never = [] { return caf::make_error(caf::sec::unexpected_message); };
  auto one = [rec](const match_request<generic_query>& r) {
    rec->fake_allowed.push_back(r.allow_fake_opponent);
    match_reply<model> out;
    if (rec->finds) {
      out.type = match_type::success;
      out.best_candidate_id = r.query.attacker;
    }
    return out;
  };
  return {
      [=](find_atom, const match_request<generic_query>& r) {
        ++rec->singles;
        return one(r);
      },
      [=](find_atom, const std::vector<match_request<generic_query>>& batch) {
        rec->batches.push_back(batch.size());
        std::vector<match_reply<model>> out;
        for (const auto& r : batch) out.push_back(one(r));
        return out;
      },
      [=](find_atom, const match_request<generic_query>& r, set_route) {
        ++rec->singles;
        return one(r);
      },
      [](update_atom, const player_update<model>&) {},
      [](update_atom, const std::vector<player_update<model>>&) {},
      [=](enroll_atom, player_id) -> caf::result<bool> { return never(); },
      [=](remove_atom, player_id) -> caf::result<bool> { return never(); },
      [=](info_atom) -> caf::result<instance_info> { return never(); },
      [=](player_atom, player_id) -> caf::result<player_info> { return never(); },
      [=](inspect_atom, std::uint32_t, std::uint32_t,
          std::uint32_t) -> caf::result<std::vector<model>> { return never(); },
      [=](top_atom, std::uint32_t) -> caf::result<std::vector<model>> { return never(); },
      [=](rebalance_atom) -> caf::result<rebalance_report> { return never(); },
      [=](clear_atom) -> caf::result<bool> { return never(); },
      [=](configure_atom, profile_change<generic_profile>&) -> caf::result<bool> {
        return never();
      },
      [=](explain_atom, const match_request<generic_query>&,
          std::uint32_t) -> caf::result<query_explanation> { return never(); },
  };
}
}  // namespace

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

TEST_CASE("the query bridge sends the queries given before it takes them as one batch",
          "[actors]") {
  test::actor_fixture f;
  auto none = std::make_shared<recorded>();
  auto finder = std::make_shared<recorded>();
  finder->finds = true;
  std::vector<iface::matchmaker> set{f.sys().spawn(recording_matchmaker, none),
                                     f.sys().spawn(recording_matchmaker, finder)};
  using answer = caf::expected<match_reply<model>>;
  std::map<player_id, std::vector<answer>> got;  // by attacker
  auto callback = [&](player_id attacker) {
    return [&got, attacker](answer a) { got[attacker].push_back(std::move(a)); };
  };
  auto request = [](player_id attacker) {
    auto r = query_at(1000, attacker);
    r.allow_fake_opponent = true;
    return r;
  };
  const auto messages = [&] {
    return none->singles + none->batches.size() + finder->singles + finder->batches.size();
  };
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {  // either member first
    *none = recorded{};
    *finder = recorded{};
    finder->finds = true;
    got.clear();
    query_bridge<generic_profile> bridge(f.sys(), set, 1000ms, seed);
    // Ten single queries and a batch of three, all given before the bridge
    // runs: one batch of 13 through the set.
    for (player_id a = 1; a <= 10; ++a) bridge.find(request(a), callback(a));
    std::vector<match_request<generic_query>> three;
    std::vector<query_bridge<generic_profile>::callback> dones;
    for (player_id a = 11; a <= 13; ++a) {
      three.push_back(request(a));
      dones.push_back(callback(a));
    }
    bridge.find_many(std::move(three), std::move(dones));
    f.run();
    REQUIRE(got.size() == 13);
    for (const auto& [attacker, answers] : got) {
      REQUIRE(answers.size() == 1);  // once
      REQUIRE(answers[0]);
      CHECK(answers[0]->type == match_type::success);
      CHECK(answers[0]->best_candidate_id == attacker);  // its own answer, not a neighbour's
    }
    CHECK(none->singles + finder->singles == 0);
    CHECK(finder->batches == std::vector<std::size_t>{13});
    // Each counted once by the bridge, by its final answer (the members do
    // not count a batch's).
    CHECK(bridge.batch_answers().success == 13);
    CHECK(bridge.batch_answers().none_found == 0);
    CHECK(none->batches.size() <= 1);
    // Only the last member asked may make a fake opponent.
    const bool finder_first = none->batches.empty();
    for (const bool allowed : finder->fake_allowed) CHECK(allowed == !finder_first);
    for (const bool allowed : none->fake_allowed) CHECK_FALSE(allowed);
    // A lone query goes alone, as a game's would.
    const auto before = messages();
    bridge.find(request(14), callback(14));
    f.run();
    REQUIRE(got[14].size() == 1);
    CHECK(none->singles + finder->singles == 1);
    CHECK(messages() == before + 1);
    // More than max_batch_queries at once: batches of at most that many.
    *finder = recorded{};
    finder->finds = true;
    std::vector<match_request<generic_query>> many;
    std::vector<query_bridge<generic_profile>::callback> many_dones;
    std::size_t answered = 0;
    for (std::size_t k = 0; k < max_batch_queries + 10; ++k) {
      many.push_back(request(100 + k));
      many_dones.push_back([&answered](answer a) { answered += a ? 1 : 0; });
    }
    bridge.find_many(std::move(many), std::move(many_dones));
    f.run();
    CHECK(answered == max_batch_queries + 10);
    std::sort(finder->batches.begin(), finder->batches.end());
    CHECK(finder->batches == std::vector<std::size_t>{10, max_batch_queries});
  }
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
