// Nodes of a cluster on the deterministic scheduler: a node running part of
// a set, and the game's cluster client over several nodes. (Apart from
// test_actors.cpp, so that the two compile in parallel.)
#include <catch2/catch.hpp>

#include "actor_fixture.hpp"
#include "actor_test_support.hpp"
#include "mm/actors/cluster_client.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/testing/temp_dir.hpp"

using namespace mm;
using namespace mm::actors;
using mm::test::config_for;
using mm::test::query_at;

namespace {
using iface = interfaces<generic_profile>;
using model = generic_model;
}  // namespace

TEST_CASE("a node running part of a set owns only its shards' players", "[actors][cluster]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  // Instances 3 and 1 of a set of 4: the other two run on another node.
  const set_part part{4, {3, 1}};
  auto set = spawn_instance_part<generic_profile>(f.sys(), part, base);
  REQUIRE(set.size() == 2);
  auto client = spawn_client<generic_profile>(f.sys(), set, std::uint64_t{7}, part);
  set_router<generic_profile> router(set, 13, part);
  f.run();
  for (player_id id = 1; id <= 40; ++id) {
    const auto* owner = router.owner_of(id);
    if (id % 4 == 3)
      CHECK((owner && *owner == set[0]));
    else if (id % 4 == 1)
      CHECK((owner && *owner == set[1]));
    else
      CHECK(owner == nullptr);
    caf::anon_send(client, update_atom::value, player_update<model>{id, {test::model(id, 100)}});
  }
  f.run();
  // Each member holds its own shard's players, with the whole set's ids.
  for (player_id id = 1; id <= 40; ++id) {
    auto [p0, e0] = f.ask<player_info>(set[0], player_atom::value, id);
    auto [p1, e1] = f.ask<player_info>(set[1], player_atom::value, id);
    REQUIRE(p0);
    REQUIRE(p1);
    CHECK(p0->participating == (id % 4 == 3));
    CHECK(p1->participating == (id % 4 == 1));
  }
  auto [info, ie] = f.ask<instance_info>(set[0], info_atom::value);
  REQUIRE(info);
  CHECK(info->engine.name == base.id + "-3");
  // The other node's players: updates dropped and counted, enrolment refused.
  auto [stats, se] = f.ask<client_stats>(client, stats_atom::value);
  REQUIRE(stats);
  CHECK(stats->updates == 40);
  CHECK(stats->updates_elsewhere == 20);
  auto [enrolled, ee] = f.ask<bool>(client, enroll_atom::value, player_id{2});
  CHECK_FALSE(enrolled);
  CHECK(ee.code() == static_cast<std::uint8_t>(errc::not_owned_here));
  // A query goes round this node's members: the player near 900 is found
  // whichever member is asked first.
  caf::anon_send(client, update_atom::value, player_update<model>{5, {test::model(5, 900)}});
  f.run();
  for (int q = 0; q < 6; ++q) {
    auto [r, e] = f.ask<match_reply<model>>(client, find_atom::value, query_at(905));
    REQUIRE(r);
    CHECK(r->best_candidate_id == 5);
  }
  for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
}

