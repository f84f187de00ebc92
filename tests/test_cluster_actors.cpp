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

// Two nodes as a game sees them: each runs one instance of a set of two,
// behind its own client (what a node publishes on its actor port).
struct two_nodes {
  std::vector<iface::client> clients;
  std::vector<std::vector<iface::matchmaker>> sets;
  std::vector<cluster_node<generic_profile>> nodes;

  two_nodes(test::actor_fixture& f, const actors::instance_config<generic_profile>& base) {
    for (std::uint32_t k = 0; k < 2; ++k) {
      const set_part part{2, {k}};
      sets.push_back(spawn_instance_part<generic_profile>(f.sys(), part, base));
      auto c = spawn_client<generic_profile>(f.sys(), sets.back(), std::uint64_t{k + 1}, part);
      clients.push_back(caf::actor_cast<iface::client>(c));
      nodes.push_back({clients.back(), {k}});
    }
  }
  std::uint64_t batch_answers(test::actor_fixture& f, std::size_t k) {
    auto [s, e] =
        f.ask<client_stats>(caf::actor_cast<iface::routing_client>(clients[k]), stats_atom::value);
    REQUIRE(s);
    const auto& b = s->batches;
    return b.success + b.none_found + b.fake_opponent + b.invalid_request;
  }
  void stop() {
    for (auto& set : sets)
      for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    for (auto& c : clients) caf::anon_send_exit(c, caf::exit_reason::user_shutdown);
  }
};
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
  two_nodes two(f, base);
  auto& node_clients = two.clients;
  auto& node_sets = two.sets;
  auto& nodes = two.nodes;
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

namespace {

// Sends every request at once from one actor; the replies (or errors) by index.
using answer = std::pair<std::optional<match_reply<model>>, caf::error>;
std::shared_ptr<std::vector<answer>> ask_all(test::actor_fixture& f,
                                             const iface::routing_client& to,
                                             const std::vector<match_request<generic_query>>& rs) {
  auto out = std::make_shared<std::vector<answer>>(rs.size());
  f.sys().spawn([out, to, rs](caf::event_based_actor* self) {
    for (std::size_t i = 0; i < rs.size(); ++i)
      self->request(to, std::chrono::seconds(24 * 3600), find_atom::value, rs[i])
          .then([out, i](match_reply<model>& r) { (*out)[i].first = std::move(r); },
                [out, i](caf::error& e) { (*out)[i].second = std::move(e); });
  });
  return out;
}

}  // namespace

