// The cost of recording the async traffic (record_queries): the same engine's
// queries with and without its recorder (engine_observer.hpp, a
// query_recording writing to a temporary directory), alternating rounds, as
// the ratio of their rates in the same run (docs/performance.md).
//
//   mm_query_recording_bench [players] [rounds]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.hpp"
#include "mm/engine/engine.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/testing/temp_dir.hpp"
#include "query_recording.hpp"
#include "server_config.hpp"

int main(int argc, char** argv) {
  using mm::bench::emit;
  using mm::bench::now_s;
  const std::size_t players = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200'000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::size_t per_round = 500'000;

  mm::synthetic_population pop;
  mm::rng r(2026);
  const auto rows = mm::make_players(pop, players, 1, r);
  const mm::generic_profile profile(mm::demo_profile_config());
  mm::options o;
  o.player_cache_size = static_cast<std::uint32_t>(players);
  o.buckets_rebalance_sample_count = static_cast<std::uint32_t>(players);
  o.random_seed = 11;
  mm::engine<mm::generic_profile> e(o, profile);
  std::vector<mm::generic_model> models;
  for (const auto& row : rows) profile.make_models(row, models);
  for (const auto& m : models) e.add_sample(m);
  e.rebalance(0);
  for (const auto& m : models) e.update(m.id(), m);
  std::vector<mm::match_request<mm::generic_query>> reqs(100'000);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].query = mm::make_query(pop, players + 1 + i, r);
    reqs[i].num_retries = static_cast<std::uint32_t>(i % 3);
  }

  mm::test::temp_dir dir;
  mm::server::query_recording_settings s;
  s.enabled = true;
  s.dir = dir.file("rec");
  s.max_file_bytes = 256ull << 20;
  s.max_files = 2;
  const auto recording =
      std::make_shared<mm::server::query_recording>(s, mm::server::json::object());
  const auto observer = mm::server::observer_of(recording, 0);

  const auto run = [&](bool recorded) {
    e.set_observer(recorded ? observer : nullptr);
    const double t = now_s();
    std::size_t ok = 0;
    for (std::size_t i = 0; i < per_round; ++i)
      ok += e.find_match(reqs[i % reqs.size()]).type == mm::match_type::success;
    const double qps = static_cast<double>(per_round) / (now_s() - t);
    if (recorded) recording->flush();  // the writer's backlog is not carried into the next round
    return ok > 0 ? qps : 0.0;
  };
  std::vector<double> ratios;
  double plain_sum = 0, recorded_sum = 0;
  for (int k = 0; k < rounds; ++k) {
    const double plain = run(false);
    const double recorded = run(true);
    plain_sum += plain;
    recorded_sum += recorded;
    ratios.push_back(recorded / plain);
  }
  std::sort(ratios.begin(), ratios.end());
  const std::string params = "\"players\": " + std::to_string(players) +
                             ", \"rounds\": " + std::to_string(rounds) +
                             ", \"queries_per_round\": " + std::to_string(per_round) +
                             ", \"dropped\": " + std::to_string(recording->dropped());
  emit("query_recording", "plain_queries_per_s", plain_sum / rounds, "1/s", params);
  emit("query_recording", "recorded_queries_per_s", recorded_sum / rounds, "1/s", params);
  emit("query_recording", "recorded_vs_plain", ratios[ratios.size() / 2], "ratio",
       params + ", \"lowest\": " + std::to_string(ratios.front()) +
           ", \"highest\": " + std::to_string(ratios.back()));
  return 0;
}
