// Session tickets created and matched per second by one, two and three
// matchmakerd nodes on one PostgreSQL database the bench starts, the session
// queues in three partitions (sessions.partitions) spread over the nodes by
// their leases.
//
//   mm_session_nodes_bench [seconds per measurement = 5] [connections per queue = 32]
//
// Three duel queues with a 10 ms tick, one in each partition (arena in 0,
// duel in 1, solo in 2), so every layout runs the same three services with
// the same durable path (claims and the event stream in the store); only
// the nodes they run on differ. The load is the same in every layout: one
// closed-loop HTTP thread per queue (http_load.hpp), `connections`
// keep-alive connections each, every ticket one new player, sent to the node
// that runs the queue's partition (as its GET /api/cluster says). Every two
// tickets of a queue make a match. `created_per_s`: 201s a second;
// `matched_per_s`: players matched a second (the queues' counters, every
// node's); `tick_ms`: the slowest node's mean tick; `machine_busy`: the
// share of every core of the machine in use during the measurement (all
// processes: the nodes, PostgreSQL, the load).
//
// All the nodes, PostgreSQL and the load share this machine's cores: the
// ratios say what the partitions cost and gain here, not what more
// machines add.
#include <httplib.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "http_load.hpp"
#include "matchmakerd_process.hpp"
#include "mm/testing/postgres_server.hpp"
#include "mm/testing/temp_dir.hpp"

namespace {

using namespace mm;
using namespace mm::bench;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* bench_name = "session_nodes";
const char* const queues[] = {"arena", "duel", "solo"};  // partitions 0, 1, 2 of 3

json get(std::uint16_t port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10s);
  auto r = c.Get(path);
  if (!r || r->status != 200) throw std::runtime_error("GET " + path + " failed");
  return json::parse(r->body);
}

std::string queues_file(const test::temp_dir& dir) {
  json c = {{"sessions",
             {{"partitions", 3},
              {"max_outcomes", 10'000'000},
              {"datacenters",
               {{{"name", "paris"}, {"latitude", 48.9}, {"longitude", 2.4}, {"region", "eu"}}}},
              {"queues", json::array()}}}};
  for (const char* q : queues)
    c["sessions"]["queues"].push_back({{"name", q}, {"tick", "10ms"}, {"give_up_after", "600s"}});
  const std::string path = dir.file("session_nodes.json");
  std::ofstream(path) << c.dump(2);
  return path;
}

struct layout_result {
  double created_per_s = 0, matched_per_s = 0, tick_ms = 0;
  double machine_busy = 0;  // of every core, over the measurement
  std::uint64_t refused = 0;
};

// The machine's busy and total CPU time so far (/proc/stat's first line, in
// ticks): what every process here used, PostgreSQL and the load included.
std::pair<double, double> machine_cpu() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  const double busy = user + nice + system + irq + softirq + steal;
  return {busy, busy + idle + iowait};
}

// Each queue's node's HTTP port, once every lease has its planned owner.
std::map<std::string, std::uint16_t> settled_owners(
    const std::vector<std::unique_ptr<matchmakerd_process>>& nodes) {
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(100ms);
    const json c = get(nodes[0]->http_port(), "/api/cluster");
    std::size_t live = 0;  // the list keeps the last hour's nodes, the earlier layouts' too
    for (const auto& n : c["nodes"]) live += n["state"] == "live";
    if (live != nodes.size()) continue;
    bool planned = true;
    for (const auto& l : c["leases"]) planned = planned && l["owner"] == l["planned_owner"];
    if (!planned) continue;
    std::map<std::string, std::uint16_t> url_port;
    for (const auto& n : c["nodes"]) {
      const std::string url = n["http_url"];
      url_port[n["id"]] = static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
    }
    std::map<std::string, std::uint16_t> out;
    for (const auto& p : c["session_partitions"])
      for (const auto& q : p["queues"])
        if (p["owner"].is_string()) out[q] = url_port[p["owner"]];
    // Each node serves what it owns (its services started from the journal).
    bool serving = out.size() == std::size(queues);
    for (const auto& n : nodes)
      serving = serving && get(n->http_port(), "/api/cluster").value("serving", false);
    if (serving) return out;
  }
  throw std::runtime_error("the nodes did not settle within 60 s");
}

