// The RESP port against a Redis sorted set, through the same client library
// (hiredis) from the same process, in the same run: MM.FIND (the
// matchmaker's whole query: the engine's search, its JSON in and out) on
// matchmakerd as shipped, against ZRANGEBYSCORE ... LIMIT 0 10 on Redis
// holding the same players (redis_side.hpp).
//
//   mm_resp_bench [players = 1000000] [seconds per measurement = 3]
//
// One request at a time (closed loop, one in flight: latency, and the CPU
// per request of each server and of this process) and pipelined (64 in
// flight on one connection: throughput and the server's CPU per query).
// Each is measured in two turns, alternating between the servers; the
// better turn of each counts. Skipped with a message (exit 0) when
// redis-server or hiredis is missing.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "matchmakerd_process.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/testing/child_process.hpp"
#include "mm/testing/cpu_steal.hpp"
#include "mm/testing/temp_dir.hpp"

#if MM_HAVE_HIREDIS
#include "redis_side.hpp"
#endif

#if !MM_HAVE_HIREDIS
int main() {
  std::fprintf(stderr,
               "mm_resp_bench: skipped: built without hiredis (install libhiredis-dev and "
               "reconfigure)\n");
  return 0;
}
#else

namespace {

using namespace mm;
using namespace mm::bench;

// The matchmaker's query for an attacker, as a client writes it.
std::vector<std::string> find_bodies(const std::vector<request_t>& reqs, std::size_t attributes) {
  std::vector<std::string> out;
  out.reserve(reqs.size());
  for (const auto& q : reqs) {
    std::string body = "{\"attacker_id\":" + std::to_string(q.query.attacker) +
                       ",\"mmr\":" + std::to_string(q.query.mmr) + ",\"attributes\":[";
    for (std::size_t i = 0; i < attributes; ++i)
      body += (i ? "," : "") + std::to_string(q.query.attributes[i]);
    out.push_back(body + "]}");
  }
  return out;
}

redis_measurement resp_closed(redisContext* c, const std::vector<std::string>& bodies,
                              double seconds, long pid, std::size_t in_flight) {
  return closed_loop(
      c,
      [&](std::size_t i) {
        const std::string& b = bodies[i % bodies.size()];
        redisAppendCommand(c, "MM.FIND %b", b.data(), b.size());
      },
      seconds, pid, in_flight);
}

redisContext* connect(std::uint16_t port) {
  redisContext* c = redisConnect("127.0.0.1", port);
  if (!c || c->err) {
    std::fprintf(stderr, "mm_resp_bench: cannot connect to port %u\n", port);
    std::exit(1);
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t players = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  const std::string redis_binary = in_path("redis-server");
  if (redis_binary.empty()) {
    std::fprintf(stderr,
                 "mm_resp_bench: skipped: redis-server is not installed (apt-get install "
                 "redis-server)\n");
    return 0;
  }
  test::temp_dir dir;
  // The matchmaker as mm_reference_bench runs it: filled by fast scans,
  // restarted warm with the default scan schedule.
  const std::vector<std::string> flags{"--database.path",       dir.file("mm.db"), "--demo.players",
                                       std::to_string(players), "--instances",     "2"};
  std::unique_ptr<matchmakerd_process> mm_server;
  try {
    mm_server = warm_matchmakerd(flags, players);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mm_resp_bench: %s\n", e.what());
    return 1;
  }
  std::unique_ptr<loaded_redis> redis;
  try {
    redis = start_redis(redis_binary, dir, players);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mm_resp_bench: %s\n", e.what());
    return 1;
  }
  redisContext* rc = redis->context;
  rng r(11);
  const std::vector<request_t> reqs = attackers(players, r);
  const auto lookups = redis_queries(reqs, r);
  const auto bodies = find_bodies(reqs, demo_profile_config().attributes.size());
  redisContext* mc = connect(mm_server->resp_port());
  const long mm_pid = mm_server->pid(), redis_pid = redis->process->pid();

  // Warm-up of both, not counted.
  redis_closed(rc, lookups, 1.0, redis_pid);
  resp_closed(mc, bodies, 1.0, mm_pid, depth);

  struct best {
    redis_measurement redis, resp;
  } one, piped;
  if (std::getenv("MM_RESP_BENCH_ONLY")) {  // a load for perf: pipelined MM.FIND, that long
    resp_closed(mc, bodies, std::atof(std::getenv("MM_RESP_BENCH_ONLY")), mm_pid, depth);
    return 0;
  }
  const auto keep = [](redis_measurement& kept, const redis_measurement& m, bool by_latency) {
    const bool better = kept.qps == 0 || (by_latency ? m.p50 < kept.p50 : m.qps > kept.qps);
    if (better) kept = m;
  };
  const test::cpu_ticks ticks_before = test::machine_ticks();
  for (int turn = 0; turn < 2; ++turn) {
    keep(one.redis, redis_closed(rc, lookups, seconds, redis_pid, 1), true);
    keep(one.resp, resp_closed(mc, bodies, seconds, mm_pid, 1), true);
    keep(piped.redis, redis_closed(rc, lookups, seconds, redis_pid, depth), false);
    keep(piped.resp, resp_closed(mc, bodies, seconds, mm_pid, depth), false);
  }
  const std::string tp =
      "\"players\": " + std::to_string(players) + ", \"client\": \"hiredis\", \"in_flight\": 1";
  const std::string pp = "\"players\": " + std::to_string(players) +
                         ", \"client\": \"hiredis\", \"in_flight\": " + std::to_string(depth);
  for (const auto& [name, m] : {std::pair{"redis", one.redis}, std::pair{"resp", one.resp}}) {
    const std::string n = name;
    emit("resp", (n + "_one_at_a_time_p50_us").c_str(), m.p50, "us", tp);
    emit("resp", (n + "_one_at_a_time_p99_us").c_str(), m.p99, "us", tp);
    emit("resp", (n + "_one_at_a_time_server_cpu_us").c_str(), m.server_cpu_us, "us", tp);
    emit("resp", (n + "_one_at_a_time_client_cpu_us").c_str(), m.client_cpu_us, "us", tp);
    emit("resp", (n + "_pipelined_queries_per_s").c_str(),
         n == "redis" ? piped.redis.qps : piped.resp.qps, "1/s", pp);
    emit("resp", (n + "_pipelined_server_cpu_us").c_str(),
         n == "redis" ? piped.redis.server_cpu_us : piped.resp.server_cpu_us, "us", pp);
    emit("resp", (n + "_pipelined_client_cpu_us").c_str(),
         n == "redis" ? piped.redis.client_cpu_us : piped.resp.client_cpu_us, "us", pp);
  }
  // What the host took from this VM while it measured: one at a time, a
  // wake-up waits for the CPU the hypervisor gave elsewhere.
  emit("resp", "machine_steal_percent",
       100 * test::steal_share(ticks_before, test::machine_ticks()), "%", tp);
  emit("resp", "resp_errors", static_cast<double>(one.resp.errors + piped.resp.errors), "replies",
       tp);
  emit("resp", "resp_one_at_a_time_p50_vs_redis", one.resp.p50 / one.redis.p50, "ratio",
       tp + ", \"goal\": 1");
  emit("resp", "resp_one_at_a_time_server_cpu_vs_redis",
       one.resp.server_cpu_us / one.redis.server_cpu_us, "ratio", tp + ", \"goal\": 1");
  emit("resp", "resp_one_at_a_time_client_cpu_vs_redis",
       one.resp.client_cpu_us / one.redis.client_cpu_us, "ratio", tp + ", \"goal\": 1");
  emit("resp", "resp_pipelined_vs_redis", piped.resp.qps / piped.redis.qps, "ratio",
       pp + ", \"goal\": 1.5");
  emit("resp", "resp_pipelined_cpu_vs_redis", piped.resp.server_cpu_us / piped.redis.server_cpu_us,
       "ratio", pp + ", \"goal\": 1");
  redisFree(mc);
  return mm_server->stop() == 0 ? 0 : 1;
}
#endif
