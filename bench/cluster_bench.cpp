// Queries of two matchmakerd nodes together against one node, on one
// PostgreSQL database the bench starts, as a game server reaches them: its
// cluster client connected to every node's actor port, in the bench's
// process, on loopback.
//
//   mm_cluster_bench [players = 200000] [seconds per measurement = 3]
//
// Both layouts run the same set of two instances (cluster.total = 2) with the
// same caches: one node that runs both, or two nodes that run one each. The
// caches are filled once by fast scans and written as snapshots; each layout
// then starts warm from them, with the default scan schedule, so a
// background scan does not share the measurements' CPU. Closed loop, 64
// queries in flight; the servers' CPU (all nodes) from /proc. Each layout is
// measured in two turns and its best turn is reported.
//
// On one machine both layouts share the same cores: the ratio is what
// splitting a set across nodes costs (a query that a node cannot answer
// travels on to the other node), not what a second machine adds.
//
// Then a takeover: three nodes share the two shards and the session queues
// through leases (cluster.takeover_after 2 s), under a closed loop of
// queries (8 at a time, one per thread) through the cluster client. The node
// that runs mm-0 is killed (SIGKILL). `takeover_s`: from the kill to every
// resource served again, as the survivors' GET /api/cluster shows it;
// `takeover_queries_during_vs_before`: queries answered per second from the
// kill to served again ÷ in the 3 s before the kill.
#include <signal.h>

#include <atomic>
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actor_load.hpp"
#include "bench_util.hpp"
#include "matchmakerd_process.hpp"
#include "mm/actors/cluster_client.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/pg_store.hpp"
#include "mm/testing/postgres_server.hpp"

namespace {

using namespace mm;
using namespace mm::bench;
using namespace std::chrono_literals;
using handle = actors::interfaces<generic_profile>::client;

constexpr const char* bench_name = "cluster";
constexpr std::size_t depth = 64;

// A node of the set of two on `url`, running `owned`.
std::vector<std::string> node_flags(const std::string& url, const std::string& owned) {
  return {"--database.url", url, "--cluster.total", "2", "--cluster.owned", owned};
}

struct layout_result {
  measurement m;
  double server_cpu_us = 0;  // all nodes' CPU per answered query
};

// The nodes of one layout, started warm; the best of two turns of the
// cluster client's closed loop against them.
layout_result measure(caf::actor_system& sys, const std::string& url,
                      const std::vector<std::string>& owned_by_node,
                      const std::vector<std::vector<std::uint32_t>>& shards, std::size_t players,
                      const std::vector<request_t>& reqs, double seconds) {
  std::vector<std::unique_ptr<matchmakerd_process>> nodes;
  std::vector<actors::cluster_node<generic_profile>> members;
  for (std::size_t i = 0; i < owned_by_node.size(); ++i) {
    nodes.push_back(std::make_unique<matchmakerd_process>(node_flags(url, owned_by_node[i]),
                                                          players, /*fast_fill=*/false));
    nodes.back()->wait_until_settled();
    auto node = actors::connect_actor<handle>(sys, "127.0.0.1", nodes.back()->actor_port(), false);
    if (!node) throw std::runtime_error("actor port: " + sys.render(node.error()));
    members.push_back({*node, shards[i]});
  }
  auto cluster = actors::spawn_cluster_client<generic_profile>(sys, members, 2, 1000ms, 5);
  const auto sender = handle_sender(caf::actor_cast<front>(cluster));
  drive(sys, sender, reqs, 1, depth, 0, 1.0);  // warm-up, not counted
  layout_result best;
  for (int turn = 0; turn < 2; ++turn) {
    std::vector<double> cpu0;
    for (auto& n : nodes) cpu0.push_back(process_cpu_s(n->pid()));
    const measurement m = drive(sys, sender, reqs, 1, depth, 0, seconds);
    double cpu = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i) cpu += process_cpu_s(nodes[i]->pid()) - cpu0[i];
    if (m.qps > best.m.qps) best = {m, cpu * 1e6 / (m.qps * seconds)};
  }
  caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
  for (auto& n : nodes)
    if (n->stop() != 0) throw std::runtime_error("a node did not stop cleanly");
  return best;
}

