// Actor benchmark: queries through CAF actors against 1,000,000
// cached players, with load generators keeping many requests in flight. Paired
// in the same run with the bare CAF round trip (the same messages answered by a
// trivial handler), so the ratio says what the matchmaker costs on top of CAF.
//
//   mm_actor_bench [players] [seconds per measurement] [all|routing|rates]
//
// `routing` runs only the in-process paths (no worker-idle comparison, no
// network layer): quicker, for work on the routing. `rates` runs only the
// fixed-rate latencies (fixed_rate_latency()).
#include <sys/prctl.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "actor_load.hpp"
#include "bench_util.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/actors/router.hpp"
#include "mm/actors/worker_idle.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/snapshot.hpp"
#include "mm/strategies/percentile.hpp"

namespace {
using namespace mm;
using namespace mm::actors;
using namespace mm::bench;

// One instance's options in these runs: a cache of `cache` players, sized
// from them, restored from a snapshot (no table scan).
options instance_options(std::uint32_t cache) {
  options o;
  o.player_cache_size = cache;
  o.database_cache_size = cache;
  o.buckets_rebalance_sample_count = cache;
  o.enable_database_scan = false;
  o.random_seed = 9;
  return o;
}

// Warm state for instance set `name` of n instances: each instance's shard of
// the players, sized from samples, in its snapshot row.
void prepare_snapshots(const std::string& db_path, const std::string& name, std::uint32_t n,
                       const std::vector<player_row>& rows, const options& per_instance) {
  database db(db_path);
  for (std::uint32_t k = 0; k < n; ++k) {
    engine<generic_profile> e(per_instance, generic_profile(demo_profile_config()));
    std::vector<generic_model> models;
    for (const auto& row : rows)
      if (row.id % n == k) e.profile().make_models(row, models);
    for (const auto& m : models) e.add_sample(m);
    // Rebalanced now: a snapshot stamped long ago would have the restored
    // instance rebalance (and write a snapshot) at once, inside a measurement.
    const std::int64_t now_ms = wall_unix_ms();
    e.rebalance(now_ms);
    for (const auto& m : models) e.update(m.id(), m);
    save_state(db, name + "-" + std::to_string(k), e, now_ms);
  }
}
}  // namespace

