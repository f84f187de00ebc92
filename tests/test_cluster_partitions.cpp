// The session queues in partitions (sessions.partitions) over two matchmakerd
// nodes on one PostgreSQL server the test starts: each partition is a lease
// of its own, so the queues spread over the nodes; a request for a queue (a
// ticket, its status, its cancel) is answered by the node that runs it and
// redirected (307) by the other; one player has one waiting ticket whatever
// node runs its queues; every node's event feed holds every partition's
// events, numbered alike; and a node killed loses none of its acknowledged
// tickets to the node that takes its partitions over. Then three nodes, 30
// kills of random nodes under ticket load over every partition, with
// tickets over two and three partitions among it: nothing acknowledged
// lost, no ticket in two matches, no ticket with two outcomes, no told
// outcome its owner's events contradict, no player waiting twice at once,
// no id reused.
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "client/event_client.hpp"
#include "cluster_fixture.hpp"
#include "mm/session/partitions.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"
#include "server_fixture.hpp"
#include "ticket_ledger.hpp"

using mm::test::have_postgres;
using mm::test::json;
using mm::test::live_server;
using mm::test::postgres_server;

namespace {

constexpr std::uint32_t partitions = 3;

// Two shards (`owned`: the one pinned here, if any), and the ticket tests' queues plus two
// more, in three partitions: arena runs in partition 0, duel and coop in 1,
// solo in 2 (the hash is stable: mm/session/partitions.hpp).
json partitioned_node(const std::string& url, const std::string& owned, const std::string& name) {
  json c = mm::test::partitioned_queues_patch(partitions);
  c["database"] = {{"url", url}};
  c["cluster"] = {{"total", 2}, {"node", name}, {"takeover_after", "2s"}};
  if (!owned.empty()) c["cluster"]["owned"] = owned;
  c["matchmaker"] = {{"state_snapshot_interval", "1s"}};
  return c;
}

// Partition -> the name of the node serving it, as both nodes say; empty
// until each partition is served by exactly one serving node.
std::map<std::string, std::string> partition_servers(live_server& a, live_server& b) {
  std::map<std::string, std::set<std::string>> seen;
  for (auto [name, s] : {std::pair<const char*, live_server*>{"a", &a}, {"b", &b}}) {
    auto r = s->get("/api/cluster", mm::test::view_token);
    if (!r || r->status != 200) return {};
    const json c = json::parse(r->body);
    if (!c.value("serving", false)) return {};
    for (const auto& o : c["owned"])
      if (o["resource"].get<std::string>().rfind("sessions-", 0) == 0)
        seen[o["resource"]].insert(name);
  }
  std::map<std::string, std::string> out;
  for (std::uint32_t p = 0; p < partitions; ++p) {
    const auto r = mm::session::partition_resource(p, partitions);
    if (!seen.count(r) || seen[r].size() != 1) return {};
    out[r] = *seen[r].begin();
  }
  return out;
}

// Whether every lease has the owner the plan gives it, as `s` sees them:
// no hand-over is due.
bool as_planned(const live_server& s) {
  const json c = s.get_json("/api/cluster", mm::test::view_token);
  if (c["nodes"].size() != 2) return false;
  for (const auto& l : c["leases"])
    if (l["owner"] != l["planned_owner"]) return false;
  return true;
}

// The partitions' servers once the two nodes are at rest.
std::map<std::string, std::string> wait_for_partitions(live_server& a, live_server& b) {
  std::map<std::string, std::string> owners;
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < limit) {
    owners = partition_servers(a, b);
    if (!owners.empty() && as_planned(a) && as_planned(b) && partition_servers(a, b) == owners)
      return owners;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling processes
  }
  return {};
}

mm::client::event_connect events_of(const live_server& s) {
  mm::client::event_connect c;
  c.port = s.port();
  c.token = mm::test::test_token;
  return c;
}

// The events a follower got within `wait` after the last: ticket+state ->
// sequence number.
std::map<std::string, std::uint64_t> drain(mm::client::event_client& follower,
                                           std::chrono::milliseconds wait) {
  std::map<std::string, std::uint64_t> got;
  while (auto m = follower.next(wait)) {
    const json e = json::parse(*m);
    if (!e.contains("ticket")) continue;  // the hello
    got[e["ticket"].get<std::string>() + " " + e["state"].get<std::string>()] =
        e.value("seq", std::uint64_t{0});
  }
  return got;
}

}  // namespace

