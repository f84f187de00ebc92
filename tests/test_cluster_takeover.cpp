// A cluster that heals itself: matchmakerd nodes as real processes on one
// PostgreSQL server started by the test, sharing six async shards and the
// session queues through leases (docs/operations.md, "Several nodes").
// - kill -9 of the node that holds the session queues, under query and
//   ticket load: the survivors serve everything again within the takeover
//   time; no acknowledged ticket is lost, no told outcome contradicted, no
//   ticket matched twice, no id reused; queries keep being answered.
// - SIGSTOP past the lease, then SIGCONT: the paused node serves nothing it
//   lost, its late writes are refused (fenced), and it comes back as a new
//   incarnation with a share of its own.
// - A node that joins gets its share; every resource stays served once.
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <pqxx/pqxx>
#include <thread>

#include "cluster_fixture.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

// Queries through HTTP to the live nodes, counted by phase.
struct query_load {
  std::atomic<int> phase{0};  // 0 before, 1 during the takeover, 2 after
  std::atomic<std::uint64_t> ok[3] = {}, failed[3] = {};
  std::mutex m;
  std::string first_failure;
};

void query_client(const std::vector<std::uint16_t>& ports, const std::atomic<bool>& stop,
                  query_load& q) {
  rng r(7);
  for (std::uint64_t n = 0; !stop; ++n) {
    httplib::Client c("127.0.0.1", ports[n % ports.size()]);
    c.set_read_timeout(5s);
    const json body = {{"attacker_id", 900'000 + n}, {"mmr", 1300 + r.below(400)}};
    auto res = c.Post("/api/query", {{"Authorization", "Bearer " + test_token}}, body.dump(),
                      "application/json");
    record_answer("POST", "/api/query", res);
    const int p = q.phase.load();
    const bool ok = res && res->status == 200;
    (ok ? q.ok[p] : q.failed[p]) += 1;
    if (!ok) {
      std::lock_guard lock(q.m);
      if (q.first_failure.empty())
        q.first_failure =
            res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error());
    }
    std::this_thread::sleep_for(5ms);
  }
}

// Session requests to the survivors, redirects not followed: each answer
// with when it was sent, for what the nodes said during the takeover.
struct redirect_probe {
  struct answer {
    std::chrono::steady_clock::time_point sent;
    int status = 0;
    std::string location, retry_after;
  };
  std::mutex m;
  std::vector<answer> answers;
};

void probe_client(const std::vector<std::uint16_t>& ports, const std::atomic<bool>& stop,
                  redirect_probe& p) {
  for (std::uint64_t n = 0; !stop; ++n) {
    httplib::Client c("127.0.0.1", ports[n % ports.size()]);
    c.set_read_timeout(5s);
    redirect_probe::answer a;
    a.sent = std::chrono::steady_clock::now();
    auto res = c.Get("/api/queues", {{"Authorization", "Bearer " + view_token}});
    record_answer("GET", "/api/queues", res);
    if (res) {
      a.status = res->status;
      a.location = res->get_header_value("Location");
      a.retry_after = res->get_header_value("Retry-After");
    }
    {
      std::lock_guard lock(p.m);
      p.answers.push_back(a);
    }
    std::this_thread::sleep_for(2ms);
  }
}

}  // namespace

