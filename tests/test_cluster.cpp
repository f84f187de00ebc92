// Two matchmakerd nodes on one PostgreSQL database, as real processes on
// loopback with a real PostgreSQL server started by the test: each node runs
// the shard pinned to it (cluster.owned), writes through either node land in
// the shared table, a request for the other node's shard is redirected to
// it, and a node killed with SIGKILL loses nothing it acknowledged.
#include <signal.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <pqxx/pqxx>
#include <thread>

#include "browser.hpp"
#include "client/event_client.hpp"
#include "mm/actors/cluster_client.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/pg_store.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"
#include "server_fixture.hpp"
#include "ticket_ledger.hpp"

using mm::test::have_postgres;
using mm::test::json;
using mm::test::live_server;
using mm::test::postgres_server;

namespace {

// A node of a cluster of `total` instances pinning `owned`, on `url`; a
// dead node's share is taken over within 2 s.
json node_config(const std::string& url, std::uint32_t total, const std::string& owned) {
  return {{"database", {{"url", url}}},
          {"cluster", {{"total", total}, {"owned", owned}, {"takeover_after", "2s"}}},
          {"matchmaker", {{"state_snapshot_interval", "1s"}}}};
}

// The same, with the session queues of the ticket tests.
json node_with_queues(const std::string& url, std::uint32_t total, const std::string& owned) {
  json c = node_config(url, total, owned);
  c.merge_patch(mm::test::ticket_queues_patch());
  return c;
}

// The opponents a node offers for `n` queries around MMR 1500.
std::vector<std::uint64_t> offered(const live_server& s, int n) {
  std::vector<std::uint64_t> ids;
  for (int q = 0; q < n; ++q) {
    const json reply = s.post_json(
        "/api/query", {{"attacker_id", 900'000 + q}, {"mmr", 1300 + 20 * q}}, mm::test::test_token);
    if (reply["result"] == "Success") ids.push_back(reply["model"]["id"].get<std::uint64_t>());
  }
  return ids;
}

std::vector<std::string> snapshot_rows(const std::string& url) {
  pqxx::connection c(url);
  pqxx::nontransaction w(c);
  std::vector<std::string> ids;
  for (const auto& r : w.exec("SELECT instance_id FROM matchmaker_state ORDER BY instance_id"))
    ids.push_back(r[0].as<std::string>());
  return ids;
}

// 4,000 synthetic players with ids 1..4000 in the shared table.
void write_players(const std::string& url, std::uint64_t seed) {
  mm::pg_store store(url);
  mm::rng r(seed);
  store.upsert_players(mm::make_players(mm::synthetic_population{}, 4000, 1, r));
}

}  // namespace

TEST_CASE("two matchmakerd nodes share one PostgreSQL database, each running its own shards",
          "[cluster][postgres][server]") {
  if (!have_postgres()) return;
  postgres_server pg;
  write_players(pg.url(), 5);
  live_server a(node_config(pg.url(), 2, "0"), 0);
  live_server b(node_config(pg.url(), 2, "1"), 0);
  a.wait_until_serving({"mm-0"});
  b.wait_until_serving({"mm-1"});
  a.wait_until_filled();
  b.wait_until_filled();

  // Each node lists its own instance, named as in the whole set, and the
  // other's as served elsewhere; it offers only its shard's players.
  // (A learns who serves mm-1 from the leases: at once, through a
  // notification, but polled here, as a client would.)
  json ja;
  for (int i = 0; i < 200; ++i) {
    ja = a.get_json("/api/matchmakers", mm::test::view_token);
    if (ja["elsewhere"].size() == 1 && ja["elsewhere"][0]["served_by"] == b.url()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a process
  }
  const json jb = b.get_json("/api/matchmakers", mm::test::view_token);
  const json ma = ja["matchmakers"], mb = jb["matchmakers"];
  REQUIRE(ma.size() == 1);
  REQUIRE(mb.size() == 1);
  CHECK(ma[0]["name"] == "mm-0");
  CHECK(mb[0]["name"] == "mm-1");
  REQUIRE(ja["elsewhere"].size() == 1);
  CHECK(ja["elsewhere"][0]["name"] == "mm-1");
  CHECK(ja["elsewhere"][0]["served_by"] == b.url());
  const auto from_a = offered(a, 30), from_b = offered(b, 30);
  CHECK(from_a.size() > 20);
  CHECK(from_b.size() > 20);
  for (auto id : from_a) CHECK(id % 2 == 0);
  for (auto id : from_b) CHECK(id % 2 == 1);
  // A cache change for the other node's player is redirected to that node
  // (307: the same method and body there).
  const auto elsewhere = a.post("/api/cache/add", "{\"id\": 11}", mm::test::admin_token);
  REQUIRE(elsewhere);
  CHECK(elsewhere->status == 307);
  CHECK(elsewhere->get_header_value("Location") == b.url() + "/api/cache/add");
  CHECK(elsewhere->body.find("another node") != std::string::npos);
  // And the other node's instance by name too.
  const auto info = a.get("/api/matchmakers/mm-1", mm::test::view_token);
  REQUIRE(info);
  CHECK(info->status == 307);
  CHECK(info->get_header_value("Location") == b.url() + "/api/matchmakers/mm-1");

  // Players written through node B, acknowledged, then B killed at once.
  json players = json::array();
  for (std::uint64_t id = 10'001; id <= 10'040; ++id)
    players.push_back({{"id", id}, {"mmr", 1500 + static_cast<double>(id % 7)}});
  const json written = b.post_json("/api/players", {{"players", players}}, mm::test::admin_token);
  CHECK(written["written"] == 40);
  b.kill_hard();
  // Nothing acknowledged was lost: every row is in the shared table.
  {
    mm::pg_store store(pg.url());
    for (std::uint64_t id = 10'001; id <= 10'040; ++id) CHECK(store.find_player(id));
  }
  // Node A keeps serving. It reads the rows written through B from the
  // shared table (the scan's rows are the same as SQLite's: test_pg_store),
  // and its instance takes one of its own shard into its cache. (Whether it
  // is still there a moment later is the scan's business: replace-on-insert.)
  CHECK(offered(a, 10).size() > 5);
  const json stored = a.get_json("/api/players/10002", mm::test::view_token)["stored"];
  CHECK(stored["mmr"] == 1500 + 10'002 % 7);
  CHECK(a.post_json("/api/cache/add", {{"id", 10'002}}, mm::test::admin_token)["changed"] == true);

  // B comes back, warm from its last snapshot (written every second), and
  // serves its shard again once its dead incarnation's lease expired, the
  // players written through it included.
  b.start();
  b.wait_until_serving({"mm-1"});
  b.wait_until_filled();
  for (auto id : offered(b, 20)) CHECK(id % 2 == 1);
  CHECK(b.post_json("/api/cache/add", {{"id", 10'001}}, mm::test::admin_token)["changed"] == true);
  CHECK(a.stop() == 0);
  CHECK(b.stop() == 0);
  CHECK(snapshot_rows(pg.url()) == std::vector<std::string>{"mm-0", "mm-1"});
}

TEST_CASE(
    "a game's cluster client searches two matchmakerd nodes over their actor ports and follows "
    "their shards and session queues",
    "[cluster][postgres][server][remote]") {
  if (!have_postgres()) return;
  postgres_server pg;
  write_players(pg.url(), 6);
  auto with_port = [&](const std::string& owned) {
    json c = node_with_queues(pg.url(), 2, owned);
    c["actor"] = {{"port", 0}};
    // One scan fills the caches at start, and no other runs during the test:
    // player 4001 below exists only through its update, and a later scan
    // could bring a table player of its bucket whose single possible slot is
    // the same, replacing it (replace-on-insert) for good.
    c["matchmaker"]["database_scan_tick"] = "1h";
    return c;
  };
  live_server a(with_port("0"), 0);
  live_server b(with_port("1"), 0);
  REQUIRE(a.actor_port() != 0);
  REQUIRE(b.actor_port() != 0);
  a.wait_until_serving({"mm-0"});
  b.wait_until_serving({"mm-1"});
  a.wait_until_filled();
  b.wait_until_filled();

  // The game's process: its own actor system, connected to both nodes.
  using namespace mm::actors;
  using handle = interfaces<mm::generic_profile>::client;
  caf::actor_system_config cfg;
  use_network(cfg, {});
  cfg.set("logger.verbosity", caf::atom("quiet"));
  add_message_types<mm::generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};
  auto node_a = connect_actor<handle>(sys, "127.0.0.1", a.actor_port(), false);
  auto node_b = connect_actor<handle>(sys, "127.0.0.1", b.actor_port(), false);
  REQUIRE(node_a);
  REQUIRE(node_b);
  auto cluster = spawn_cluster_client<mm::generic_profile>(sys, {{*node_a, {0}}, {*node_b, {1}}}, 2,
                                                           std::chrono::milliseconds(2000), 3);
  // Its refresh timer keeps it alive: it must exit before the actor system
  // ends, also when a REQUIRE below leaves early (or the test hangs).
  auto exit_cluster = caf::detail::make_scope_guard(
      [&] { caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown); });
  caf::scoped_actor self{sys};
  auto ask = [&](float mmr, std::uint32_t region) {
    mm::match_request<mm::generic_query> req;
    req.query = mm::generic_query{900'000, mmr, {region, 1, 0, 0}};
    req.allow_fake_opponent = false;
    mm::match_reply<mm::generic_model> out;
    self->request(cluster, std::chrono::seconds(10), find_atom::value, req)
        .receive([&](mm::match_reply<mm::generic_model>& r) { out = std::move(r); },
                 [&](caf::error& e) { FAIL(sys.render(e)); });
    return out;
  };
  // Both nodes answer: opponents of both shards come back.
  int even = 0, odd = 0;
  for (int q = 0; q < 40; ++q) {
    const auto r = ask(1400 + 5 * static_cast<float>(q), 1 + q % 3);
    if (r.type != mm::match_type::success) continue;
    (r.best_candidate_id % 2 == 0 ? even : odd) += 1;
  }
  CHECK(even > 0);
  CHECK(odd > 0);
  // A player only node B holds, sent by the cluster client to B (its shard):
  // every query finds it, also those that start at node A, which has none
  // near that MMR and passes the query on.
  caf::anon_send(
      cluster, update_atom::value,
      mm::player_update<mm::generic_model>{4001, {mm::generic_model{4001, 4200, {2, 9, 0, 0}}}});
  bool seen = false;
  for (int q = 0; q < 100 && !seen; ++q) {  // the update crosses the network first
    seen = ask(4200, 2).best_candidate_id == 4001;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(seen);
  for (int q = 0; q < 10; ++q) CHECK(ask(4200, 2).best_candidate_id == 4001);

  // Session requests through the same handle go to the node that runs the
  // session queues (learnt with the shards): a ticket is created there and
  // read back. Until the client's first refresh answers, it says
  // not_owned_here, and the game retries.
  auto sessions = caf::actor_cast<session_interfaces::service>(cluster);
  session_ticket t;
  session_player p;
  p.id = 7001;
  p.mmr = 1500;
  p.rtt_ms = {{"paris", 20}};
  t.players = {p};
  std::uint64_t ticket = 0;
  std::string last_error;
  for (int attempt = 0; attempt < 200 && ticket == 0; ++attempt) {
    self->request(sessions, std::chrono::seconds(5), create_atom::value, std::string("duel"), t,
                  session_interfaces::owner{})
        .receive([&](std::uint64_t id) { ticket = id; },
                 [&](caf::error& e) { last_error = sys.render(e); });
    if (ticket == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(last_error);
  REQUIRE(ticket != 0);
  auto state_of = [&](std::uint64_t id) {
    std::optional<mm::session::ticket_state> out;
    self->request(sessions, std::chrono::seconds(5), status_atom::value, id)
        .receive([&](ticket_outcome& o) { out = o.state; }, [](caf::error&) {});
    return out;
  };
  CHECK(state_of(ticket) == mm::session::ticket_state::waiting);

  // The node that runs the session queues stops; it hands its shard and the
  // queues over to the other. The client learns from the nodes who serves
  // them now.
  auto holds_sessions = [](live_server& s) {
    const json cluster_view = s.get_json("/api/cluster", mm::test::view_token);
    for (const auto& o : cluster_view["owned"])
      if (o["resource"] == "sessions") return true;
    return false;
  };
  const bool a_held = holds_sessions(a);
  REQUIRE(a_held != holds_sessions(b));
  live_server& leaving = a_held ? a : b;
  live_server& staying = a_held ? b : a;
  const auto& staying_handle = a_held ? *node_b : *node_a;
  const std::uint32_t moved_shard = a_held ? 0 : 1;
  CHECK(leaving.stop() == 0);
  staying.wait_until_serving({"mm-0", "mm-1", "sessions"});
  {  // the node that stays says so on its actor port
    using member = interfaces<mm::generic_profile>::cluster_member;
    mm::served_resources served;
    self->request(caf::actor_cast<member>(staying_handle), std::chrono::seconds(10),
                  shards_atom::value)
        .receive([&](mm::served_resources& s) { served = std::move(s); },
                 [&](caf::error& e) { FAIL(sys.render(e)); });
    std::sort(served.shards.begin(), served.shards.end());
    CHECK(served.shards == std::vector<std::uint32_t>{0, 1});
    CHECK(served.sessions);
  }
  // The client routes an enrolment of a player of the moved shard, and the
  // ticket's status, to the node that stays within a refresh or two of its
  // map (every 1 s): answers, where the node that left gives none. The
  // ticket waits there still: the queues started from the journal.
  bool routed = false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (mm::player_id id = moved_shard + 2; !routed && std::chrono::steady_clock::now() < until;
       id += 2) {
    self->request(cluster, std::chrono::seconds(5), enroll_atom::value, id)
        .receive([&](bool) { routed = true; }, [](caf::error&) {});
    if (!routed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(routed);
  std::optional<mm::session::ticket_state> after;
  while (!after && std::chrono::steady_clock::now() < until) {
    after = state_of(ticket);
    if (!after) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(after == mm::session::ticket_state::waiting);
  CHECK(staying.stop() == 0);
}

TEST_CASE(
    "an event follower is sent to the node that runs the session queues, and told to go "
    "there when its node loses them",
    "[cluster][postgres][server][events]") {
  if (!have_postgres()) return;
  postgres_server pg;
  write_players(pg.url(), 8);
  live_server a(node_with_queues(pg.url(), 2, "0"), 0);
  live_server b(node_with_queues(pg.url(), 2, "1"), 0);
  a.wait_until_serving({"mm-0"});
  b.wait_until_serving({"mm-1"});
  const auto runs_sessions = [](live_server& s) {
    const json view = s.get_json("/api/cluster", mm::test::view_token);
    for (const auto& o : view["owned"])
      if (o["resource"] == "sessions") return view.value("serving", false);
    return false;
  };
  // Settled: both nodes live, every lease with the owner the plan gives it,
  // the queues running on one node.
  const auto settled = [&] {
    const json view = a.get_json("/api/cluster", mm::test::view_token);
    if (view["nodes"].size() != 2) return false;
    for (const auto& l : view["leases"])
      if (l["owner"] != l["planned_owner"]) return false;
    return runs_sessions(a) != runs_sessions(b);
  };
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!settled() && std::chrono::steady_clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling processes
  const bool a_runs = runs_sessions(a);
  REQUIRE(a_runs != runs_sessions(b));
  live_server& holder = a_runs ? a : b;
  live_server& other = a_runs ? b : a;
  auto connect_to = [](const live_server& s) {
    mm::client::event_connect c;
    c.port = s.port();
    c.token = mm::test::test_token;
    return c;
  };

  // The other node does not hand out the events: its handshake is a 307.
  try {
    mm::client::event_client elsewhere(connect_to(other));
    FAIL("the node without the session queues accepted an event follower");
  } catch (const mm::client::event_client_error& e) {
    CHECK(e.http_status == 307);
  }
  INFO(holder.get("/api/cluster", mm::test::view_token)->body);
  // The holder does; its follower sees a ticket wait.
  mm::client::event_client follower(connect_to(holder));
  REQUIRE(follower.next(std::chrono::seconds(5)));  // hello
  const json made = holder.post_json(
      "/api/tickets",
      {{"queue", "duel"}, {"players", {{{"id", 71}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}},
      mm::test::test_token, 201);
  const auto waiting = follower.next(std::chrono::seconds(5));
  REQUIRE(waiting);
  CHECK(json::parse(*waiting)["ticket"] == made["ticket"]);

  // The holder pauses past its lease; the other takes the queues over. When
  // it resumes, it has lost them: its follower is closed with 4307, naming
  // the node that runs them now.
  REQUIRE(::kill(holder.pid(), SIGSTOP) == 0);
  other.wait_until_serving({"mm-0", "mm-1", "sessions"});
  REQUIRE(::kill(holder.pid(), SIGCONT) == 0);
  std::optional<std::pair<std::uint16_t, std::string>> closed;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!closed && std::chrono::steady_clock::now() < until) {
    follower.next(std::chrono::milliseconds(100));
    closed = follower.closed();
  }
  REQUIRE(closed);
  CHECK(closed->first == 4307);
  CHECK_THAT(closed->second, Catch::Contains(std::to_string(other.port())));
  // There the ticket still waits, and a new follower is welcome. "There"
  // moves: the paused node joins again under its name, and the plan gives
  // it the queues back (the test's old flake: it asked the other node once,
  // and got a 307). Until a node has read the queues back from the journal
  // it answers 503 "retry in a moment". So both nodes are asked until one
  // answers the ticket and welcomes a follower.
  const std::string path = "/api/tickets/" + made["ticket"].get<std::string>();
  std::optional<json> view;
  const auto served_by = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!view && std::chrono::steady_clock::now() < served_by) {
    for (live_server* s : {&other, &holder}) {
      auto r = s->get(path, mm::test::test_token);
      if (!r || r->status != 200) continue;
      try {
        mm::client::event_client there(connect_to(*s));
        if (there.next(std::chrono::seconds(5))) view = json::parse(r->body);
      } catch (const mm::client::event_client_error&) {
        // the queues moved on between the two requests: ask again
      }
      if (view) break;
    }
    if (!view) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling processes
  }
  REQUIRE(view);
  CHECK((*view)["state"] == "waiting");
  CHECK(a.stop() == 0);
  CHECK(b.stop() == 0);
}

TEST_CASE("the dashboard shows a cluster's nodes, their leases and who owns what",
          "[cluster][postgres][server][browser]") {
  if (!have_postgres()) return;
  REQUIRE(std::filesystem::exists(mm::test::chromium_path));
  postgres_server pg;
  write_players(pg.url(), 9);
  // The session queues in three partitions: five leases.
  json config_a = node_with_queues(pg.url(), 2, "0"), config_b = node_with_queues(pg.url(), 2, "1");
  config_a["sessions"]["partitions"] = config_b["sessions"]["partitions"] = 3;
  live_server a(config_a, 0);
  live_server b(config_b, 0);
  a.wait_until_serving({"mm-0"});
  b.wait_until_serving({"mm-1"});
  mm::test::browser page(a.dir());
  page.open(a.url() + "/");
  page.type("#token", mm::test::test_token);
  page.script("document.getElementById('token').dispatchEvent(new Event('change'));");
  // Both nodes live, and the five resources (two shards, three partitions
  // of the queues) each with the owner the API gives it, once the cluster
  // has settled; and each queue with its partition's owner.
  REQUIRE(page.wait_for(
      "document.querySelectorAll('#cluster-nodes tr[data-state=live]').length === 2 && "
      "document.querySelectorAll('#cluster-leases tr[data-resource]').length === 5"));
  bool same = false;
  for (int i = 0; i < 100 && !same; ++i) {
    const json view = a.get_json("/api/cluster", mm::test::view_token);
    const json shown = page.script(
        "return Object.fromEntries([...document.querySelectorAll('#cluster-leases "
        "tr[data-resource]')].map(r => [r.dataset.resource, r.dataset.owner]));");
    const json queues = page.script(
        "return Object.fromEntries([...document.querySelectorAll('#cluster-queues "
        "tr[data-queue]')].map(r => [r.dataset.queue, r.dataset.owner]));");
    same = queues.size() == 2;  // duel and coop
    for (const auto& l : view["leases"])
      same = same && !l["owner"].is_null() &&
             shown.value(l["resource"].get<std::string>(), "") == l["owner"].get<std::string>();
    for (const auto& p : view["session_partitions"])
      for (const auto& q : p["queues"])
        same = same && queues.value(q.get<std::string>(), "") == p["owner"];
    if (!same)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the page polls every 2 s
  }
  CHECK(same);
  CHECK(page.script("return document.getElementById('cluster-summary').textContent;")
            .get<std::string>()
            .find("serving") != std::string::npos);
  CHECK(a.stop() == 0);
  CHECK(b.stop() == 0);
}

TEST_CASE("matchmakerd refuses a cluster config it cannot run", "[cluster][server]") {
  const auto refused = [](std::vector<std::string> flags) {
    std::vector<std::string> argv = {MATCHMAKERD_BINARY, "--http.port", "0", "--actor.port", "-1"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    mm::test::child_process p(argv, true);
    std::string out;
    CHECK(p.finish(&out) == 2);
    return out;
  };
  CHECK_THAT(refused({"--cluster.total", "2"}), Catch::Contains("set database.url"));
  const std::string url = "postgresql://nobody@127.0.0.1:1/none";
  CHECK_THAT(refused({"--database.url", url, "--cluster.total", "2", "--cluster.owned", "0,2"}),
             Catch::Contains("instance 2 is not below cluster.total"));
  CHECK_THAT(refused({"--database.url", url, "--cluster.total", "4", "--cluster.owned", "1-2,2"}),
             Catch::Contains("instance 2 twice"));
  CHECK_THAT(
      refused({"--database.url", url, "--cluster.total", "2", "--cluster.takeover_after", "100ms"}),
      Catch::Contains("cluster.takeover_after"));
  CHECK_THAT(refused({"--cluster.owned", "1"}), Catch::Contains("needs cluster.total"));
  CHECK_THAT(refused({"--cluster.total", "2", "--cluster.owned", "x"}),
             Catch::Contains("'x' is not an instance index"));
  CHECK_THAT(refused({"--database.url", "mysql://root:hunter2@h/db"}),
             Catch::Contains("not a PostgreSQL URL") && !Catch::Contains("hunter2"));
}
