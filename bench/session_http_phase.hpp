// The HTTP phases of mm_session_service_bench: tickets created over HTTP on
// one live matchmakerd (a 10 ms duel queue, every pair matches), an admin
// WebSocket following every event.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "client/event_client.hpp"
#include "http_load.hpp"
#include "matchmakerd_process.hpp"

namespace mm::bench::session_http {

using namespace std::chrono_literals;

struct http_run {
  double created_per_s = 0, matched_per_s = 0;  // at full load
  double created_wide_per_s = 0;                // at full load from `wide_clients`
  double created_connections_per_s = 0;         // from `connections` on one event-driven client
  double created_batched_per_s = 0;             // from `clients`, `batch` tickets a request
  double events_per_s = 0;                      // pushed to one admin WebSocket at full load
  bool events_cut = false;                      // the WebSocket was closed (too slow)
  double half_rate = 0, half_achieved = 0;      // the paced phase: asked, and sent
  std::vector<double> create_ms;                // 201 latency from each create's scheduled time
  std::vector<double> event_ms;                 // commit (at_unix_ms) to the client, paced phase
};

inline double wall_ms_now() {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count()) /
         1000.0;
}

// An admin WebSocket on the events, counting them and timing each from its
// commit, in its own thread until `stop`.
struct event_watcher {
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> events{0};
  std::atomic<bool> cut{false};
  std::mutex mutex;
  std::vector<double> delays_ms;
  bool timing = false;
  std::thread thread;

  explicit event_watcher(std::uint16_t port) {
    client::event_connect c;
    c.port = port;
    auto ws = std::make_shared<client::event_client>(c);
    thread = std::thread([this, ws] {
      while (!stop) {
        const auto text = ws->next(100ms);
        if (!text) {
          if (ws->closed()) {
            cut = true;
            return;
          }
          continue;
        }
        const double now = wall_ms_now();
        const auto m = nlohmann::json::parse(*text, nullptr, false);
        if (!m.is_object() || m.value("type", "") != "event") continue;
        ++events;
        std::lock_guard lock(mutex);
        if (timing) delays_ms.push_back(now - m["at_unix_ms"].get<double>());
      }
    });
  }
  ~event_watcher() {
    stop = true;
    thread.join();
  }
};