TEST_CASE(
    "session queues in partitions spread over two nodes, each request reaches its queue's node "
    "and every node follows every event",
    "[cluster][postgres][server][partitions]") {
  if (!have_postgres()) return;
  postgres_server pg;
  mm::test::write_players(pg.url());
  live_server a(partitioned_node(pg.url(), "0", "a-node"), 0);
  live_server b(partitioned_node(pg.url(), "1", "b-node"), 0);
  a.wait_until_serving({"mm-0"});
  b.wait_until_serving({"mm-1"});
  auto owners = wait_for_partitions(a, b);
  INFO(a.get("/api/cluster", mm::test::view_token)->body);
  REQUIRE(owners.size() == partitions);
  // The plan is balanced: each node runs one or two of the three.
  std::map<std::string, int> load;
  for (const auto& [resource, node] : owners) ++load[node];
  CHECK(load["a"] >= 1);
  CHECK(load["b"] >= 1);

  // The cluster report names each queue's partition and its owner.
  const json view = a.get_json("/api/cluster", mm::test::view_token);
  REQUIRE(view["session_partitions"].size() == partitions);
  CHECK(view["session_partitions"][0]["queues"] == json::array({"arena"}));
  CHECK(view["session_partitions"][1]["queues"] == json::array({"duel", "coop"}));
  CHECK(view["session_partitions"][2]["queues"] == json::array({"solo"}));
  for (const auto& p : view["session_partitions"])
    CHECK(p["owner_name"] == (owners[p["resource"]] == "a" ? "a-node" : "b-node"));

  const auto node_of = [&](const std::string& queue) -> live_server& {
    const auto p = mm::session::queue_partition(queue, partitions);
    return owners[mm::session::partition_resource(p, partitions)] == "a" ? a : b;
  };
  const auto other_than = [&](const live_server& s) -> live_server& { return &s == &a ? b : a; };

  // Both nodes hand out the events (no 307): each follows the stream.
  mm::client::event_client follow_a(events_of(a)), follow_b(events_of(b));

  std::uint64_t player = 100;
  std::map<std::string, std::string> first_ticket;  // queue -> its first ticket
  for (const std::string queue : {"arena", "duel", "solo"}) {
    live_server& runs = node_of(queue);
    live_server& elsewhere = other_than(runs);
    // The other node redirects the ticket to its queue's node, same method.
    const auto sent = elsewhere.post("/api/tickets", mm::test::duel_ticket(queue, player).dump(),
                                     mm::test::test_token);
    REQUIRE(sent);
    CHECK(sent->status == 307);
    CHECK(sent->get_header_value("Location") == runs.url() + "/api/tickets");
    // Two players there make a duel.
    const json t1 = runs.post_json("/api/tickets", mm::test::duel_ticket(queue, player++),
                                   mm::test::test_token, 201);
    const json t2 = runs.post_json("/api/tickets", mm::test::duel_ticket(queue, player++),
                                   mm::test::test_token, 201);
    first_ticket[queue] = t1["ticket"];
    const std::string path = "/api/tickets/" + t1["ticket"].get<std::string>();
    const auto status_elsewhere = elsewhere.get(path, mm::test::test_token);
    REQUIRE(status_elsewhere);
    CHECK(status_elsewhere->status == 307);
    CHECK(status_elsewhere->get_header_value("Location") == runs.url() + path);
    const json outcome = runs.get_json(path + "?wait=10", mm::test::test_token);
    CHECK(outcome["state"] == "matched");
    CHECK(outcome["queue"] == queue);
    (void)t2;
  }

  // One waiting ticket per player across the partitions, whatever node runs
  // them: player 500 waits in arena, and solo refuses it.
  const json waits = node_of("arena").post_json("/api/tickets", mm::test::duel_ticket("arena", 500),
                                                mm::test::test_token, 201);
  const auto twice = node_of("solo").post("/api/tickets", mm::test::duel_ticket("solo", 500).dump(),
                                          mm::test::test_token);
  REQUIRE(twice);
  CHECK(twice->status == 409);

  // A batch: each ticket answered as it would be alone: player 500's second
  // ticket here 409, one whose queue runs on the other node 307 to it.
  std::string away = "arena";
  for (const std::string q : {"duel", "solo"})
    if (&node_of(q) != &node_of("arena")) away = q;
  REQUIRE(away != "arena");  // each node runs a partition
  const json batch = {{"tickets", json::array({mm::test::duel_ticket("arena", 500),
                                               mm::test::duel_ticket(away, 601)})}};
  const json results =
      node_of("arena").post_json("/api/tickets", batch, mm::test::test_token, 200)["results"];
  REQUIRE(results.size() == 2);
  CHECK(results[0]["status"] == 409);
  CHECK(results[1]["status"] == 307);
  CHECK(results[1]["location"] == node_of(away).url() + "/api/tickets");

  // Every node's feed holds every partition's events, numbered alike.
  const auto got_a = drain(follow_a, std::chrono::milliseconds(1500));
  const auto got_b = drain(follow_b, std::chrono::milliseconds(300));
  for (const auto& [queue, ticket] : first_ticket) {
    CHECK(got_a.count(ticket + " matched"));
    CHECK(got_b.count(ticket + " matched"));
  }
  CHECK(got_a.count(waits["ticket"].get<std::string>() + " waiting"));
  CHECK(got_a == got_b);
  std::set<std::uint64_t> numbers;
  for (const auto& [what, seq] : got_a) numbers.insert(seq);
  CHECK(numbers.size() == got_a.size());  // each event its own number
  CHECK(!numbers.count(0));

  // A running match is found by its id alone from either node: the other
  // node redirects to its queue's; a queue of another partition refuses
  // its id (the claim in the store).
  const json running = {{"queue", "coop"},
                        {"match_id", "m-1"},
                        {"datacenter", "paris"},
                        {"teams", {{{{"id", 900}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}}};
  node_of("coop").post_json("/api/backfills", running, mm::test::test_token, 201);
  const auto found = other_than(node_of("coop")).get("/api/backfills/m-1", mm::test::test_token);
  REQUIRE(found);
  CHECK(found->status == 307);
  CHECK(found->get_header_value("Location") == node_of("coop").url() + "/api/backfills/m-1");
  json elsewhere_match = running;
  elsewhere_match["queue"] = "solo";
  node_of("solo").post_json("/api/backfills", elsewhere_match, mm::test::test_token, 409);
  CHECK(node_of("coop").get_json("/api/backfills/m-1", mm::test::test_token)["queue"] == "coop");

  // The node running arena is killed: the other takes its partitions over
  // within takeover_after, and the acknowledged ticket still waits there.
  live_server& killed = node_of("arena");
  live_server& survivor = other_than(killed);
  killed.kill_hard();
  std::vector<std::string> all;
  for (std::uint32_t p = 0; p < partitions; ++p)
    all.push_back(mm::session::partition_resource(p, partitions));
  survivor.wait_until_serving(all, std::chrono::seconds(30));
  const std::string path = "/api/tickets/" + waits["ticket"].get<std::string>();
  std::optional<json> back;
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!back && std::chrono::steady_clock::now() < limit) {
    auto r = survivor.get(path, mm::test::test_token);
    if (r && r->status == 200)
      back = json::parse(r->body);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a process
  }
  REQUIRE(back);
  CHECK((*back)["state"] == "waiting");
  // And the claim went with it: solo still refuses player 500.
  const auto still = survivor.post("/api/tickets", mm::test::duel_ticket("solo", 500).dump(),
                                   mm::test::test_token);
  REQUIRE(still);
  CHECK(still->status == 409);
  // The running match too, with its claim.
  CHECK(survivor.get_json("/api/backfills/m-1", mm::test::test_token)["queue"] == "coop");
  survivor.post_json("/api/backfills", elsewhere_match, mm::test::test_token, 409);
  CHECK(survivor.stop() == 0);
}

TEST_CASE(
    "three nodes with the session queues in partitions: random nodes killed with SIGKILL 30 "
    "times under multi-queue ticket load lose no acknowledged ticket",
    "[cluster][postgres][server][partitions][reliability]") {
  if (!have_postgres()) return;
  postgres_server pg;
  mm::test::write_players(pg.url());
  const char* names[] = {"a-node", "b-node", "c-node"};
  std::vector<std::unique_ptr<live_server>> nodes;
  for (int i = 0; i < 3; ++i)
    nodes.push_back(std::make_unique<live_server>(partitioned_node(pg.url(), "", names[i]), 0));
  // The clients ask any node up (a request to a node killed under it is
  // sent again, to whatever node is up then); the other nodes redirect.
  std::atomic<bool> up[3] = {true, true, true};
  std::atomic<std::uint16_t> ports[3];
  for (int i = 0; i < 3; ++i) ports[i] = nodes[i]->port();
  std::atomic<std::uint64_t> turn{0};
  mm::test::ticket_target to;
  to.port = [&] {
    for (;;) {
      const auto i = turn++ % 3;
      if (up[i]) return ports[i].load();
    }
  };
  to.retry = true;
  // Queues in every partition, a multi-queue ticket within one and over
  // two and three partitions, and each player's two tickets in a row (the
  // second refused while the first waits, wherever its queues run).
  to.queues = {"duel",
               "coop",
               json::array({"coop", "duel"}),
               "arena",
               "solo",
               json::array({"duel", "arena"}),
               json::array({"solo", "coop", "arena"})};
  to.tickets_per_player = 2;
  mm::test::ledger l;
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int who = 0; who < 3; ++who)
    load.emplace_back([&, who] { mm::test::ticket_client(to, who, 0, stop, l); });

  std::uint64_t kills = 0;
  double longest_s = 0;
  mm::rng r(55);
  for (int k = 0; k < 30; ++k) {
    const auto victim = r.below(3);
    up[victim] = false;
    const auto killed = std::chrono::steady_clock::now();
    nodes[victim]->kill_hard();
    ++kills;
    // The others serve every partition (and shard) within takeover_after.
    std::map<std::string, live_server*> alive;
    for (std::size_t i = 0; i < 3; ++i)
      if (i != victim) alive[names[i]] = nodes[i].get();
    const bool served = mm::test::poll(std::chrono::seconds(20), [&] {
      const auto s = mm::test::servers(alive);
      for (std::uint32_t p = 0; p < partitions; ++p) {
        const auto it = s.find(mm::session::partition_resource(p, partitions));
        if (it == s.end() || it->second.size() != 1) return false;
      }
      return true;
    });
    if (!served) {
      // The load's threads stop before the test ends (a REQUIRE here would
      // end it with them running), and each node's view is kept.
      stop = true;
      for (auto& t : load) t.join();
      for (const auto& [name, s] : alive)
        if (auto v = s->get("/api/cluster", mm::test::view_token))
          UNSCOPED_INFO(name << ": " << v->body);
      FAIL("after kill " << k + 1 << " of " << names[victim]
                         << ", the partitions were not each served by one node within 20 s");
    }
    longest_s =
        std::max(longest_s,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count());
    // Back under its name, as a new incarnation; the plan may give it a
    // share back while the next kill comes.
    nodes[victim]->restart(json::object());
    ports[victim] = nodes[victim]->port();
    up[victim] = true;
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  stop = true;
  for (auto& t : load) t.join();

  const auto reader = mm::test::reader_of(*nodes[0]);
  const auto [waiting, finished] = mm::test::check_all(reader, l);
  mm::test::check_events(reader, l, true);
  CHECK(l.ids_reused == 0);
  CHECK(l.acknowledged.size() > 100);
  CHECK(finished > 0);
  WARN(kills << " kills of random nodes (3 nodes, 3 session partitions): " << l.acknowledged.size()
             << " acknowledged tickets, 0 lost (" << waiting << " waiting, " << finished
             << " finished), " << l.told.size()
             << " told matches kept, 0 players waiting twice, 0 ids reused; every partition "
             << "served again within " << longest_s << " s of a kill at the longest");
  for (auto& n : nodes) CHECK(n->stop() == 0);
}
