// The actor port against what a game team would otherwise use: the same
// lookups on a Redis sorted set per region (ZRANGEBYSCORE from a random start
// in the MMR window, LIMIT 0 10), on loopback, from the same client process,
// in the same run. Both servers hold the same synthetic players and get the
// same query stream; each is measured in turns, twice, and its best turn is
// reported.
//
//   mm_reference_bench [players = 1000000] [seconds per measurement = 3]
//
// Throughput at the same in-flight depth (64 queries: a sliding pipeline to
// Redis, 64 outstanding requests or one batch of 64 to the actor port), the
// servers' CPU per query (from /proc), latency under an open loop of Poisson
// arrivals at 2,000/s, and the servers' CPU at 100 queries/s and idle. One
// at a time, also an actor that answers at once over the same transport
// (this binary with --caf-echo): the floor CAF's network layer sets.
// Skipped with a message (exit 0) when redis-server or hiredis is missing.
#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "actor_load.hpp"
#include "bench_util.hpp"
#include "matchmakerd_process.hpp"
#include "mm/actors/cluster_client.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/testing/child_process.hpp"
#include "mm/testing/temp_dir.hpp"

#if MM_HAVE_HIREDIS
#include "redis_side.hpp"
#endif

#if !MM_HAVE_HIREDIS
int main() {
  std::fprintf(stderr,
               "mm_reference_bench: skipped: built without hiredis (install libhiredis-dev and "
               "reconfigure)\n");
  return 0;
}
#else

namespace {

using namespace mm;
using namespace mm::bench;
using namespace std::chrono_literals;

constexpr double open_loop_rate = 2000;  // queries/s for the latency comparison

// Open loop: Poisson arrivals at `rate`, each lookup written when it falls
// due and its reply read whenever it comes; latency from the planned
// arrival, as arrivals() measures. With `cpu` >= 0 the loop runs on that CPU
// and spins (polls without waiting), as arrivals() does.
redis_measurement redis_open(redisContext* c, const std::vector<redis_query>& qs, double rate,
                             double seconds, long pid, std::uint64_t seed, int cpu = -1) {
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);  // wake at the arrival, as arrivals() does
  if (cpu >= 0) pin_thread_to({cpu});
  rng gaps(seed);
  const auto gap_s = [&] { return -std::log(std::max(gaps.unit(), 1e-12)) / rate; };
  std::deque<double> sent;
  std::vector<double> lat, late;
  std::size_t next = 0;
  redis_measurement m;
  const double t0 = now_s(), cpu0 = process_cpu_s(pid), until = t0 + seconds;
  double planned = t0 + gap_s();
  while (planned < until || !sent.empty()) {
    const double now = now_s();
    if (planned < until && now >= planned) {
      append(c, qs[next++ % qs.size()]);
      sent.push_back(planned);
      late.push_back((now - planned) * 1e6);
      int done = 0;
      while (!done)
        if (redisBufferWrite(c, &done) != REDIS_OK) return m;
      planned += gap_s();
      continue;
    }
    const double wait_s = cpu >= 0 ? 0.0 : planned < until ? planned - now : 1.0;
    pollfd p{c->fd, POLLIN, 0};
    timespec ts{static_cast<time_t>(wait_s),
                static_cast<long>((wait_s - std::floor(wait_s)) * 1e9)};
    if (::ppoll(&p, 1, &ts, nullptr) <= 0) continue;
    if (redisBufferRead(c) != REDIS_OK) return m;
    void* reply = nullptr;
    while (redisGetReplyFromReader(c, &reply) == REDIS_OK && reply) {
      freeReplyObject(reply);
      reply = nullptr;
      lat.push_back((now_s() - sent.front()) * 1e6);
      sent.pop_front();
    }
  }
  if (cpu >= 0) pin_thread_to({});
  m.late_p99 = percentile(late, 0.99);
  return summary(m, lat, t0, cpu0, pid);
}

// The server's CPU over a measurement of the actor port.
template <class Run>
std::pair<measurement, double> with_server_cpu(long pid, Run run) {
  const double t0 = now_s(), cpu0 = process_cpu_s(pid);
  measurement m = run();
  const double cpu = process_cpu_s(pid) - cpu0;
  return {m, cpu / (now_s() - t0)};
}

