// Simulator benchmark: how fast mmsim's default days run, on one thread.
//
//   mm_sim_bench [runs = 3]
//
// - sim_session_player_seconds_per_s: the default session day (40,000 joins,
//   matchmakerd's 4-player co-op queue, 30 datacenters): simulated
//   player-seconds (every online player's time) per second of wall time.
//   Its reference in the same run is the session queue's own share of that
//   time (add and tick): session_sim_overhead = wall / engine, the cost of
//   the simulator's own bookkeeping around the real engine (1.0 would be
//   none).
// - sim_async_player_seconds_per_s: the default async day (20,000 players,
//   4 attacks each, SQLite table and scan): players in the table x simulated
//   seconds per second of wall time (the engine day; the uniform reference
//   day is timed apart). Reference: the engine's and SQLite's share of the
//   wall time, async_sim_overhead = wall / (engine + SQLite), and SQLite's
//   share alone (async_sqlite_share).
// Each figure is the median of `runs` runs; realtime_factor is simulated
// seconds per wall second.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "mm/sim/async_day.hpp"
#include "mm/sim/session_day.hpp"
#include "mm/testing/temp_dir.hpp"
#include "session_config.hpp"

using mm::bench::emit;

namespace {

constexpr const char* bench_name = "sim";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string runs_field(int runs) {
  return "\"runs\": " + std::to_string(runs);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  namespace sim = mm::sim;

  sim::session_day_config s;
  s.queue = mm::server::demo_queue();
  s.latency = mm::session::latency_model(mm::server::demo_datacenters(), 2.0);
  mm::rng r(1);
  s.warm_up = std::chrono::seconds(7200);  // as mmsim runs it
  s.joins = sim::schedule_joins(sim::default_places(), sim::default_diurnal_curve(), 40'000,
                                1 + 2.0 / 24, r, -7200);
  std::vector<double> rate, overhead, realtime;
  for (int i = 0; i < runs; ++i) {
    const auto rep = sim::run_session_day(s);
    rate.push_back(rep.player_seconds / rep.wall_seconds);
    overhead.push_back(rep.wall_seconds / rep.engine_seconds);
    realtime.push_back(86'400 / rep.wall_seconds);
  }
  emit(bench_name, "sim_session_player_seconds_per_s", median(rate), "player-s/s",
       runs_field(runs) + ", \"joins\": 40000");
  emit(bench_name, "session_sim_overhead", median(overhead), "ratio", runs_field(runs));
  emit(bench_name, "session_realtime_factor", median(realtime), "x", runs_field(runs));

  rate.clear();
  overhead.clear();
  realtime.clear();
  std::vector<double> reference, sqlite_share;
  for (int i = 0; i < runs; ++i) {
    mm::test::temp_dir dir;
    sim::async_day_config a;
    a.places = sim::default_places();
    a.curve = sim::default_diurnal_curve();
    a.engine = sim::default_async_options(a.players);
    a.warm_up = std::chrono::seconds(7200);  // as mmsim runs it
    a.database = dir.file("players.db");
    const auto rep = sim::run_async_day(a);
    rate.push_back(rep.player_seconds / rep.wall_seconds);
    overhead.push_back(rep.wall_seconds / (rep.engine_seconds + rep.database_seconds));
    realtime.push_back(86'400 / rep.wall_seconds);
    reference.push_back(rep.reference_seconds);
    sqlite_share.push_back(rep.database_seconds / rep.wall_seconds);
  }
  emit(bench_name, "sim_async_player_seconds_per_s", median(rate), "player-s/s",
       runs_field(runs) + ", \"players\": 20000");
  emit(bench_name, "async_sim_overhead", median(overhead), "ratio", runs_field(runs));
  emit(bench_name, "async_realtime_factor", median(realtime), "x", runs_field(runs));
  emit(bench_name, "async_sqlite_share", median(sqlite_share), "ratio", runs_field(runs));
  emit(bench_name, "async_reference_day_s", median(reference), "s", runs_field(runs));
  return 0;
}
