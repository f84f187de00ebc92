// The Redis side of the benches that measure the product against a Redis
// sorted set (mm_reference_bench, mm_resp_bench): the same players, one
// sorted set per region scored by MMR, and ZRANGEBYSCORE from a random start
// in the MMR window, LIMIT 0 10; a closed loop of any command through
// hiredis, with the server's CPU (from /proc) and this process's.
#pragma once

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "actor_load.hpp"
#include "bench_util.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/testing/child_process.hpp"
#include "mm/testing/temp_dir.hpp"

namespace mm::bench {

constexpr std::size_t depth = 64;  // queries in flight, for both
constexpr double window = 100;     // the demo profile's first MMR window

inline std::string in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t at = 0; at <= dirs.size();) {
    const auto colon = dirs.find(':', at);
    const std::string dir = dirs.substr(at, colon == std::string::npos ? colon : colon - at);
    const std::string candidate = dir + "/" + program;
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  return {};
}

// One Redis lookup: the region's sorted set, from a random start in the
// window (so repeated queries do not return the same ten players).
struct redis_query {
  std::string key, low, high;
};

inline std::vector<redis_query> redis_queries(const std::vector<request_t>& reqs, rng& r) {
  std::vector<redis_query> out;
  out.reserve(reqs.size());
  for (const auto& q : reqs) {
    const double low = q.query.mmr - window + r.unit() * 2 * window;
    out.push_back({"region:" + std::to_string(q.query.attributes[0]), std::to_string(low),
                   std::to_string(q.query.mmr + window)});
  }
  return out;
}

inline void append(redisContext* c, const redis_query& q) {
  redisAppendCommand(c, "ZRANGEBYSCORE %s %s %s LIMIT 0 10", q.key.c_str(), q.low.c_str(),
                     q.high.c_str());
}

inline bool take_reply(redisContext* c) {
  void* reply = nullptr;
  if (redisGetReply(c, &reply) != REDIS_OK || !reply) return false;
  const bool ok = static_cast<redisReply*>(reply)->type != REDIS_REPLY_ERROR;
  freeReplyObject(reply);
  return ok;
}

inline void load_redis(redisContext* c, const std::vector<player_row>& rows) {
  const std::size_t chunk = 10'000;
  for (std::size_t at = 0; at < rows.size(); at += chunk) {
    const std::size_t end = std::min(rows.size(), at + chunk);
    for (std::size_t i = at; i < end; ++i)
      redisAppendCommand(c, "ZADD region:%lld %f %llu",
                         static_cast<long long>(rows[i].attributes[0]), rows[i].mmr,
                         static_cast<unsigned long long>(rows[i].id));
    for (std::size_t i = at; i < end; ++i) take_reply(c);
  }
}

struct redis_measurement {
  double qps = 0, p50 = 0, p99 = 0, p999 = 0, server_cpu_us = 0, server_cores = 0;
  double late_p99 = 0;       // open loop: how late each lookup was written against its plan, p99
  double client_cpu_us = 0;  // closed loop: this process's CPU per lookup
  std::uint64_t errors = 0;
};

// Rates, the server's CPU since `cpu0` and the latency percentiles of a
// measurement that began at `t0`.
inline redis_measurement summary(redis_measurement m, const std::vector<double>& lat, double t0,
                                 double cpu0, long pid) {
  const double wall = now_s() - t0, cpu = process_cpu_s(pid) - cpu0;
  m.qps = static_cast<double>(lat.size()) / wall;
  m.server_cpu_us = lat.empty() ? 0 : cpu * 1e6 / static_cast<double>(lat.size());
  m.server_cores = cpu / wall;
  m.p50 = percentile(lat, 0.5);
  m.p99 = percentile(lat, 0.99);
  m.p999 = percentile(lat, 0.999);
  return m;
}

// Closed loop: `in_flight` commands always outstanding on one connection
// (each reply read lets the next command go out with the next write);
// `append(i)` appends the i-th command. A reply that is an error counts in
// `errors`.
template <class Append>
redis_measurement closed_loop(redisContext* c, Append append, double seconds, long pid,
                              std::size_t in_flight) {
  std::deque<double> sent;
  std::vector<double> lat;
  lat.reserve(4'000'000);
  std::size_t next = 0;
  redis_measurement m;
  const double t0 = now_s(), cpu0 = process_cpu_s(pid), until = t0 + seconds;
  const double own_cpu0 = cpu_seconds();
  for (std::size_t i = 0; i < in_flight; ++i) {
    append(next++);
    sent.push_back(now_s());
  }
  while (!sent.empty()) {
    if (!take_reply(c)) ++m.errors;
    lat.push_back((now_s() - sent.front()) * 1e6);
    sent.pop_front();
    if (now_s() < until) {
      append(next++);
      sent.push_back(now_s());
    }
  }
  m = summary(m, lat, t0, cpu0, pid);
  m.client_cpu_us = lat.empty() ? 0 : (cpu_seconds() - own_cpu0) * 1e6 / lat.size();
  return m;
}

inline redis_measurement redis_closed(redisContext* c, const std::vector<redis_query>& qs,
                                      double seconds, long pid, std::size_t in_flight = depth) {
  return closed_loop(
      c, [&](std::size_t i) { append(c, qs[i % qs.size()]); }, seconds, pid, in_flight);
}

// redis-server on a free loopback port, without persistence, holding the
// demo table's `players` (the same seed as matchmakerd's demo data).
struct loaded_redis {
  std::unique_ptr<test::child_process> process;
  redisContext* context = nullptr;
  ~loaded_redis() {
    if (context) redisFree(context);
  }
};

// Throws std::runtime_error when it does not start or answer.
inline std::unique_ptr<loaded_redis> start_redis(const std::string& binary,
                                                 const test::temp_dir& dir, std::size_t players) {
  auto out = std::make_unique<loaded_redis>();
  const std::uint16_t port = test::free_loopback_port();
  out->process = std::make_unique<test::child_process>(
      std::vector<std::string>{binary, "--port", std::to_string(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no", "--dir", dir.file("")});
  if (out->process->wait_for_line("Ready to accept connections").empty())
    throw std::runtime_error("redis-server did not start");
  out->context = redisConnect("127.0.0.1", port);
  if (!out->context || out->context->err)
    throw std::runtime_error("cannot connect to redis-server");
  rng r(2026);  // as matchmakerd's demo table: the same players
  load_redis(out->context, make_players(synthetic_population{}, players, 1, r));
  return out;
}

// The same queries for both servers: 200,000 attackers from the population.
inline std::vector<request_t> attackers(std::size_t players, rng& r) {
  std::vector<request_t> reqs;
  for (std::size_t i = 0; i < 200'000; ++i) {
    request_t q;
    q.query = make_query(synthetic_population{}, 1 + r.below(players), r);
    reqs.push_back(q);
  }
  return reqs;
}

}  // namespace mm::bench