TEST_CASE(
    "three nodes: the one holding the session queues is killed with SIGKILL under load, "
    "the others take over, nothing acknowledged is lost",
    "[cluster][postgres][server][reliability]") {
  if (!have_postgres()) return;
  postgres_server pg;
  write_players(pg.url());
  live_server a(node_patch(pg.url(), "a"), 0), b(node_patch(pg.url(), "b"), 0),
      c(node_patch(pg.url(), "c"), 0);
  std::map<std::string, live_server*> nodes{{"a", &a}, {"b", &b}, {"c", &c}};
  // The victim: whoever holds the session queues, polled with the rest (the
  // test's old flake: read once after the cluster looked settled, the
  // queues were in the middle of a hand-over, had no server, and the lookup
  // threw).
  std::string victim;
  REQUIRE(poll(20s, [&] {
    if (!settled(nodes)) return false;
    const auto s = servers(nodes);
    const auto held = s.find("sessions");
    if (held == s.end() || held->second.size() != 1) return false;
    victim = *held->second.begin();
    return true;
  }));
  std::vector<std::uint16_t> survivors;
  for (const auto& [name, s] : nodes)
    if (name != victim) survivors.push_back(s->port());
  // Ticket clients ask the survivors (the victim's requests would only fail
  // at the kill: a client that loses its node goes on with another).
  std::atomic<std::uint64_t> turn{0};
  const ticket_target to{[&] { return survivors[turn++ % survivors.size()]; }, true};
  ledger l;
  query_load q;
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int who = 0; who < 3; ++who)
    load.emplace_back([&, who] { ticket_client(to, who, 0, stop, l); });
  load.emplace_back([&] { query_client(survivors, stop, q); });
  redirect_probe probe;
  load.emplace_back([&] { probe_client(survivors, stop, probe); });
  const std::string victim_url = nodes.at(victim)->url();
  std::this_thread::sleep_for(1500ms);

  q.phase = 1;
  const auto killed = std::chrono::steady_clock::now();
  nodes.at(victim)->kill_hard();
  nodes.erase(victim);
  REQUIRE(poll(20s, [&] { return each_served_once(nodes); }));
  const double takeover_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  q.phase = 2;
  std::this_thread::sleep_for(1500ms);
  stop = true;
  for (auto& t : load) t.join();

  // No client is sent to the dead node once the survivors could know it is
  // dead, only 503 with Retry-After until one serves. A survivor sees it
  // dead at its first round (every 0.15 of takeover_after) that reads the
  // cluster after PostgreSQL let go of the dead node's lock, and until then
  // answers from the view before, which it uses up to 1.25 rounds. On time
  // that is within two rounds of the kill; under AddressSanitizer beside
  // another cluster test a redirect came 653 ms (2.18 rounds) after it, so
  // three rounds are allowed here.
  const auto round_every = std::chrono::milliseconds(takeover_after) * 15 / 100;
  const auto knowable = killed + 3 * round_every;
  std::size_t to_dead_before = 0, to_dead_after = 0, unavailable = 0, without_retry_after = 0;
  std::string late;  // the first late redirect: when, and where to
  for (const auto& answer : probe.answers) {
    if (answer.sent < killed) continue;
    if (answer.status == 307 && answer.location.rfind(victim_url, 0) == 0) {
      ++(answer.sent < knowable ? to_dead_before : to_dead_after);
      if (answer.sent >= knowable && late.empty())
        late = std::to_string(
                   std::chrono::duration_cast<std::chrono::milliseconds>(answer.sent - killed)
                       .count()) +
               " ms after the kill, to " + answer.location;
    }
    if (answer.status == 503) {
      ++unavailable;
      if (answer.retry_after != "1") ++without_retry_after;
    }
  }
  INFO("the first late redirect to the dead node: " << late);
  CHECK(to_dead_after == 0);
  CHECK(without_retry_after == 0);
  WARN("after the kill: " << to_dead_before << " redirects to the dead node in its first three "
                          << "rounds, " << to_dead_after << " after; " << unavailable
                          << " answers 503");
  // Served again within the takeover time (its heartbeat lease is 0.6 of
  // it; a loaded test machine gets one more).
  CHECK(takeover_s < std::chrono::duration<double>(takeover_after).count() + 1.0);
  auto* any = nodes.begin()->second;
  const auto [waiting, finished] = check_all(reader_of(*any), l);
  check_events(reader_of(*any), l);
  CHECK(l.ids_reused == 0);
  CHECK(l.acknowledged.size() > 10);
  CHECK(finished > 0);
  // Queries were answered by the survivors throughout.
  CHECK(q.ok[1] + q.ok[2] > 0);
  INFO("first failed query: " << q.first_failure);
  CHECK(q.failed[0] + q.failed[2] == 0);
  WARN("kill -9 of node " << victim << ": served again after " << takeover_s << " s; "
                          << l.acknowledged.size() << " acknowledged tickets, 0 lost (" << waiting
                          << " waiting, " << finished << " finished), " << l.told.size()
                          << " told matches kept; queries ok/failed before " << q.ok[0] << "/"
                          << q.failed[0] << ", during the takeover " << q.ok[1] << "/"
                          << q.failed[1] << ", after " << q.ok[2] << "/" << q.failed[2]);
  // The takeovers are counted where they happened.
  double takeovers = 0;
  for (const auto& [name, s] : nodes)
    takeovers += s->get_json("/api/cluster", view_token)["counters"]["takeovers"].get<double>();
  CHECK(takeovers >= 1);
  const std::string metrics = any->get("/metrics", view_token)->body;
  CHECK(metrics.find("mm_cluster_takeovers_total") != std::string::npos);
}