struct takeover_result {
  double takeover_s = 0;
  double qps_before = 0, qps_during = 0;
  std::uint64_t failed_during = 0;
};

// resource -> the names of the nodes that serve it now (their /api/cluster).
std::map<std::string, int> served(const std::vector<std::unique_ptr<matchmakerd_process>>& nodes,
                                  const std::vector<bool>& alive, std::string* owner_of_mm0) {
  std::map<std::string, int> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!alive[i]) continue;
    httplib::Client c("127.0.0.1", nodes[i]->http_port());
    c.set_read_timeout(2s);
    auto r = c.Get("/api/cluster");
    if (!r || r->status != 200) continue;
    const auto view = nlohmann::json::parse(r->body);
    if (!view.value("serving", false)) continue;
    for (const auto& o : view["owned"]) {
      ++out[o["resource"].get<std::string>()];
      if (owner_of_mm0 && o["resource"] == "mm-0") *owner_of_mm0 = std::to_string(i);
    }
  }
  return out;
}

bool all_served_once(const std::map<std::string, int>& s) {
  for (const char* r : {"mm-0", "mm-1", "sessions"})
    if (!s.count(r) || s.at(r) != 1) return false;
  return true;
}

takeover_result measure_takeover(caf::actor_system& sys, const std::string& url,
                                 std::size_t players, const std::vector<request_t>& reqs) {
  std::vector<std::unique_ptr<matchmakerd_process>> nodes;
  std::vector<actors::cluster_node<generic_profile>> members;
  std::vector<bool> alive(3, true);
  for (int i = 0; i < 3; ++i) {
    nodes.push_back(std::make_unique<matchmakerd_process>(
        std::vector<std::string>{"--database.url", url, "--cluster.total", "2", "--cluster.node",
                                 "n" + std::to_string(i), "--cluster.takeover_after", "2s"},
        players, /*fast_fill=*/false));
    auto node = actors::connect_actor<handle>(sys, "127.0.0.1", nodes.back()->actor_port(), false);
    if (!node) throw std::runtime_error("actor port: " + sys.render(node.error()));
    members.push_back({*node, {}});
  }
  std::string victim;
  const auto settle_by = std::chrono::steady_clock::now() + 60s;
  while (!all_served_once(served(nodes, alive, &victim)) || victim.empty()) {
    if (std::chrono::steady_clock::now() > settle_by)
      throw std::runtime_error("three nodes did not share the resources within 60 s");
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(3s);  // the shards' warm starts done; the client's map refreshed
  auto cluster = actors::spawn_cluster_client<generic_profile>(sys, members, 2, 1000ms, 5);
  std::this_thread::sleep_for(2s);

  // Closed loop: each thread one query at a time; answers stamped.
  std::atomic<bool> stop{false};
  std::mutex m;
  std::vector<std::pair<double, bool>> answers;  // (time, answered)
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      caf::scoped_actor self{sys};
      std::vector<std::pair<double, bool>> mine;
      for (std::size_t i = t; !stop; i = (i + 8) % reqs.size()) {
        bool ok = false;
        self->request(cluster, 5s, actors::find_atom::value, reqs[i])
            .receive([&](match_reply<generic_model>&) { ok = true; }, [&](caf::error&) {});
        mine.emplace_back(now_s(), ok);
      }
      std::lock_guard lock(m);
      answers.insert(answers.end(), mine.begin(), mine.end());
    });
  std::this_thread::sleep_for(4s);
  const std::size_t k = static_cast<std::size_t>(std::stoi(victim));
  const double killed_at = now_s();
  ::kill(static_cast<pid_t>(nodes[k]->pid()), SIGKILL);
  alive[k] = false;
  double served_at = 0;
  while (served_at == 0) {
    if (now_s() - killed_at > 60) throw std::runtime_error("no takeover within 60 s");
    if (all_served_once(served(nodes, alive, nullptr)))
      served_at = now_s();
    else
      std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(2s);
  stop = true;
  for (auto& t : threads) t.join();
  caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);

  takeover_result out;
  out.takeover_s = served_at - killed_at;
  std::uint64_t before = 0, during = 0;
  for (const auto& [at, ok] : answers) {
    if (at >= killed_at - 3 && at < killed_at && ok) ++before;
    if (at >= killed_at && at < served_at) (ok ? during : out.failed_during) += 1;
  }
  out.qps_before = static_cast<double>(before) / 3.0;
  out.qps_during = static_cast<double>(during) / out.takeover_s;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (alive[i] && nodes[i]->stop() != 0) throw std::runtime_error("a node did not stop cleanly");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t players = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200'000;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  if (test::postgres_server::binaries().empty()) {
    std::printf("mm_cluster_bench: skipped, PostgreSQL's server is not installed\n");
    return 0;
  }
  try {
    test::postgres_server pg;
    {
      pg_store store(pg.url());
      rng r(2026);
      for (std::size_t from = 0; from < players; from += 10'000)
        store.upsert_players(make_players(synthetic_population{},
                                          std::min<std::size_t>(10'000, players - from),
                                          static_cast<player_id>(from) + 1, r));
    }
    // One node with both instances fills the caches by fast scans and
    // writes the snapshots both layouts start from (rows mm-0 and mm-1).
    std::uint64_t cached = 0;
    {
      matchmakerd_process filler(node_flags(pg.url(), "0-1"), players, /*fast_fill=*/true);
      cached = filler.wait_until_settled();
      if (filler.stop() != 0) throw std::runtime_error("the filling node did not stop cleanly");
    }

    rng r(11);
    std::vector<request_t> reqs;
    for (std::size_t i = 0; i < 200'000; ++i) {
      request_t q;
      q.query = make_query(synthetic_population{}, 1 + r.below(players), r);
      reqs.push_back(q);
    }
    caf::actor_system_config cfg;
    actors::use_network(cfg, {});
    cfg.set("logger.verbosity", caf::atom("quiet"));
    actors::add_message_types<generic_profile>(cfg, "generic");
    caf::actor_system sys{cfg};

    const auto one = measure(sys, pg.url(), {"0-1"}, {{0, 1}}, players, reqs, seconds);
    const auto two = measure(sys, pg.url(), {"0", "1"}, {{0}, {1}}, players, reqs, seconds);

    const std::string params = "\"players\": " + std::to_string(players) +
                               ", \"cached\": " + std::to_string(cached) +
                               ", \"instances\": 2, \"in_flight\": " + std::to_string(depth);
    emit(bench_name, "one_node_queries_per_s", one.m.qps, "1/s", params);
    emit(bench_name, "two_nodes_queries_per_s", two.m.qps, "1/s", params);
    emit(bench_name, "two_nodes_vs_one", two.m.qps / one.m.qps, "ratio", params);
    emit(bench_name, "one_node_server_cpu_us_per_query", one.server_cpu_us, "us", params);
    emit(bench_name, "two_nodes_server_cpu_us_per_query", two.server_cpu_us, "us", params);
    emit(bench_name, "two_nodes_cpu_vs_one", two.server_cpu_us / one.server_cpu_us, "ratio",
         params);
    emit(bench_name, "one_node_latency_p99_us", one.m.p99, "us", params);
    emit(bench_name, "two_nodes_latency_p99_us", two.m.p99, "us", params);
    const auto t = measure_takeover(sys, pg.url(), players, reqs);
    const std::string takeover_params = params +
                                        ", \"nodes\": 3, \"takeover_after_s\": 2, "
                                        "\"threads\": 8";
    emit(bench_name, "takeover_s", t.takeover_s, "s", takeover_params);
    emit(bench_name, "takeover_queries_per_s_before", t.qps_before, "1/s", takeover_params);
    emit(bench_name, "takeover_queries_per_s_during", t.qps_during, "1/s", takeover_params);
    emit(bench_name, "takeover_queries_during_vs_before", t.qps_during / t.qps_before, "ratio",
         takeover_params);
    emit(bench_name, "takeover_queries_failed_during", static_cast<double>(t.failed_during), "",
         takeover_params);
    if (one.m.errors + two.m.errors > 0)
      std::fprintf(stderr, "mm_cluster_bench: %llu errors\n",
                   static_cast<unsigned long long>(one.m.errors + two.m.errors));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mm_cluster_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