TEST_CASE(
    "a cluster client sends the single queries that arrive while one is in flight as one "
    "batch, each answered as alone",
    "[actors][cluster][batching]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  base.opts.enable_fake_opponents = true;
  two_nodes cluster_nodes(f, base);
  auto cluster = spawn_cluster_client<generic_profile>(f.sys(), cluster_nodes.nodes, 2,
                                                       std::chrono::milliseconds(1000), 5);
  auto stop_all = caf::detail::make_scope_guard([&] {  // also when a REQUIRE leaves early
    cluster_nodes.stop();
    caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
  });
  f.run();
  // Players 1..20, far apart: each query below has one right answer, held
  // by one node (id mod 2), whichever node it starts at.
  for (player_id id = 1; id <= 20; ++id)
    caf::anon_send(cluster, update_atom::value,
                   player_update<model>{id, {test::model(id, 5000.0f * id)}});
  f.run();
  std::vector<match_request<generic_query>> reqs;
  for (player_id id = 1; id <= 20; ++id) reqs.push_back(query_at(5000.0f * id + 5));
  for (int k = 0; k < 6; ++k) {  // nobody near: NoneFound, or a fake when wished
    auto r = query_at(500'000.0f + 1000.0f * k);
    r.allow_fake_opponent = k % 2 == 0;
    reqs.push_back(r);
  }
  reqs.push_back(query_at(5005, invalid_player));  // InvalidRequest, alone as in a batch

  // The oracle: each query alone, nothing else in flight.
  std::vector<match_reply<model>> alone;
  for (const auto& r : reqs) {
    auto [got, e] = f.ask<match_reply<model>>(cluster, find_atom::value, r);
    REQUIRE(got);
    alone.push_back(*got);
  }
  auto [before, be] = f.ask<client_stats>(cluster, stats_atom::value);
  REQUIRE(before);
  CHECK(before->coalesced_batches == 0);  // one at a time: never batched
  const auto node_batches_before =
      cluster_nodes.batch_answers(f, 0) + cluster_nodes.batch_answers(f, 1);

  // All at once: the same answers, most of them sent in batches.
  auto together = ask_all(f, cluster, reqs);
  f.run();
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    INFO("query " << i);
    REQUIRE((*together)[i].first);
    const auto& got = *(*together)[i].first;
    CHECK(got.type == alone[i].type);
    if (got.type != match_type::fake_opponent)
      CHECK(got.best_candidate_id == alone[i].best_candidate_id);
    CHECK(got.error == alone[i].error);
  }
  CHECK(alone.back().type == match_type::invalid_request);
  auto [after, ae] = f.ask<client_stats>(cluster, stats_atom::value);
  REQUIRE(after);
  CHECK(after->coalesced_batches >= 1);
  CHECK(after->coalesced_queries >= reqs.size() / 2);
  CHECK(after->coalesced_queries > after->coalesced_batches);
  // The nodes answered those as batches.
  CHECK(cluster_nodes.batch_answers(f, 0) + cluster_nodes.batch_answers(f, 1) >=
        node_batches_before + after->coalesced_queries);

  // A node that goes away with queries queued for it: each query is still
  // answered, by the other node (nobody, or a fake opponent, for the players
  // only the gone node held).
  auto more = ask_all(f, cluster,
                      std::vector<match_request<generic_query>>(reqs.begin(), reqs.begin() + 20));
  caf::anon_send_exit(cluster_nodes.clients[1], caf::exit_reason::user_shutdown);
  f.run();
  for (std::size_t i = 0; i < 20; ++i) {
    INFO("query " << i);
    REQUIRE((*more)[i].first);
    const auto& got = *(*more)[i].first;
    const player_id id = i + 1;
    if (id % 2 == 0) {
      CHECK(got.type == match_type::success);
      CHECK(got.best_candidate_id == id);
    } else {  // only the gone node held it: never a wrong player
      CHECK(got.type != match_type::success);
    }
  }
}

namespace {

// A node that takes queries and never answers them (a process stopped
// with SIGSTOP, a connection that hangs).
iface::client::behavior_type silent_node(iface::client::pointer self) {
  return {
      [=](find_atom, match_request<generic_query>&) -> caf::result<match_reply<model>> {
        return self->make_response_promise<match_reply<model>>();
      },
      [=](find_atom, std::vector<match_request<generic_query>>&)
          -> caf::result<std::vector<match_reply<model>>> {
        return self->make_response_promise<std::vector<match_reply<model>>>();
      },
      [](update_atom, player_update<model>&) {},
      [](update_atom, std::vector<player_update<model>>&) {},
      [](enroll_atom, player_id) { return false; },
      [](remove_atom, player_id) { return false; },
  };
}

}  // namespace