// Waits until every instance of `set` holds players (its snapshot restored:
// polled, up to a minute each) and returns how many they hold in all.
template <class Set>
std::uint64_t wait_until_restored(caf::scoped_actor& self, const Set& set) {
  std::uint64_t cached = 0;
  for (auto& h : set)
    for (int attempt = 0; attempt < 600; ++attempt) {
      std::uint64_t players = 0;
      self->request(h, std::chrono::seconds(30), info_atom::value)
          .receive([&](const instance_info& i) { players = i.engine.players; }, [](caf::error&) {});
      if (players > 0) {
        cached += players;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  return cached;
}

// The same N = 2 set (client path) in an actor system of its own for each way
// CAF's workers may wait (worker_idle.hpp): CPU at 100 queries/s (Poisson),
// the peak, and p99 at half of it. Made before any other actor system of the
// run, so that the process CPU is this system's.
void compare_worker_idle(const std::string& db_path, const std::vector<player_row>& rows,
                         const std::vector<request_t>& reqs, double seconds,
                         const std::string& params) {
  const options o = instance_options(static_cast<std::uint32_t>(rows.size() / 2));
  prepare_snapshots(db_path, "idle", 2, rows, o);
  double low_cpu[2] = {0, 0}, peak[2] = {0, 0}, half_p99[2] = {0, 0};
  for (const worker_idle mode : {worker_idle::poll, worker_idle::sleep}) {
    const int m = mode == worker_idle::poll ? 0 : 1;
    caf::actor_system_config cfg;
    cfg.set("logger.verbosity", caf::atom("quiet"));
    set_worker_idle(cfg, mode);
    add_message_types<generic_profile>(cfg, "generic");
    caf::actor_system sys{cfg};
    instance_config<generic_profile> base;
    base.id = "idle";
    base.opts = o;
    base.profile = generic_profile(demo_profile_config());
    base.database.path = db_path;
    auto set = spawn_instance_set<generic_profile>(sys, 2, base);
    auto client = spawn_client<generic_profile>(sys, set, std::uint64_t{5});
    caf::scoped_actor self{sys};
    wait_until_restored(self, set);
    const std::string p = params + ", \"instances\": 2, \"path\": \"client_actor\"" +
                          ", \"worker_idle\": \"" + to_string(mode) + "\"";
    const auto via_client = handle_sender(front{client});
    const auto low = drive(sys, via_client, reqs, 1, 1, 100.0, seconds);
    low_cpu[m] = low.cpu_cores;
    emit("actors", "cpu_cores_at_100_per_s", low.cpu_cores, "cores",
         p + ", \"offered_per_s\": 100, \"arrivals\": \"poisson\"");
    emit_latency("actors", "latency_p99_at_100_per_s_us", low.p99,
                 generator_kept_up(low.p99, low.late_p99), low.late_p99, p);
    const auto top = drive(sys, via_client, reqs, 4, 64, 0, seconds);
    peak[m] = top.qps;
    emit("actors", "actor_queries_per_s", top.qps, "1/s", p);
    const auto half = drive(sys, via_client, reqs, 4, 0, top.qps / 2, seconds);
    // Only a figure the generator kept up with enters the ratio below.
    const bool kept_up = generator_kept_up(half.p99, half.late_p99);
    emit_latency("actors", "latency_p99_half_load_us", half.p99, kept_up, half.late_p99, p);
    half_p99[m] = kept_up ? half.p99 : 0;
    self->send_exit(client, caf::exit_reason::user_shutdown);
    for (auto& h : set) self->send_exit(h, caf::exit_reason::user_shutdown);
  }
  if (low_cpu[0] > 0 && peak[0] > 0) {
    emit("actors", "sleep_vs_poll_cpu_at_100_per_s", low_cpu[1] / low_cpu[0], "ratio", params);
    emit("actors", "sleep_vs_poll_peak_per_s", peak[1] / peak[0], "ratio", params);
  }
  if (half_p99[0] > 0 && half_p99[1] > 0)
    emit("actors", "sleep_vs_poll_half_load_p99", half_p99[1] / half_p99[0], "ratio", params);
}

// Where the tail starts: the router's latency under Poisson arrivals at fixed
// rates, with the load generator off the matchmaker's core. An actor system
// of one worker, whose threads all run on CPU 0, holds the instance
// (restored from set `name`'s snapshot) and the loaders; the arrival thread
// has CPU 1 to itself and spins to each planned arrival (arrivals()), and
// latency runs from that planned arrival. Needs two CPUs.
void fixed_rate_latency(const std::string& db_path, const std::string& name, const options& o,
                        const std::vector<request_t>& reqs, std::size_t loaders, double seconds,
                        const std::string& params) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || !pin_thread_to({0})) {
    std::fprintf(stderr, "actor_bench: fixed-rate latencies need two CPUs; skipped\n");
    return;
  }
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  cfg.set("scheduler.max-threads", std::size_t{1});
  set_worker_idle(cfg, worker_idle::sleep);  // matchmakerd's default
  add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};  // its threads start here, on CPU 0
  pin_thread_to({});
  instance_config<generic_profile> base;
  base.id = name;
  base.opts = o;
  base.profile = generic_profile(demo_profile_config());
  base.database.path = db_path;
  auto set = spawn_instance_set<generic_profile>(sys, 1, base);
  caf::scoped_actor self{sys};
  const std::uint64_t cached = wait_until_restored(self, set);
  const std::string p = params + ", \"instances\": 1, \"cached\": " + std::to_string(cached) +
                        ", \"path\": \"router\", \"server_cpus\": 1, \"generator\": " +
                        "\"spinning, on a CPU of its own\"";
  // A warm-up second, not counted.
  drive(sys, router_sender(set), reqs, loaders, 0, 1000, 1.0, 1);
  // The reference at each rate, in the same set-up: the canned-reply actor
  // asked directly, so what is left is CAF's hand-offs and this machine.
  const front echo = sys.spawn(echo_actor);
  for (const double rate : {1e3, 10e3, 25e3, 50e3}) {
    const std::string rq = p +
                           ", \"offered_per_s\": " + std::to_string(static_cast<long long>(rate)) +
                           ", \"arrivals\": \"poisson\"";
    const auto ref = drive(sys, handle_sender(echo), reqs, loaders, 0, rate, seconds, 1);
    const bool ref_kept_up = generator_kept_up(ref.p99, ref.late_p99);
    emit_latency("actors", "caf_echo_latency_p99_at_rate_us", ref.p99, ref_kept_up, ref.late_p99,
                 rq);
    const auto h = drive(sys, router_sender(set), reqs, loaders, 0, rate, seconds, 1);
    const bool kept_up = generator_kept_up(h.p99, h.late_p99);
    // The goal a game holds the router to: p99 within 100 us at 10,000/s.
    const std::string goal = rate == 10e3
                                 ? ", \"goal_p99_us\": 100, \"meets_goal\": " +
                                       std::string(kept_up && h.p99 <= 100 ? "true" : "false")
                                 : "";
    emit_latency("actors", "latency_p50_at_rate_us", h.p50, kept_up, h.late_p99, rq);
    emit_latency("actors", "latency_p99_at_rate_us", h.p99, kept_up, h.late_p99, rq + goal);
    emit_latency("actors", "latency_p999_at_rate_us", h.p999, kept_up, h.late_p99, rq);
    if (kept_up && ref_kept_up)
      emit("actors", "router_vs_caf_echo_p99_at_rate", h.p99 / ref.p99, "ratio", rq);
    // The process's cores: the spinning generator's whole CPU is in it.
    emit("actors", "cpu_cores", h.cpu_cores, "cores", rq);
  }
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  for (auto& h : set) self->send_exit(h, caf::exit_reason::user_shutdown);
}