// Players matched and the slowest node's mean tick, over every node.
std::pair<double, double> matched_and_tick(
    const std::vector<std::unique_ptr<matchmakerd_process>>& nodes) {
  double matched = 0, tick = 0;
  for (const auto& n : nodes) {
    const json all = get(n->http_port(), "/api/queues");  // held: the loop reads into it
    for (const auto& q : all["queues"]) {
      matched += q.value("players_matched", 0.0);
      if (q["tick_ms"]["mean"].is_number())
        tick = std::max(tick, q["tick_ms"]["mean"].get<double>());
    }
  }
  return {matched, tick};
}

layout_result measure(const std::string& url, const std::string& config, std::size_t count,
                      double seconds, int connections, std::uint64_t& next_player) {
  std::vector<std::unique_ptr<matchmakerd_process>> nodes;
  for (std::size_t i = 0; i < count; ++i)
    nodes.push_back(std::make_unique<matchmakerd_process>(
        std::vector<std::string>{"--config", config, "--database.url", url, "--cluster.total", "1",
                                 "--cluster.node", "n" + std::to_string(i),
                                 "--cluster.takeover_after", "5s"},
        1000, false));
  const auto owner = settled_owners(nodes);
  layout_result out;
  for (const bool measured : {false, true}) {  // a warm-up second first
    const double span = measured ? seconds : 1.0;
    const auto [matched0, tick0] = matched_and_tick(nodes);
    const auto [busy0, total0] = machine_cpu();
    std::vector<std::thread> load;
    std::vector<http_load_result> got(std::size(queues));
    for (std::size_t k = 0; k < std::size(queues); ++k) {
      const std::uint64_t first = next_player;
      next_player += 100'000'000;
      load.emplace_back([&, k, first] {
        std::uint64_t player = first;
        const std::string queue = queues[k];
        got[k] = http_closed_loop(
            owner.at(queue), connections, span,
            [&] {
              const json body = {
                  {"queue", queue},
                  {"players", {{{"id", player++}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}};
              return http_post("/api/tickets", body.dump());
            },
            201);
      });
    }
    for (auto& t : load) t.join();
    const auto [busy1, total1] = machine_cpu();
    const auto [matched1, tick1] = matched_and_tick(nodes);
    (void)tick0;
    if (!measured) continue;
    for (const auto& g : got) {
      out.created_per_s += g.per_s();
      out.refused += g.other;
    }
    out.matched_per_s = (matched1 - matched0) / seconds;
    out.tick_ms = tick1;
    out.machine_busy = total1 > total0 ? (busy1 - busy0) / (total1 - total0) : 0;
  }
  for (auto& n : nodes)
    if (n->stop() != 0) throw std::runtime_error("a node did not stop cleanly");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  const int connections = argc > 2 ? std::atoi(argv[2]) : 32;
  if (test::postgres_server::binaries().empty()) {
    std::printf("mm_session_nodes_bench: skipped, PostgreSQL's server is not installed\n");
    return 0;
  }
  try {
    test::postgres_server pg;
    test::temp_dir dir;
    const std::string config = queues_file(dir);
    std::uint64_t next_player = 1;
    const auto one = measure(pg.url(), config, 1, seconds, connections, next_player);
    const auto two = measure(pg.url(), config, 2, seconds, connections, next_player);
    const auto three = measure(pg.url(), config, 3, seconds, connections, next_player);
    const std::string params = "\"partitions\": 3, \"queues\": 3, \"connections_per_queue\": " +
                               std::to_string(connections) +
                               ", \"seconds\": " + std::to_string(seconds);
    const layout_result* layouts[] = {&one, &two, &three};
    const char* names[] = {"one_node", "two_nodes", "three_nodes"};
    for (int i = 0; i < 3; ++i) {
      const std::string n = names[i];
      emit(bench_name, (n + "_created_per_s").c_str(), layouts[i]->created_per_s, "1/s", params);
      emit(bench_name, (n + "_matched_per_s").c_str(), layouts[i]->matched_per_s, "1/s", params);
      emit(bench_name, (n + "_tick_ms").c_str(), layouts[i]->tick_ms, "ms", params);
      emit(bench_name, (n + "_machine_busy").c_str(), layouts[i]->machine_busy, "fraction", params);
      if (layouts[i]->refused > 0)
        std::fprintf(stderr, "mm_session_nodes_bench: %s: %llu answers other than 201\n", names[i],
                     static_cast<unsigned long long>(layouts[i]->refused));
    }
    emit(bench_name, "session_two_nodes_vs_one", two.created_per_s / one.created_per_s, "ratio",
         params);
    emit(bench_name, "session_three_nodes_vs_one", three.created_per_s / one.created_per_s, "ratio",
         params);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mm_session_nodes_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