TEST_CASE("a cluster client searches every node and sends updates to the shard's node",
          "[actors][cluster]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  base.opts.enable_fake_opponents = true;
  // Two nodes, each running one instance of a set of two, each with its own
  // client (what a node publishes on its actor port).
  std::vector<iface::client> node_clients;
  std::vector<std::vector<iface::matchmaker>> node_sets;
  std::vector<cluster_node<generic_profile>> nodes;
  for (std::uint32_t k = 0; k < 2; ++k) {
    const set_part part{2, {k}};
    node_sets.push_back(spawn_instance_part<generic_profile>(f.sys(), part, base));
    auto c = spawn_client<generic_profile>(f.sys(), node_sets.back(), std::uint64_t{k + 1}, part);
    node_clients.push_back(caf::actor_cast<iface::client>(c));
    nodes.push_back({node_clients.back(), {k}});
  }
  auto cluster =
      spawn_cluster_client<generic_profile>(f.sys(), nodes, 2, std::chrono::milliseconds(1000), 5);
  f.run();
  for (player_id id = 1; id <= 20; ++id)
    caf::anon_send(cluster, update_atom::value, player_update<model>{id, {test::model(id, 100)}});
  // Only node 1 holds a player near MMR 900.
  caf::anon_send(cluster, update_atom::value, player_update<model>{7, {test::model(7, 900)}});
  f.run();
  for (std::uint32_t k = 0; k < 2; ++k)
    for (player_id id = 1; id <= 20; ++id) {
      auto [p, e] = f.ask<player_info>(node_sets[k][0], player_atom::value, id);
      REQUIRE(p);
      CHECK(p->participating == (id % 2 == k));
    }
  auto node_queries = [&](std::size_t k) {
    auto [s, e] = f.ask<client_stats>(caf::actor_cast<iface::routing_client>(node_clients[k]),
                                      stats_atom::value);
    REQUIRE(s);
    return s->queries;
  };
  // Found wherever the query starts; a query that starts at node 0 goes on to
  // node 1, and node 0's fake opponent is not taken on the way.
  for (int q = 0; q < 12; ++q) {
    auto req = query_at(905);
    req.allow_fake_opponent = true;
    auto [r, e] = f.ask<match_reply<model>>(cluster, find_atom::value, req);
    REQUIRE(r);
    CHECK(r->type == match_type::success);
    CHECK(r->best_candidate_id == 7);
  }
  CHECK(node_queries(1) == 12);
  const auto started_at_0 = node_queries(0);
  CHECK(started_at_0 > 0);
  CHECK(started_at_0 < 12);
  // Nobody near 5000: NoneFound after both nodes; a fake only when wished.
  auto no_fake = query_at(5000);
  no_fake.allow_fake_opponent = false;
  auto [none, ne] = f.ask<match_reply<model>>(cluster, find_atom::value, no_fake);
  REQUIRE(none);
  CHECK(none->type == match_type::none_found);
  CHECK(node_queries(0) + node_queries(1) == started_at_0 + 12 + 2);
  auto fake_wish = query_at(5000);
  fake_wish.allow_fake_opponent = true;
  auto [fake, fe] = f.ask<match_reply<model>>(cluster, find_atom::value, fake_wish);
  REQUIRE(fake);
  CHECK(fake->type == match_type::fake_opponent);
  // A node that is gone is passed over: the other one answers.
  caf::anon_send_exit(node_clients[1], caf::exit_reason::user_shutdown);
  f.run();
  for (int q = 0; q < 6; ++q) {
    auto [r, e] = f.ask<match_reply<model>>(cluster, find_atom::value, query_at(105));
    REQUIRE(r);
    CHECK(r->type == match_type::success);
    CHECK(r->best_candidate_id % 2 == 0);
  }
  // What it ran is nobody's now (until a node says it runs it): the updates
  // of its players are counted, not sent into the void.
  auto [before_gone, bg] = f.ask<client_stats>(cluster, stats_atom::value);
  REQUIRE(before_gone);
  caf::anon_send(cluster, update_atom::value, player_update<model>{9, {test::model(9, 100)}});
  f.run();
  auto [after_gone, ag] = f.ask<client_stats>(cluster, stats_atom::value);
  REQUIRE(after_gone);
  CHECK(after_gone->updates_elsewhere == before_gone->updates_elsewhere + 1);
  // A shard no node runs: refused by name, its updates counted.
  auto partial = spawn_cluster_client<generic_profile>(f.sys(), {nodes[0]}, 2);
  auto [enrolled, ee] = f.ask<bool>(partial, enroll_atom::value, player_id{3});
  CHECK_FALSE(enrolled);
  CHECK(ee.code() == static_cast<std::uint8_t>(errc::not_owned_here));
  caf::anon_send(partial, update_atom::value, player_update<model>{3, {test::model(3, 100)}});
  f.run();
  auto [ps, pe] = f.ask<client_stats>(partial, stats_atom::value);
  REQUIRE(ps);
  CHECK(ps->updates_elsewhere == 1);
  for (auto& set : node_sets)
    for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(node_clients[0], caf::exit_reason::user_shutdown);
  caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(partial, caf::exit_reason::user_shutdown);
}