TEST_CASE(
    "a cluster client fails the queries a silent node holds past node_timeout, on its own "
    "timer, and the next node answers them",
    "[actors][cluster][batching]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  const set_part part{2, {1}};
  auto set = spawn_instance_part<generic_profile>(f.sys(), part, base);
  auto node = spawn_client<generic_profile>(f.sys(), set, std::uint64_t{3}, part);
  auto silent = f.sys().spawn(silent_node);
  const auto timeout = std::chrono::milliseconds(500);
  auto cluster = spawn_cluster_client<generic_profile>(
      f.sys(), {{silent, {0}}, {caf::actor_cast<iface::client>(node), {1}}}, 2, timeout, 9,
      std::chrono::milliseconds(0));
  // Every actor exits, also when a REQUIRE below leaves early.
  auto stop_all = caf::detail::make_scope_guard([&] {
    for (auto& h : set) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(silent, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
  });
  f.run();
  for (player_id id = 1; id <= 19; id += 2)
    caf::anon_send(cluster, update_atom::value,
                   player_update<model>{id, {test::model(id, 5000.0f * id)}});
  f.run();
  std::vector<match_request<generic_query>> reqs;
  for (player_id id = 1; id <= 19; id += 2) reqs.push_back(query_at(5000.0f * id + 5));
  auto got = ask_all(f, cluster, reqs);
  f.run();
  std::size_t answered = 0;
  for (const auto& a : *got) answered += a.first.has_value();
  CHECK(answered < reqs.size());  // those that went to the silent node first wait
  f.advance(timeout - std::chrono::milliseconds(1));
  std::size_t still = 0;
  for (const auto& a : *got) still += a.first.has_value();
  CHECK(still == answered);  // not before node_timeout
  f.advance(std::chrono::milliseconds(1));
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    INFO("query " << i);
    REQUIRE((*got)[i].first);
    CHECK((*got)[i].first->best_candidate_id == 2 * i + 1);
  }
  auto [stats, se] = f.ask<client_stats>(cluster, stats_atom::value);
  REQUIRE(stats);
  CHECK(stats->coalesced_queries > 0);  // some waited behind the silent node's first
}

TEST_CASE(
    "a cluster client sends the updates of one burst to each node as one batch, and the "
    "game's next query sees them",
    "[actors][cluster][batching]") {
  test::temp_dir dir;
  test::actor_fixture f;
  auto base = config_for(dir.file("mm.db"));
  base.opts.enable_database_scan = false;
  two_nodes two(f, base);
  auto cluster = spawn_cluster_client<generic_profile>(
      f.sys(), two.nodes, 2, std::chrono::milliseconds(1000), 5, std::chrono::milliseconds(0));
  auto stop_all = caf::detail::make_scope_guard([&] {
    two.stop();
    caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
  });
  f.run();
  // 20 updates, then a query (its sender is spawned first, so the query
  // lands in the client's mailbox behind the updates, ahead of the flush
  // they queue): the query goes out after the updates and finds the one
  // player near 900. (20 players: more in a bucket this small would
  // replace one another.)
  auto got = ask_all(f, cluster, {query_at(905)});
  for (player_id id = 1; id <= 20; ++id)
    caf::anon_send(cluster, update_atom::value,
                   player_update<model>{id, {test::model(id, id == 8 ? 900 : 100)}});
  f.run();
  REQUIRE((*got)[0].first);
  CHECK((*got)[0].first->best_candidate_id == 8);
  auto [stats, se] = f.ask<client_stats>(cluster, stats_atom::value);
  REQUIRE(stats);
  CHECK(stats->updates == 20);
  CHECK(stats->coalesced_update_batches == 2);  // one a node
  CHECK(stats->coalesced_updates == 20);
  for (std::uint32_t k = 0; k < 2; ++k) {
    auto [ns, ne] = f.ask<client_stats>(caf::actor_cast<iface::routing_client>(two.clients[k]),
                                        stats_atom::value);
    REQUIRE(ns);
    CHECK(ns->updates == 10);
    for (player_id id = 1; id <= 20; ++id) {
      INFO("node " << k << ", player " << id);
      auto [p, e] = f.ask<player_info>(two.sets[k][0], player_atom::value, id);
      REQUIRE(p);
      CHECK(p->participating == (id % 2 == k));
    }
  }
  // An update alone goes as itself.
  caf::anon_send(cluster, update_atom::value, player_update<model>{31, {test::model(31, 100)}});
  f.run();
  auto [alone, ae] = f.ask<client_stats>(cluster, stats_atom::value);
  REQUIRE(alone);
  CHECK(alone->coalesced_update_batches == 2);
  auto [p31, e31] = f.ask<player_info>(two.sets[1][0], player_atom::value, player_id{31});
  REQUIRE(p31);
  CHECK(p31->participating);
  // A game's own batch is split per node; one over max_batch_updates is
  // refused whole, by the cluster client and by a node's client alike.
  std::vector<player_update<model>> batch;
  for (player_id id = 41; id <= 44; ++id) batch.push_back({id, {test::model(id, 100)}});
  caf::anon_send(cluster, update_atom::value, batch);
  std::vector<player_update<model>> too_many;
  for (player_id id = 1001; id <= 1001 + max_batch_updates; ++id)
    too_many.push_back({id, {test::model(id, 100)}});
  caf::anon_send(cluster, update_atom::value, too_many);
  caf::anon_send(two.clients[0], update_atom::value, too_many);
  f.run();
  auto [after, fe] = f.ask<client_stats>(cluster, stats_atom::value);
  REQUIRE(after);
  CHECK(after->updates == 25);
  CHECK(after->updates_refused == max_batch_updates + 1);
  CHECK(after->coalesced_update_batches == 4);
  auto [node0, n0e] = f.ask<client_stats>(caf::actor_cast<iface::routing_client>(two.clients[0]),
                                          stats_atom::value);
  REQUIRE(node0);
  CHECK(node0->updates_refused == max_batch_updates + 1);
  for (player_id id = 41; id <= 44; ++id) {
    auto [p, e] = f.ask<player_info>(two.sets[id % 2][0], player_atom::value, id);
    REQUIRE(p);
    CHECK(p->participating);
  }
  auto [none, ne] = f.ask<player_info>(two.sets[0][0], player_atom::value, player_id{1002});
  REQUIRE(none);
  CHECK_FALSE(none->participating);
}