// Tickets created over HTTP on one live matchmakerd (a 10 ms duel queue,
// every pair matches): `clients` keep-alive clients as fast as they can for
// `seconds`, with an admin WebSocket following every event; then
// `wide_clients` the same way; then the first clients paced at half their
// rate, each create timed from the moment it was due (so a client that falls
// behind shows it, not hides it); then `connections` keep-alive
// connections driven by one event-driven client; last, `clients` clients
// again, each sending `batch` tickets a request ({"tickets": [...]}).
inline http_run through_http(double seconds, int clients, int wide_clients, int connections,
                             int batch = 100) {
  const nlohmann::json config = {
      {"sessions",
       {{"queues", {{{"name", "duel"}, {"tick", "10ms"}, {"give_up_after", "600s"}}}}}}};
  const std::string config_file = "/tmp/mm_session_service_bench.json";
  std::ofstream(config_file) << config.dump();
  bench::matchmakerd_process server(
      {"--config", config_file, "--database.path", "/tmp/mm_session_service_bench.db",
       "--demo.players", "0", "--demo.session_players_per_second", "0"},
      1000, false);
  http_run out;
  std::atomic<std::uint64_t> next{1};
  const auto body = [&next] {
    return nlohmann::json{{"queue", "duel"}, {"players", {{{"id", next++}, {"mmr", 1500}}}}}.dump();
  };
  event_watcher watcher(server.http_port());
  // Creates per second from n clients, each as fast as its 201s come.
  const auto full_load = [&](int n) {
    std::atomic<std::uint64_t> created{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    const double t0 = bench::now_s();
    for (int c = 0; c < n; ++c)
      threads.emplace_back([&] {
        httplib::Client http("127.0.0.1", server.http_port());
        http.set_keep_alive(true);
        http.set_tcp_nodelay(true);
        while (!stop) {
          auto r = http.Post("/api/tickets", body(), "application/json");
          if (r && r->status == 201) ++created;
        }
      });
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& t : threads) t.join();
    return std::pair(static_cast<double>(created), bench::now_s() - t0);
  };
  {
    const std::uint64_t events_before = watcher.events;
    const auto [created, elapsed] = full_load(clients);
    std::this_thread::sleep_for(200ms);  // the last ticks and events
    out.created_per_s = created / elapsed;
    out.events_per_s = static_cast<double>(watcher.events - events_before) / elapsed;
    httplib::Client http("127.0.0.1", server.http_port());
    auto r = http.Get("/api/queues");
    if (r && r->status == 200)
      out.matched_per_s =
          nlohmann::json::parse(r->body)["queues"][0]["matched"].get<double>() / elapsed;
  }
  {
    // The service's capacity over HTTP: enough clients that each one's wait
    // for its commit no longer bounds the rate.
    const auto [created, elapsed] = full_load(wide_clients);
    out.created_wide_per_s = created / elapsed;
    std::this_thread::sleep_for(200ms);
  }
  {
    // Half load, paced: client c sends its k-th create at t0 + (k * clients + c) / rate.
    out.half_rate = out.created_per_s / 2;
    {
      std::lock_guard lock(watcher.mutex);
      watcher.timing = true;
    }
    std::mutex m;
    std::atomic<std::uint64_t> sent{0};
    std::vector<std::thread> threads;
    const auto t0 = std::chrono::steady_clock::now();
    const auto until = t0 + std::chrono::duration<double>(seconds);
    for (int c = 0; c < clients; ++c)
      threads.emplace_back([&, c] {
        httplib::Client http("127.0.0.1", server.http_port());
        http.set_keep_alive(true);
        http.set_tcp_nodelay(true);
        std::vector<double> mine;
        for (std::uint64_t k = 0;; ++k) {
          const auto due =
              t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(
                           static_cast<double>(k * static_cast<std::uint64_t>(clients) +
                                               static_cast<std::uint64_t>(c)) /
                           out.half_rate));
          if (due >= until) break;
          std::this_thread::sleep_until(due);
          auto r = http.Post("/api/tickets", body(), "application/json");
          if (r && r->status == 201) {
            ++sent;
            mine.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - due)
                    .count());
          }
        }
        std::lock_guard lock(m);
        out.create_ms.insert(out.create_ms.end(), mine.begin(), mine.end());
      });
    for (auto& t : threads) t.join();
    out.half_achieved = static_cast<double>(sent) / seconds;
    std::this_thread::sleep_for(200ms);
    std::lock_guard lock(watcher.mutex);
    out.event_ms = watcher.delays_ms;
  }
  out.events_cut = watcher.cut;
  {
    // The server's own capacity: hundreds of creates in flight from one
    // client thread (http_load.hpp), as the actor path keeps thousands. (Last:
    // at this rate the WebSocket follower may be cut off as too slow, which
    // the phases above must not see.)
    const auto r = http_closed_loop(
        server.http_port(), connections, seconds, [&] { return http_post("/api/tickets", body()); },
        201);
    out.created_connections_per_s = r.per_s();
  }
  {
    // Batches: one request, one exchange and one reply for `batch` tickets,
    // each created as alone (counted when its result says it waits).
    std::atomic<std::uint64_t> created{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    const double t0 = bench::now_s();
    for (int c = 0; c < clients; ++c)
      threads.emplace_back([&] {
        httplib::Client http("127.0.0.1", server.http_port());
        http.set_keep_alive(true);
        http.set_tcp_nodelay(true);
        while (!stop) {
          nlohmann::json tickets = nlohmann::json::array();
          for (int k = 0; k < batch; ++k) tickets.push_back(nlohmann::json::parse(body()));
          auto r = http.Post("/api/tickets", nlohmann::json{{"tickets", tickets}}.dump(),
                             "application/json");
          if (!r || r->status != 200) continue;
          const auto answer = nlohmann::json::parse(r->body, nullptr, false);
          if (!answer.is_object() || !answer.contains("results")) continue;
          for (const auto& item : answer["results"])
            if (item.contains("ticket")) ++created;
        }
      });
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& t : threads) t.join();
    out.created_batched_per_s = static_cast<double>(created) / (bench::now_s() - t0);
  }
  server.stop();
  for (const char* f : {"/tmp/mm_session_service_bench.db", "/tmp/mm_session_service_bench.db-wal",
                        "/tmp/mm_session_service_bench.db-shm"})
    std::remove(f);
  std::remove(config_file.c_str());
  return out;
}

}  // namespace mm::bench::session_http
