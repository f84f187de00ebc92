// The admin HTTP API under load, against a live matchmakerd on loopback with
// the demo's 50,000 players. The reference, measured in the same run, is a
// static file from the same server (HTTP and threading cost, no matchmaking),
// so the ratio says what a query through the API adds; and ticket polls
// (GET /api/tickets/{id}) against the same reference.
//
//   mm_server_bench [seconds per phase = 3] [client threads = 2] [matchmakerd flags...]
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "mm/engine/random.hpp"
#include "mm/testing/child_process.hpp"
#include "mm/testing/temp_dir.hpp"

namespace {

using json = nlohmann::json;

struct phase_result {
  double per_second = 0;
  double p50_us = 0, p99_us = 0;
  double server_cpu_us = 0;  // the server's CPU time per request
  std::uint64_t failures = 0;
};

long server_pid = 0;  // whose CPU time each phase reads

// `threads` keep-alive clients send `request` for `seconds`.
template <class Request>
phase_result load(std::uint16_t port, double seconds, int threads, Request request) {
  const double cpu0 = mm::bench::process_cpu_s(server_pid);
  std::vector<std::vector<double>> latencies(threads);
  std::atomic<std::uint64_t> failures{0};
  const double end = mm::bench::now_s() + seconds;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      httplib::Client c("127.0.0.1", port);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      mm::rng r(static_cast<std::uint64_t>(t) + 1);
      while (mm::bench::now_s() < end) {
        const double t0 = mm::bench::now_s();
        const bool ok = request(c, r);
        latencies[t].push_back((mm::bench::now_s() - t0) * 1e6);
        if (!ok) ++failures;
      }
    });
  for (auto& th : pool) th.join();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  phase_result out;
  out.per_second = static_cast<double>(all.size()) / seconds;
  if (!all.empty()) {
    out.p50_us = all[all.size() / 2];
    out.p99_us = all[all.size() * 99 / 100];
  }
  out.failures = failures;
  if (!all.empty())
    out.server_cpu_us =
        (mm::bench::process_cpu_s(server_pid) - cpu0) * 1e6 / static_cast<double>(all.size());
  return out;
}

// Loopback connections held open: `idle` that never send a byte, and `slow`
// that send half a request head and a byte now and then (touch()).
class flood {
 public:
  flood(std::uint16_t port, int idle, int slow) {
    for (int i = 0; i < idle + slow; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(port);
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        if (fd >= 0) ::close(fd);
        continue;
      }
      if (i >= idle) {
        slow_.push_back(fd);
        ::send(fd, "GET / HTTP/1.1\r\nHo", 19, MSG_NOSIGNAL);
      } else {
        idle_.push_back(fd);
      }
    }
  }
  ~flood() {
    for (int fd : idle_) ::close(fd);
    for (int fd : slow_) ::close(fd);
  }
  void touch() {
    for (int fd : slow_) ::send(fd, "o", 1, MSG_NOSIGNAL);
  }

 private:
  std::vector<int> idle_, slow_;
};

