// A matchmakerd process for the benchmarks that measure the product as
// shipped: started on free loopback ports with caches large enough for every
// player, optionally with fast scans that fill them, and watched through its
// HTTP API until its caches stop growing.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mm/testing/child_process.hpp"

namespace mm::bench {

class matchmakerd_process {
 public:
  // `flags` choose the database and the instances; `players` sizes the
  // caches. `fast_fill` scans from the start, every 100 ms, up to 65,536 rows
  // a scan; otherwise the default scan schedule runs (a warm start scans
  // little).
  matchmakerd_process(const std::vector<std::string>& flags, std::size_t players, bool fast_fill) {
    std::vector<std::string> command{MATCHMAKERD_BINARY,
                                     "--http.port",
                                     "0",
                                     "--actor.port",
                                     "0",
                                     "--resp.port",
                                     "0",
                                     "--demo.queries_per_second",
                                     "0",
                                     "--matchmaker.player_cache_size",
                                     std::to_string(players),
                                     "--matchmaker.database_cache_size",
                                     std::to_string(players)};
    command.insert(command.end(), flags.begin(), flags.end());
    if (fast_fill)
      for (const char* a :
           {"--matchmaker.database_scan_first_delay", "0s", "--matchmaker.database_scan_tick",
            "100ms", "--matchmaker.database_scan_max_fetch", "65536"})
        command.emplace_back(a);
    process_ = std::make_unique<test::child_process>(command);
    const std::string actor_line =
        process_->wait_for_line("actor port listening on", std::chrono::seconds(600));
    const std::string http_line = process_->wait_for_line("http listening on http://127.0.0.1:");
    const std::string resp_line = process_->wait_for_line("resp listening on");
    if (actor_line.empty() || http_line.empty() || resp_line.empty())
      throw std::runtime_error("matchmakerd did not start");
    actor_port_ = test::port_of(actor_line);
    http_port_ = test::port_of(http_line);
    resp_port_ = test::port_of(resp_line);
  }

  std::uint16_t actor_port() const { return actor_port_; }
  std::uint16_t http_port() const { return http_port_; }
  std::uint16_t resp_port() const { return resp_port_; }
  long pid() const { return process_->pid(); }
  // SIGTERM and wait: 0 when it stopped cleanly (its snapshots written).
  int stop() { return process_->stop(); }

  // The players its instances hold now, summed.
  std::uint64_t cached_players() const {
    httplib::Client admin("127.0.0.1", http_port_);
    auto r = admin.Get("/api/matchmakers");
    std::uint64_t players = 0;
    if (r && r->status == 200) {
      const auto list = nlohmann::json::parse(r->body)["matchmakers"];
      for (const auto& m : list) players += m.value("players", std::uint64_t{0});
    }
    return players;
  }

  // Waits until the caches hold what they will hold of the table (the
  // buckets' capacities drop some players): no growth for 3 s, or a minute
  // at most. Returns the players cached then.
  std::uint64_t wait_until_settled() const {
    std::uint64_t cached = 0;
    for (int i = 0, still = 0; i < 600 && still < 30; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const std::uint64_t now = cached_players();
      still = now > 0 && now == cached ? still + 1 : 0;
      cached = now;
    }
    return cached;
  }

 private:
  std::unique_ptr<test::child_process> process_;
  std::uint16_t actor_port_ = 0, http_port_ = 0, resp_port_ = 0;
};

// The product as after a restart in production: filled by fast scans,
// stopped (its instances write their snapshots) and started again with the
// default scan schedule, so its background scan does not share the
// measurements' CPU. `cached`: the players it holds then. Throws
// std::runtime_error when it does not start or stop cleanly.
inline std::unique_ptr<matchmakerd_process> warm_matchmakerd(const std::vector<std::string>& flags,
                                                             std::size_t players,
                                                             std::uint64_t* cached = nullptr) {
  std::unique_ptr<matchmakerd_process> server;
  for (const bool fill : {true, false}) {
    server = std::make_unique<matchmakerd_process>(flags, players, fill);
    const std::uint64_t held = server->wait_until_settled();
    if (cached) *cached = held;
    if (fill && server->stop() != 0) throw std::runtime_error("matchmakerd did not stop cleanly");
  }
  return server;
}

}  // namespace mm::bench