// Updates as fast as a game sends them, fire and forget: each of `updates`
// sent alone to `to`, then until the node's client (`node`) has counted them
// all (its stats, polled). Returns updates/s and the server's CPU an update.
std::pair<double, double> send_updates(caf::actor_system& sys, const front& to, const front& node,
                                       const std::vector<player_update<generic_model> >& updates,
                                       long pid) {
  caf::scoped_actor self{sys};
  const auto node_stats = caf::actor_cast<interfaces<generic_profile>::routing_client>(node);
  const auto counted = [&] {
    std::uint64_t n = 0;
    self->request(node_stats, std::chrono::seconds(10), stats_atom::value)
        .receive([&](const client_stats& s) { n = s.updates; }, [](caf::error&) {});
    return n;
  };
  const std::uint64_t before = counted();
  const double t0 = now_s(), cpu0 = process_cpu_s(pid);
  for (const auto& u : updates) self->send(to, update_atom::value, u);
  while (counted() < before + updates.size() && now_s() < t0 + 60)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling another process
  const double wall = now_s() - t0;
  // The instances apply what the client passed on a moment later.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double cpu = process_cpu_s(pid) - cpu0;
  return {static_cast<double>(updates.size()) / wall,
          cpu * 1e6 / static_cast<double>(updates.size())};
}

// The floor of the port's path, run by this binary with `--caf-echo`: an
// actor that answers each query at once, published over CAF's network layer
// by a process of its own with the server's settings (its workers sleep when
// idle). What the port costs beyond it is the matchmaker's own.
int serve_caf_echo() {
  caf::actor_system_config cfg;
  actors::use_network(cfg, {});
  cfg.set("logger.verbosity", caf::atom("quiet"));
  actors::add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};
  const front echo = sys.spawn(echo_actor);
  const auto port = sys.middleman().publish(echo, 0, "127.0.0.1");
  if (!port) return 1;
  std::printf("caf echo port %u\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  for (;;) pause();  // until the bench stops this process
}