namespace {

// A node's actor port as a cluster client sees its session side: it runs the
// queue `runs` (a partition of the queues) and its ticket `made`, and
// answers not_owned_here for the others', as a node's switch does.
caf::behavior session_node(caf::event_based_actor*, std::string runs, std::uint64_t made) {
  const auto elsewhere = [] { return make_error(errc::not_owned_here, "not served here"); };
  return {
      [](shards_atom) {
        return served_resources{{}, true};
      },
      [=](create_atom, const std::string& queue, const session_ticket&,
          const session_interfaces::owner&) -> caf::result<std::uint64_t> {
        if (queue == runs) return made;
        return elsewhere();
      },
      [=](status_atom, std::uint64_t ticket) -> caf::result<ticket_outcome> {
        if (ticket != made) return elsewhere();
        ticket_outcome o;
        o.ticket = ticket;
        o.queue = runs;
        return o;
      },
  };
}

}  // namespace

TEST_CASE(
    "a cluster client passes a session request on to the next node while nodes answer that "
    "another runs its partition",
    "[actors][cluster][partitions]") {
  test::actor_fixture f;
  std::vector<caf::actor> fakes = {f.sys().spawn(session_node, "arena", 11),
                                   f.sys().spawn(session_node, "solo", 22)};
  std::vector<cluster_node<generic_profile>> nodes;
  for (const auto& a : fakes) nodes.push_back({caf::actor_cast<iface::client>(a), {}});
  auto cluster = spawn_cluster_client<generic_profile>(
      f.sys(), nodes, 2, std::chrono::milliseconds(1000), 5, std::chrono::milliseconds(1000));
  auto sessions = caf::actor_cast<session_interfaces::service>(cluster);
  auto stop_all = caf::detail::make_scope_guard([&] {
    for (auto& a : fakes) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
  });
  f.run();  // the first refresh: both nodes run session queues
  for (const auto& [queue, id] :
       {std::pair<std::string, std::uint64_t>{"arena", 11}, {"solo", 22}}) {
    auto [made, e] = f.ask<std::uint64_t>(sessions, create_atom::value, queue, session_ticket{},
                                          session_interfaces::owner{});
    INFO(queue);
    REQUIRE(made);
    CHECK(*made == id);
    auto [status, se] = f.ask<ticket_outcome>(sessions, status_atom::value, id);
    REQUIRE(status);
    CHECK(status->queue == queue);
  }
  // Nobody runs it: every node was asked, and the last one's answer is the
  // caller's.
  auto [none, e] = f.ask<std::uint64_t>(sessions, create_atom::value, std::string("duel"),
                                        session_ticket{}, session_interfaces::owner{});
  CHECK_FALSE(none);
  CHECK(error_code_of(e) == errc::not_owned_here);
}