int main(int argc, char** argv) {
  const std::size_t players = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const double seconds = argc > 2 ? std::strtod(argv[2], nullptr) : 3.0;
  const std::string mode = argc > 3 ? argv[3] : "all";
  const bool everything = mode == "all";
  const std::size_t loaders = 4, in_flight = 64;
  const std::string params = "\"players\": " + std::to_string(players) +
                             ", \"loaders\": " + std::to_string(loaders) +
                             ", \"in_flight_per_loader\": " + std::to_string(in_flight);

  const auto dir = std::filesystem::temp_directory_path() / "mm-actor-bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db_path = (dir / "bench.db").string();

  rng r(3);
  const auto rows = make_players(synthetic_population{}, players, 1, r);
  std::vector<request_t> reqs(200'000);
  for (std::size_t i = 0; i < reqs.size(); ++i)
    reqs[i].query = make_query(synthetic_population{}, players + 1 + i, r);

  const options n1_options = instance_options(static_cast<std::uint32_t>(players));
  if (mode == "rates") {
    prepare_snapshots(db_path, "n1", 1, rows, n1_options);
    fixed_rate_latency(db_path, "n1", n1_options, reqs, loaders, seconds, params);
    std::filesystem::remove_all(dir);
    return 0;
  }
  if (everything) compare_worker_idle(db_path, rows, reqs, seconds, params);

  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  cfg.set("logger.verbosity", caf::atom("quiet"));
  add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};

  const front echo = sys.spawn(echo_actor);
  const auto ref = drive(sys, handle_sender(echo), reqs, loaders, in_flight, 0, seconds);

  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  emit("actors", "caf_roundtrip_per_s", ref.qps, "1/s", params);
  emit("actors", "caf_roundtrip_per_cpu_s", ref.per_cpu_s, "1/s", params);

  // The best path available: one instance's supervisor, asked directly (no
  // routing). Measured at N = 1, in turns with the routed paths.
  measurement direct_n1;
  double direct_n1_half_p99 = 0;
  for (std::uint32_t n : {1u, 2u, 4u}) {
    const options o = instance_options(static_cast<std::uint32_t>(players / n));
    const std::string name = "n" + std::to_string(n);
    prepare_snapshots(db_path, name, n, rows, o);

    instance_config<generic_profile> base;
    base.id = name;
    base.opts = o;
    base.profile = generic_profile(demo_profile_config());
    base.database.path = db_path;
    auto set = spawn_instance_set<generic_profile>(sys, n, base);
    auto client = spawn_client<generic_profile>(sys, set, std::uint64_t{5});
    caf::scoped_actor self{sys};
    const std::uint64_t cached = wait_until_restored(self, set);
    const std::string p = params + ", \"instances\": " + std::to_string(n) +
                          ", \"cached\": " + std::to_string(cached);
    const auto path = [&](const char* via) { return p + ", \"path\": \"" + via + "\""; };
    // Closed loop, two turns each, alternating; the better turn of each counts
    // (drift and the other core's noise only ever slow a turn down).
    const auto best = [](const measurement& a, const measurement& b) {
      return a.qps >= b.qps ? a : b;
    };
    measurement routed, via_client, direct;
    for (int turn = 0; turn < 2; ++turn) {
      if (n == 1)
        direct = best(
            direct, drive(sys, handle_sender(front{set[0]}), reqs, loaders, in_flight, 0, seconds));
      routed = best(routed, drive(sys, router_sender(set), reqs, loaders, in_flight, 0, seconds));
      via_client = best(via_client, drive(sys, handle_sender(front{client}), reqs, loaders,
                                          in_flight, 0, seconds));
    }
    if (n == 1) direct_n1 = direct;
    const auto report = [&](const std::string& q, const measurement& m) {
      emit("actors", "actor_queries_per_s", m.qps, "1/s", q);
      emit("actors", "actor_queries_per_cpu_s", m.per_cpu_s, "1/s", q);
      emit("actors", "latency_p50_us", m.p50, "us", q);
      emit("actors", "latency_p99_us", m.p99, "us", q);
      emit("actors", "latency_p999_us", m.p999, "us", q);
    };
    if (n == 1) report(path("supervisor"), direct);
    report(path("router"), routed);
    report(path("client_actor"), via_client);
    if (n == 1) {
      emit("actors", "n1_vs_caf_roundtrip", direct.qps / ref.qps, "ratio", path("supervisor"));
      emit("actors", "client_vs_supervisor", routed.qps / direct.qps, "ratio", path("router"));
      emit("actors", "client_vs_supervisor_per_cpu_s", routed.per_cpu_s / direct.per_cpu_s, "ratio",
           path("router"));
      emit("actors", "client_actor_vs_supervisor", via_client.qps / direct.qps, "ratio",
           path("client_actor"));
    } else {
      const std::string k = "n" + std::to_string(n) + "_vs_n1_direct";
      emit("actors", (k + "_per_cpu_s").c_str(), routed.per_cpu_s / direct_n1.per_cpu_s, "ratio",
           path("router") + ", \"against\": \"supervisor, N = 1\"");
      emit("actors", (k + "_per_s").c_str(), routed.qps / direct_n1.qps, "ratio",
           path("router") + ", \"against\": \"supervisor, N = 1\"");
      emit("actors", (k + "_client_actor_per_cpu_s").c_str(),
           via_client.per_cpu_s / direct_n1.per_cpu_s, "ratio",
           path("client_actor") + ", \"against\": \"supervisor, N = 1\"");
    }
    // Half of the peak rate, Poisson arrivals (open loop), so the latency is
    // the service's own and not a queue the generator made.
    const auto half_load = [&](const std::string& q, auto sender, double peak) {
      const auto h = drive(sys, sender, reqs, loaders, 0, peak / 2, seconds);
      const std::string hq =
          q + ", \"offered_per_s\": " + std::to_string(static_cast<long long>(peak / 2)) +
          ", \"arrivals\": \"poisson\"";
      const bool kept_up = generator_kept_up(h.p99, h.late_p99);
      emit_latency("actors", "latency_p50_half_load_us", h.p50, kept_up, h.late_p99, hq);
      emit_latency("actors", "latency_p99_half_load_us", h.p99, kept_up, h.late_p99, hq);
      emit_latency("actors", "latency_p999_half_load_us", h.p999, kept_up, h.late_p99, hq);
      return kept_up ? h.p99 : 0.0;  // 0: no figure
    };
    // A warm-up second of open loop after the closed loops, not counted.
    drive(sys, router_sender(set), reqs, loaders, 0, 1000, 1.0);
    if (n == 1)
      direct_n1_half_p99 = half_load(path("supervisor"), handle_sender(front{set[0]}), direct.qps);
    const double routed_half_p99 = half_load(path("router"), router_sender(set), routed.qps);
    if (n == 1 && direct_n1_half_p99 > 0 && routed_half_p99 > 0)
      emit("actors", "router_vs_supervisor_half_load_p99", routed_half_p99 / direct_n1_half_p99,
           "ratio", path("router"));
    if (n == 2 && everything) {
      // The same path through CAF's network layer on loopback: a second actor
      // system in this process connects to the published client. Published as
      // matchmakerd publishes it (behind the frame-checking guard), and, as
      // the reference in the same run, by CAF directly (no guard); in turns,
      // twice each, so that drift hits both alike.
      caf::actor_system_config cfg2;
      cfg2.load<caf::io::middleman>();
      cfg2.set("logger.verbosity", caf::atom("quiet"));
      add_message_types<generic_profile>(cfg2, "generic");
      caf::actor_system remote_sys{cfg2};
      // Turn 0 warms the connection path up and is not counted; then the
      // two ports alternate, four turns each, and each reports its medians.
      std::vector<measurement> guarded, unguarded;
      for (int turn = 0; turn < 9; ++turn) {
        const bool guard = turn % 2 == 1;
        std::unique_ptr<published_port> published;
        caf::expected<std::uint16_t> port{std::uint16_t{0}};
        if (guard) {
          auto pp = publish_actor(sys, client, 0, "127.0.0.1", false);
          if (pp) published = std::move(*pp);
          port = pp ? caf::expected<std::uint16_t>{published->port()}
                    : caf::expected<std::uint16_t>{pp.error()};
        } else {
          port = sys.middleman().publish(client, 0, "127.0.0.1");
        }
        auto remote = port ? remote_sys.middleman().remote_actor<front>("127.0.0.1", *port)
                           : caf::expected<front>{port.error()};
        if (!remote) {
          std::fprintf(stderr, "actor_bench: remote: %s\n", sys.render(remote.error()).c_str());
          break;
        }
        const auto rm =
            drive(remote_sys, handle_sender(*remote), reqs, loaders, in_flight, 0, seconds / 4);
        if (turn > 0) (guard ? guarded : unguarded).push_back(rm);
        // The port as matchmakerd serves it, last turn: batches, and single
        // queries at half the single-query peak (Poisson).
        if (turn == 7) {
          for (const std::size_t b : {16u, 64u, 256u}) {
            const auto bm = drive_batches(remote_sys, *remote, reqs, loaders, 4, b, seconds);
            const std::string bq = path("client_actor") +
                                   ", \"port\": \"guarded\", \"batch\": " + std::to_string(b) +
                                   ", \"batches_in_flight\": 16";
            emit("actors", "remote_batched_queries_per_s", bm.qps, "1/s", bq);
            emit("actors", "remote_batched_queries_per_cpu_s", bm.per_cpu_s, "1/s", bq);
            emit("actors", "remote_batch_latency_p50_us", bm.p50, "us", bq);
            emit("actors", "remote_batch_latency_p99_us", bm.p99, "us", bq);
            emit("actors", "remote_vs_routed_per_s", bm.qps / routed.qps, "ratio",
                 bq + ", \"against\": \"router, in process\"");
          }
          const double remote_peak = guarded.empty() ? rm.qps : guarded.back().qps;
          drive(remote_sys, handle_sender(*remote), reqs, loaders, 0, 1000, 1.0);  // warm-up
          const auto hm =
              drive(remote_sys, handle_sender(*remote), reqs, loaders, 0, remote_peak / 2, seconds);
          const std::string hq =
              path("client_actor") + ", \"port\": \"guarded\"" +
              ", \"offered_per_s\": " + std::to_string(static_cast<long long>(remote_peak / 2)) +
              ", \"arrivals\": \"poisson\"";
          const bool kept_up = generator_kept_up(hm.p99, hm.late_p99);
          emit_latency("actors", "remote_latency_p50_half_load_us", hm.p50, kept_up, hm.late_p99,
                       hq);
          emit_latency("actors", "remote_latency_p99_half_load_us", hm.p99, kept_up, hm.late_p99,
                       hq);
          emit_latency("actors", "remote_latency_p999_half_load_us", hm.p999, kept_up, hm.late_p99,
                       hq);
        }
        if (published)
          published->close();
        else
          sys.middleman().unpublish(client, *port);
      }
      const auto median = [](std::vector<measurement> runs, double measurement::*field) {
        if (runs.empty()) return 0.0;
        std::sort(runs.begin(), runs.end(),
                  [&](const measurement& a, const measurement& b) { return a.*field < b.*field; });
        const std::size_t count = runs.size();
        return (runs[(count - 1) / 2].*field + runs[count / 2].*field) / 2;
      };
      const std::string g = path("client_actor") + ", \"port\": \"guarded\", \"turns\": 4";
      emit("actors", "remote_queries_per_s", median(guarded, &measurement::qps), "1/s", g);
      emit("actors", "remote_latency_p99_us", median(guarded, &measurement::p99), "us", g);
      emit("actors", "remote_latency_p50_us", median(guarded, &measurement::p50), "us", g);
      const std::string u = path("client_actor") + ", \"port\": \"caf_direct\", \"turns\": 4";
      emit("actors", "remote_unguarded_queries_per_s", median(unguarded, &measurement::qps), "1/s",
           u);
      emit("actors", "remote_unguarded_latency_p99_us", median(unguarded, &measurement::p99), "us",
           u);
      if (!unguarded.empty() && !guarded.empty()) {
        emit("actors", "remote_guarded_vs_unguarded_per_s",
             median(guarded, &measurement::qps) / median(unguarded, &measurement::qps), "ratio", p);
        emit("actors", "remote_guarded_vs_unguarded_per_cpu_s",
             median(guarded, &measurement::per_cpu_s) / median(unguarded, &measurement::per_cpu_s),
             "ratio", p);
      }
    }
    self->send_exit(client, caf::exit_reason::user_shutdown);
    for (auto& h : set) self->send_exit(h, caf::exit_reason::user_shutdown);
  }
  fixed_rate_latency(db_path, "n1", n1_options, reqs, loaders, seconds, params);
  std::filesystem::remove_all(dir);
  return 0;
}