double idle_cores(long pid, double seconds) {
  const double cpu0 = process_cpu_s(pid);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return (process_cpu_s(pid) - cpu0) / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--caf-echo") return serve_caf_echo();
  const std::size_t players = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  const std::string redis_binary = in_path("redis-server");
  if (redis_binary.empty()) {
    std::fprintf(stderr,
                 "mm_reference_bench: skipped: redis-server is not installed (apt-get install "
                 "redis-server)\n");
    return 0;
  }
  test::temp_dir dir;
  const std::string params = "\"players\": " + std::to_string(players) +
                             ", \"in_flight\": " + std::to_string(depth) + ", \"instances\": 2";

  // The matchmaker: the product as shipped, with its demo table of `players`,
  // filled by fast scans, stopped (its instances write their snapshots) and
  // started again with the default scan schedule: a warm server, as after a
  // restart in production, whose background scan does not share the
  // measurements' CPU.
  const std::vector<std::string> flags{
      "--database.path",     dir.file("mm.db"),
      "--demo.players",      std::to_string(players),
      "--instances",         "2",
      "--actor.worker_idle", std::getenv("MMIDLE") ? std::getenv("MMIDLE") : "sleep"};
  std::unique_ptr<matchmakerd_process> mm_server;
  std::uint64_t cached = 0;
  try {
    mm_server = warm_matchmakerd(flags, players, &cached);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mm_reference_bench: %s\n", e.what());
    return 1;
  }
  emit("reference", "matchmaker_cached_players", static_cast<double>(cached), "players", params);

  // Redis, with the same players: one sorted set per region, scored by MMR.
  std::unique_ptr<loaded_redis> redis;
  try {
    redis = start_redis(redis_binary, dir, players);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mm_reference_bench: %s\n", e.what());
    return 1;
  }
  redisContext* rc = redis->context;

  // The same queries for both: attackers from the population.
  rng r(11);
  const std::vector<request_t> reqs = attackers(players, r);
  const auto lookups = redis_queries(reqs, r);

  caf::actor_system_config cfg;
  actors::use_network(cfg, {});  // as a game's process: its workers sleep when idle
  cfg.set("logger.verbosity", caf::atom("quiet"));
  actors::add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};
  auto port = sys.middleman().remote_actor<front>("127.0.0.1", mm_server->actor_port());
  if (!port) {
    std::fprintf(stderr, "mm_reference_bench: actor port: %s\n", sys.render(port.error()).c_str());
    return 1;
  }
  const long mm_pid = mm_server->pid(), redis_pid = redis->process->pid();
  // The game's client over the node, as a game spawns it (one node, so no
  // refresh): single queries sent while others are in flight go as batches
  // (query_coalescer.hpp).
  auto cluster = actors::spawn_cluster_client<generic_profile>(
      sys, {{caf::actor_cast<interfaces<generic_profile>::client>(*port), {0}}}, 1,
      std::chrono::milliseconds(10'000), 7, std::chrono::milliseconds(0));
  const auto coalescing = caf::actor_cast<front>(cluster);

  // Warm-up of both, not counted.
  redis_closed(rc, lookups, 1.0, redis_pid);
  drive(sys, handle_sender(*port), reqs, 1, depth, 0, 1.0);

  redis_measurement redis_best;
  measurement single_best, batch_best, coalesced_best;
  double single_cpu_us = 0, batch_cpu_us = 0, coalesced_cpu_us = 0;
  for (int turn = 0; turn < 2; ++turn) {
    const auto rm = redis_closed(rc, lookups, seconds, redis_pid);
    if (rm.qps > redis_best.qps) redis_best = rm;
    const auto [sm, s_cores] = with_server_cpu(
        mm_pid, [&] { return drive(sys, handle_sender(*port), reqs, 1, depth, 0, seconds); });
    if (sm.qps > single_best.qps) {
      single_best = sm;
      single_cpu_us = s_cores * 1e6 / sm.qps;
    }
    const auto [bm, b_cores] = with_server_cpu(
        mm_pid, [&] { return drive_batches(sys, *port, reqs, 1, 1, depth, seconds); });
    if (bm.qps > batch_best.qps) {
      batch_best = bm;
      batch_cpu_us = b_cores * 1e6 / bm.qps;
    }
    const auto [cm, c_cores] = with_server_cpu(
        mm_pid, [&] { return drive(sys, handle_sender(coalescing), reqs, 1, depth, 0, seconds); });
    if (cm.qps > coalesced_best.qps) {
      coalesced_best = cm;
      coalesced_cpu_us = c_cores * 1e6 / cm.qps;
    }
  }
  emit("reference", "redis_queries_per_s", redis_best.qps, "1/s", params);
  emit("reference", "redis_server_cpu_us_per_query", redis_best.server_cpu_us, "us", params);
  emit("reference", "actor_port_queries_per_s", single_best.qps, "1/s", params);
  emit("reference", "actor_port_server_cpu_us_per_query", single_cpu_us, "us", params);
  emit("reference", "actor_port_vs_redis", single_best.qps / redis_best.qps, "ratio", params);
  emit("reference", "actor_port_cpu_vs_redis", single_cpu_us / redis_best.server_cpu_us, "ratio",
       params);
  const std::string bp = params + ", \"batch\": " + std::to_string(depth);
  emit("reference", "actor_port_batched_queries_per_s", batch_best.qps, "1/s", bp);
  emit("reference", "actor_port_batched_server_cpu_us_per_query", batch_cpu_us, "us", bp);
  emit("reference", "actor_port_batched_vs_redis", batch_best.qps / redis_best.qps, "ratio", bp);
  emit("reference", "actor_port_batched_cpu_vs_redis", batch_cpu_us / redis_best.server_cpu_us,
       "ratio", bp);

  // Single queries, 64 in flight, through the game's cluster client: the
  // same calls as above, batched by the client on their way.
  const std::string cp = params + ", \"via\": \"cluster_client\"";
  emit("reference", "actor_port_coalesced_queries_per_s", coalesced_best.qps, "1/s", cp);
  emit("reference", "actor_port_coalesced_server_cpu_us_per_query", coalesced_cpu_us, "us", cp);
  emit("reference", "actor_port_coalesced_vs_redis", coalesced_best.qps / redis_best.qps, "ratio",
       cp + ", \"goal\": 1");
  emit("reference", "actor_port_coalesced_cpu_vs_redis",
       coalesced_cpu_us / redis_best.server_cpu_us, "ratio", cp + ", \"goal\": 1");

  // Updates of existing players (new MMRs), each sent alone: on the port
  // directly (a message each), and through the cluster client (the ones of
  // one burst go as one batch). Two turns each, alternating; the better
  // counts.
  {
    rng ur(77);
    std::vector<player_update<generic_model> > updates;
    const generic_profile profile(demo_profile_config());
    for (const auto& row : make_players(synthetic_population{}, 200'000, 1, ur)) {
      player_update<generic_model> u{row.id, {}};
      profile.make_models(row, u.models);
      updates.push_back(std::move(u));
    }
    std::pair<double, double> direct{0, 0}, via{0, 0};
    for (int turn = 0; turn < 2; ++turn) {
      const auto d = send_updates(sys, *port, *port, updates, mm_pid);
      if (d.first > direct.first) direct = d;
      const auto c = send_updates(sys, coalescing, *port, updates, mm_pid);
      if (c.first > via.first) via = c;
    }
    const std::string up = "\"players\": " + std::to_string(players) +
                           ", \"updates\": " + std::to_string(updates.size());
    emit("reference", "actor_port_updates_per_s", direct.first, "1/s", up);
    emit("reference", "actor_port_server_cpu_us_per_update", direct.second, "us", up);
    emit("reference", "actor_port_coalesced_updates_per_s", via.first, "1/s",
         up + ", \"via\": \"cluster_client\"");
    emit("reference", "actor_port_coalesced_server_cpu_us_per_update", via.second, "us",
         up + ", \"via\": \"cluster_client\"");
    emit("reference", "coalesced_vs_single_updates_per_s", via.first / direct.first, "ratio", up);
    emit("reference", "coalesced_vs_single_server_cpu_per_update", via.second / direct.second,
         "ratio", up);
  }

  // One query at a time (a game server's tap): closed loop, one in flight.
  // Latency, and the CPU per query of the server and of this process (the
  // client: hiredis in one thread; CAF's threads for the port).
  {
    const std::string tp = "\"players\": " + std::to_string(players) + ", \"in_flight\": 1";
    const auto ro = redis_closed(rc, lookups, seconds, redis_pid, 1);
    test::child_process echo_server({"/proc/self/exe", "--caf-echo"});
    const std::string echo_line = echo_server.wait_for_line("caf echo port ");
    const auto echo_port = echo_line.empty() ? 0 : std::atoi(echo_line.c_str() + 14);
    auto echo = sys.middleman().remote_actor<front>("127.0.0.1", echo_port);
    if (!echo) {
      std::fprintf(stderr, "mm_reference_bench: the CAF echo did not start\n");
      return 1;
    }
    drive(sys, handle_sender(*echo), reqs, 1, 1, 0, 1.0);  // warm-up, not counted
    const auto [floor, e_cores] = with_server_cpu(echo_server.pid(), [&] {
      return drive(sys, handle_sender(*echo), reqs, 1, 1, 0, seconds);
    });
    const auto [direct, d_cores] = with_server_cpu(
        mm_pid, [&] { return drive(sys, handle_sender(*port), reqs, 1, 1, 0, seconds); });
    const auto [via, v_cores] = with_server_cpu(
        mm_pid, [&] { return drive(sys, handle_sender(coalescing), reqs, 1, 1, 0, seconds); });
    emit("reference", "redis_one_at_a_time_p50_us", ro.p50, "us", tp);
    emit("reference", "redis_one_at_a_time_p99_us", ro.p99, "us", tp);
    emit("reference", "redis_one_at_a_time_server_cpu_us", ro.server_cpu_us, "us", tp);
    emit("reference", "redis_one_at_a_time_client_cpu_us", ro.client_cpu_us, "us", tp);
    for (const auto& [name, m, cores] :
         {std::tuple{std::string("caf_echo"), floor, e_cores},
          std::tuple{std::string("actor_port"), direct, d_cores},
          std::tuple{std::string("actor_port_coalesced"), via, v_cores}}) {
      const double server_us = m.qps > 0 ? cores * 1e6 / m.qps : 0;
      const double client_us = m.per_cpu_s > 0 ? 1e6 / m.per_cpu_s : 0;
      emit("reference", (name + "_one_at_a_time_p50_us").c_str(), m.p50, "us", tp);
      emit("reference", (name + "_one_at_a_time_p99_us").c_str(), m.p99, "us", tp);
      emit("reference", (name + "_one_at_a_time_server_cpu_us").c_str(), server_us, "us", tp);
      emit("reference", (name + "_one_at_a_time_client_cpu_us").c_str(), client_us, "us", tp);
      emit("reference", (name + "_one_at_a_time_p50_vs_redis").c_str(), m.p50 / ro.p50, "ratio",
           tp + ", \"goal\": 1.5");
      emit("reference", (name + "_one_at_a_time_server_cpu_vs_redis").c_str(),
           server_us / ro.server_cpu_us, "ratio", tp + ", \"goal\": 1.5");
      emit("reference", (name + "_one_at_a_time_client_cpu_vs_redis").c_str(),
           client_us / ro.client_cpu_us, "ratio", tp + ", \"goal\": 2");
    }
    // How much of the port's time one at a time is CAF's own path.
    emit("reference", "actor_port_one_at_a_time_p50_vs_caf_echo", direct.p50 / floor.p50, "ratio",
         tp);
    emit("reference", "actor_port_one_at_a_time_server_cpu_vs_caf_echo",
         floor.qps > 0 && e_cores > 0 ? (d_cores / direct.qps) / (e_cores / floor.qps) : 0, "ratio",
         tp);
    echo_server.stop();
  }

  // Latency at 2,000 queries/s, open loop, Poisson arrivals; then the
  // servers' CPU at 100 queries/s and idle.
  for (const double rate : {open_loop_rate, 100.0}) {
    std::string op = "\"players\": " + std::to_string(players) +
                     ", \"offered_per_s\": " + std::to_string(static_cast<int>(rate)) +
                     ", \"arrivals\": \"poisson\"";
    // The latency rate runs with the load generator off the servers' core:
    // both servers and this process's other threads on CPU 0, the
    // generator alone on CPU 1, spinning (arrivals()). The CPU rate runs
    // as a game would, unpinned and sleeping.
    const bool pinned = rate == open_loop_rate && sysconf(_SC_NPROCESSORS_ONLN) >= 2;
    const long self_tid = static_cast<long>(gettid());
    if (pinned)
      for (const long pid : {redis_pid, mm_pid, static_cast<long>(getpid())})
        pin_process_threads(pid, {0}, self_tid);
    const int generator_cpu = pinned ? 1 : -1;
    const auto ro = redis_open(rc, lookups, rate, seconds, redis_pid, 5, generator_cpu);
    const auto [ao, a_cores] = with_server_cpu(mm_pid, [&] {
      return drive(sys, handle_sender(*port), reqs, 1, 0, rate, seconds, generator_cpu);
    });
    if (pinned)
      for (const long pid : {redis_pid, mm_pid, static_cast<long>(getpid())})
        pin_process_threads(pid, {}, self_tid);
    if (pinned) op += ", \"servers_cpus\": 1, \"generator\": \"spinning, on a CPU of its own\"";
    if (rate == open_loop_rate) {
      const bool redis_kept_up = generator_kept_up(ro.p99, ro.late_p99);
      const bool port_kept_up = generator_kept_up(ao.p99, ao.late_p99);
      emit_latency("reference", "redis_latency_p50_us", ro.p50, redis_kept_up, ro.late_p99, op);
      emit_latency("reference", "redis_latency_p99_us", ro.p99, redis_kept_up, ro.late_p99, op);
      emit_latency("reference", "redis_latency_p999_us", ro.p999, redis_kept_up, ro.late_p99, op);
      emit_latency("reference", "actor_port_latency_p50_us", ao.p50, port_kept_up, ao.late_p99, op);
      emit_latency("reference", "actor_port_latency_p99_us", ao.p99, port_kept_up, ao.late_p99, op);
      emit_latency("reference", "actor_port_latency_p999_us", ao.p999, port_kept_up, ao.late_p99,
                   op);
      // The goal: the port's p99 within twice Redis's at this rate.
      if (redis_kept_up && port_kept_up)
        emit("reference", "actor_port_vs_redis_latency_p99", ao.p99 / ro.p99, "ratio",
             op + ", \"goal\": 2");
    }
    emit("reference", "redis_server_cores", ro.server_cores, "cores", op);
    emit("reference", "actor_port_server_cores", a_cores, "cores", op);
  }
  const std::string ip = "\"players\": " + std::to_string(players);
  emit("reference", "redis_idle_server_cores", idle_cores(redis_pid, seconds), "cores", ip);
  emit("reference", "actor_port_idle_server_cores", idle_cores(mm_pid, seconds), "cores", ip);

  caf::anon_send_exit(cluster, caf::exit_reason::user_shutdown);
  return mm_server->stop() == 0 ? 0 : 1;
}
#endif