// A phase's rate, latency and the server's CPU a request, as `name`_*.
void emit_phase(const std::string& name, const phase_result& p, const std::string& params) {
  using mm::bench::emit;
  emit("server", (name + "_per_s").c_str(), p.per_second, "req/s", params);
  emit("server", (name + "_p50_us").c_str(), p.p50_us, "us", params);
  emit("server", (name + "_p99_us").c_str(), p.p99_us, "us", params);
  // Where the time goes: the server's CPU per request (the demo's own
  // traffic and scan included, a few percent), against the wall time.
  emit("server", (name + "_server_cpu_us").c_str(), p.server_cpu_us, "us", params);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  mm::test::temp_dir dir;
  std::vector<std::string> command{MATCHMAKERD_BINARY,
                                   "--database.path",
                                   dir.file("bench.db"),
                                   "--demo.players",
                                   "50000",
                                   "--http.port",
                                   "0",
                                   "--actor.port",
                                   "-1",
                                   "--matchmaker.database_scan_first_delay",
                                   "0s",
                                   "--matchmaker.database_scan_tick",
                                   "500ms",
                                   "--matchmaker.database_scan_max_fetch",
                                   "8192",
                                   "--matchmaker.player_cache_size",
                                   "30000"};
  for (int i = 3; i < argc; ++i) command.emplace_back(argv[i]);  // to try a setting
  mm::test::child_process server(command);
  server_pid = server.pid();
  const std::string line = server.wait_for_line("http listening on http://127.0.0.1:");
  if (line.empty()) {
    std::fprintf(stderr, "matchmakerd did not start\n");
    return 1;
  }
  const auto port = mm::test::port_of(line);
  httplib::Client admin("127.0.0.1", port);
  for (int i = 0; i < 400; ++i) {  // until the caches hold most of the players
    auto r = admin.Get("/api/matchmakers");
    std::uint64_t players = 0;
    if (r && r->status == 200) {
      const json list = json::parse(r->body)["matchmakers"];  // owned: not a temporary's member
      for (const auto& m : list) players += m.value("players", 0);
    }
    if (players > 40'000) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string params = "\"threads\": " + std::to_string(threads) + ", \"instances\": 2";

  const auto stat = load(port, seconds, threads, [](httplib::Client& c, mm::rng&) {
    auto r = c.Get("/style.css");
    return r && r->status == 200;
  });
  const auto query = load(port, seconds, threads, [](httplib::Client& c, mm::rng& r) {
    const json body = {{"attacker_id", 1'000'000 + r.below(1'000'000)},
                       {"mmr", 900 + r.below(1200)},
                       {"attributes", {{"region", r.below(4)}, {"guild", r.below(2000)}}}};
    auto res = c.Post("/api/query", body.dump(), "application/json");
    return res && res->status == 200;
  });
  // The same queries, 64 to a request ({"queries": [...]}): per request here,
  // per query below.
  constexpr int per_batch = 64;
  const auto batched = load(port, seconds, threads, [](httplib::Client& c, mm::rng& r) {
    json list = json::array();
    for (int i = 0; i < per_batch; ++i)
      list.push_back({{"attacker_id", 1'000'000 + r.below(1'000'000)},
                      {"mmr", 900 + r.below(1200)},
                      {"attributes", {{"region", r.below(4)}, {"guild", r.below(2000)}}}});
    auto res = c.Post("/api/query", json{{"queries", list}}.dump(), "application/json");
    return res && res->status == 200;
  });
  const auto test = load(port, seconds, threads, [](httplib::Client& c, mm::rng& r) {
    const json body = {{"attacker_id", 1'000'000 + r.below(1'000'000)},
                       {"mmr", 900 + r.below(1200)}};
    auto res = c.Post("/api/test-query", body.dump(), "application/json");
    return res && res->status == 200;
  });
  // Ticket polls (GET /api/tickets/{id}, no wait) of 1,000 tickets of the
  // demo's co-op queue: some wait, the rest are matched by the demo's own
  // players meanwhile.
  std::vector<std::string> tickets;
  for (std::uint64_t i = 0; i < 1'000; ++i) {
    const json body = {{"queue", "coop"},
                       {"players",
                        {{{"id", 5'000'000'000ull + i},
                          {"mmr", 1000 + (i * 37) % 1000},
                          {"rtt_ms", {{"frankfurt", 15 + i % 40}, {"virginia", 90}}}}}}};
    auto r = admin.Post("/api/tickets", body.dump(), "application/json");
    if (r && r->status == 201) tickets.push_back(json::parse(r->body)["ticket"]);
  }
  const auto poll = load(port, seconds, threads, [&tickets](httplib::Client& c, mm::rng& r) {
    if (tickets.empty()) return false;
    auto res = c.Get("/api/tickets/" + tickets[r.below(tickets.size())]);
    return res && res->status == 200;
  });
  // The same polls of ids never issued: the books do not hold them, so each
  // goes through the session bridge's actor and the service (a 404), the
  // way every poll went before the books were read on the network thread.
  const auto poll_via_service = load(port, seconds, threads, [](httplib::Client& c, mm::rng& r) {
    char id[17];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(r.below(1ull << 62)));
    auto res = c.Get(std::string("/api/tickets/") + id);
    return res && res->status == 404;
  });
  const auto metrics = load(port, seconds, 1, [](httplib::Client& c, mm::rng&) {
    auto r = c.Get("/metrics");
    return r && r->status == 200;
  });
  const auto metrics_bytes = admin.Get("/metrics")->body.size();

  // The same static files and queries while 2,000 idle connections and 16 slow
  // senders are held open (the connections a thread-per-connection server
  // would give its threads to).
  flood crowd(port, 2000, 16);
  const double t0 = mm::bench::now_s();
  httplib::Client fresh("127.0.0.1", port);
  const bool first_ok = [&] {
    auto r = fresh.Get("/api/config");
    return r && r->status == 200;
  }();
  const double first_ms = (mm::bench::now_s() - t0) * 1e3;
  crowd.touch();
  const auto stat_flood = load(port, seconds, threads, [](httplib::Client& c, mm::rng&) {
    auto r = c.Get("/style.css");
    return r && r->status == 200;
  });
  crowd.touch();
  const auto query_flood = load(port, seconds, threads, [](httplib::Client& c, mm::rng& r) {
    const json body = {{"attacker_id", 1'000'000 + r.below(1'000'000)},
                       {"mmr", 900 + r.below(1200)}};
    auto res = c.Post("/api/query", body.dump(), "application/json");
    return res && res->status == 200;
  });

  using mm::bench::emit;
  emit("server", "static_file_per_s", stat.per_second, "req/s", params);
  emit("server", "static_file_server_cpu_us", stat.server_cpu_us, "us", params);
  emit_phase("api_query", query, params);
  emit("server", "api_query_vs_static_ratio", query.per_second / stat.per_second, "ratio", params);
  const std::string bp = params + ", \"queries_per_request\": " + std::to_string(per_batch);
  emit("server", "api_query_batched_queries_per_s", batched.per_second * per_batch, "1/s", bp);
  emit("server", "api_query_batched_vs_single", batched.per_second * per_batch / query.per_second,
       "ratio", bp);
  emit("server", "api_query_batched_server_cpu_us_per_query", batched.server_cpu_us / per_batch,
       "us", bp);
  emit("server", "api_test_query_per_s", test.per_second, "req/s", params);
  const std::string pp = params + ", \"tickets\": " + std::to_string(tickets.size());
  emit_phase("ticket_poll", poll, pp);
  emit("server", "ticket_poll_vs_static_ratio", poll.per_second / stat.per_second, "ratio", pp);
  emit_phase("ticket_poll_via_service", poll_via_service, params);
  emit("server", "ticket_poll_vs_via_service", poll.per_second / poll_via_service.per_second,
       "ratio", pp);
  emit("server", "metrics_scrape_ms", metrics.per_second > 0 ? 1000.0 / metrics.per_second : 0,
       "ms", "\"bytes\": " + std::to_string(metrics_bytes));
  const std::string flood_params = params + ", \"idle_connections\": 2000, \"slow_senders\": 16";
  emit("server", "flood_first_answer_ms", first_ms, "ms", flood_params);
  emit("server", "static_file_under_flood_per_s", stat_flood.per_second, "req/s", flood_params);
  emit("server", "static_flood_vs_quiet_ratio", stat_flood.per_second / stat.per_second, "ratio",
       flood_params);
  emit("server", "api_query_under_flood_p99_us", query_flood.p99_us, "us", flood_params);
  emit("server", "failures",
       static_cast<double>(stat.failures + query.failures + batched.failures + test.failures +
                           poll.failures + poll_via_service.failures + metrics.failures +
                           stat_flood.failures + query_flood.failures + (first_ok ? 0 : 1)),
       "requests", params);
  return server.stop() == 0 ? 0 : 1;
}