TEST_CASE(
    "a node paused past its lease serves nothing it lost, its late writes are refused, "
    "and a node that joins gets its share",
    "[cluster][postgres][server]") {
  if (!have_postgres()) return;
  postgres_server pg;
  write_players(pg.url());
  live_server a(node_patch(pg.url(), "a"), 0);
  live_server b(node_patch(pg.url(), "b"), 0, /*with_log=*/true);
  std::map<std::string, live_server*> nodes{{"a", &a}, {"b", &b}};
  REQUIRE(poll(20s, [&] { return settled(nodes); }));
  const json before = b.get_json("/api/cluster", view_token);
  REQUIRE(before["owned"].size() >= 2);
  const std::string old_id = before["node"];

  // B pauses: A serves everything within the takeover time.
  REQUIRE(::kill(b.pid(), SIGSTOP) == 0);
  std::map<std::string, live_server*> only_a{{"a", &a}};
  const bool taken_over = poll(20s, [&] { return each_served_once(only_a); });
  if (!taken_over) {
    INFO(a.get("/api/cluster", view_token)->body);
    INFO(database_activity(pg.url()));
    REQUIRE(taken_over);
  }
  std::this_thread::sleep_for(1500ms);  // A writes snapshots under the new epochs
  REQUIRE(::kill(b.pid(), SIGCONT) == 0);

  // B wakes with two things due at once: its heartbeat (refused: it stops
  // what it held, logged) and its instances' snapshots. Whichever runs
  // first, no late write lands: a snapshot that comes before the stop is
  // refused by the epoch check (mm.fenced, logged); after the stop none is
  // tried. (The test once required the refusal and failed when the stop
  // came first: both orders are right.) The rows below are the proof.
  bool refused = false, stopped = false;
  std::string log;
  const auto read_until = std::chrono::steady_clock::now() + 60s;
  while (!(refused || stopped) && std::chrono::steady_clock::now() < read_until) {
    const std::string line = b.read_line();
    if (line.empty()) break;
    log += line + "\n";
    refused = line.find("mm.fenced") != std::string::npos;
    stopped = line.find("stops serving") != std::string::npos;
  }
  INFO(log);
  CHECK((refused || stopped));
  // The shards B held before its pause: their snapshot rows are A's, under
  // the epochs A took them at, not B's late ones.
  {
    pqxx::connection conn(pg.url());
    pqxx::nontransaction w(conn);
    for (const auto& o : before["owned"]) {
      const std::string r = o["resource"];
      if (r == "sessions") continue;
      const auto row =
          w.exec_params("SELECT lease_epoch FROM matchmaker_state WHERE instance_id = $1", r);
      REQUIRE(row.size() == 1);
      INFO(r);
      CHECK(row[0][0].as<std::uint64_t>(0) > o["epoch"].get<std::uint64_t>());
    }
  }

  // It joins again as a new incarnation and gets a share, never one that
  // A still serves.
  REQUIRE(poll(20s, [&] { return settled(nodes); }));
  const json after = b.get_json("/api/cluster", view_token);
  INFO(after.dump());
  CHECK(after["node"] != old_id);
  CHECK(after["counters"]["lost"].get<int>() >= 2);
  CHECK(after["owned"].size() >= 2);
  // C joins: it gets its share, and every resource is still served once.
  live_server c(node_patch(pg.url(), "c"), 0);
  nodes["c"] = &c;
  REQUIRE(poll(20s, [&] { return settled(nodes); }));
  CHECK(a.stop() == 0);
  CHECK(b.stop() == 0);
  CHECK(c.stop() == 0);
}
