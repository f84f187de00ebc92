// Actor benchmark: queries through CAF actors against 1,000,000
// cached players, with load generators keeping many requests in flight. Paired
// in the same run with the bare CAF round trip (the same messages answered by a
// trivial handler), so the ratio says what the matchmaker costs on top of CAF.
//
//   mm_actor_bench [players] [seconds per measurement]
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "bench_util.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/actors/worker_idle.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/snapshot.hpp"
#include "mm/strategies/percentile.hpp"

namespace {
using namespace mm;
using namespace mm::actors;
using bench::emit;
using bench::now_s;
using reply_t = match_reply<generic_model>;
using request_t = match_request<generic_query>;
using tick_atom = caf::atom_constant<caf::atom("ldtick")>;
using front = client_interface<generic_profile>::type;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// What the load generators share: the latencies they measured.
struct load_results {
  std::mutex m;
  std::vector<double> latencies_us;
  std::uint64_t replies = 0, errors = 0;
};

// Closed loop: keeps `in_flight` requests outstanding until `until` (wall time).
// Open loop (rate > 0): sends `rate` requests per second on a 1 ms tick.
// Poisson (rate < 0): -rate requests per second, one at a time, each after an
// exponential gap (a timer per request: for low rates, where a 1 ms tick
// would be most of the load).
template <class Handle>
void loader(caf::event_based_actor* self, Handle target, std::vector<request_t> reqs,
            std::size_t in_flight, double rate, double until, load_results* out) {
  struct local {
    std::vector<double> lat;
    std::size_t next = 0;
    std::uint64_t replies = 0, errors = 0;
    double carry = 0;
  };
  auto st = std::make_shared<local>();
  auto flush = [=] {
    std::lock_guard lock(out->m);
    out->latencies_us.insert(out->latencies_us.end(), st->lat.begin(), st->lat.end());
    out->replies += st->replies;
    out->errors += st->errors;
  };
  auto fire = std::make_shared<std::function<void(bool)>>();
  *fire = [=](bool again) {
    const double sent = now_s();
    const auto& r = reqs[st->next++ % reqs.size()];
    self->request(target, std::chrono::seconds(10), find_atom::value, r)
        .then(
            [=](const reply_t&) {
              st->lat.push_back((now_s() - sent) * 1e6);
              ++st->replies;
              if (again && now_s() < until) (*fire)(true);
            },
            [=](caf::error&) {
              ++st->errors;
              if (again && now_s() < until) (*fire)(true);
            });
  };
  if (rate == 0) {
    for (std::size_t i = 0; i < in_flight; ++i) (*fire)(true);
  } else {
    self->send(self, tick_atom::value);
  }
  auto gaps = std::make_shared<rng>(static_cast<std::uint64_t>(until * 1e6));
  self->become([=](tick_atom) {
    if (now_s() >= until) return;
    if (rate < 0) {
      (*fire)(false);
      const double u = (static_cast<double>(gaps->below(1u << 30)) + 0.5) / (1u << 30);
      const double gap_s = -std::log(u) / -rate;
      self->delayed_send(self, std::chrono::microseconds(static_cast<std::int64_t>(gap_s * 1e6)),
                         tick_atom::value);
      return;
    }
    st->carry += rate / 1000.0;
    for (; st->carry >= 1; st->carry -= 1) (*fire)(false);
    self->delayed_send(self, std::chrono::milliseconds(1), tick_atom::value);
  });
  // Flushed inside the actor, before its down message reaches drive().
  self->set_exit_handler([=](const caf::exit_msg& m) {
    flush();
    self->quit(m.reason);
  });
}

struct measurement {
  double qps = 0, per_cpu_s = 0, p50 = 0, p99 = 0, p999 = 0;
  double cpu_cores = 0;  // process CPU time / wall time while the load ran
  std::uint64_t errors = 0;
};

template <class Handle>
measurement drive(caf::actor_system& sys, Handle target, const std::vector<request_t>& reqs,
                  std::size_t loaders, std::size_t in_flight, double rate, double seconds) {
  load_results res;
  const double t0 = now_s(), c0 = cpu_seconds();
  const double until = t0 + seconds;
  std::vector<caf::actor> spawned;
  for (std::size_t i = 0; i < loaders; ++i) {
    std::vector<request_t> mine(
        reqs.begin() + static_cast<std::ptrdiff_t>(i * reqs.size() / loaders),
        reqs.begin() + static_cast<std::ptrdiff_t>((i + 1) * reqs.size() / loaders));
    spawned.push_back(sys.spawn(loader<Handle>, target, std::move(mine), in_flight,
                                rate / static_cast<double>(loaders), until, &res));
  }
  // Loaders stop sending at `until`; wait for their last replies, then stop them.
  caf::scoped_actor self{sys};
  for (auto& l : spawned) self->monitor(l);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds + 0.5));
  for (auto& l : spawned) self->send_exit(l, caf::exit_reason::user_shutdown);
  std::size_t down = 0;
  self->receive_while([&] { return down < spawned.size(); })([&](const caf::down_msg&) { ++down; });
  const double wall = now_s() - t0, cpu = cpu_seconds() - c0;
  measurement m;
  m.qps = static_cast<double>(res.replies) / seconds;
  m.per_cpu_s = static_cast<double>(res.replies) / cpu;
  m.cpu_cores = cpu / wall;
  m.p50 = percentile(res.latencies_us, 0.5);
  m.p99 = percentile(res.latencies_us, 0.99);
  m.p999 = percentile(res.latencies_us, 0.999);
  m.errors = res.errors;
  return m;
}

// The reference: the same request and reply types answered at once.
front::behavior_type echo_actor() {
  return {
      [](find_atom, const request_t& r) {
        reply_t x;
        x.type = match_type::success;
        x.best_candidate_id = r.query.attacker + 1;
        return x;
      },
      [](update_atom, const player_update<generic_model>&) {},
      [](enroll_atom, player_id) { return true; },
      [](remove_atom, player_id) { return true; },
  };
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
    e.rebalance(1);
    for (const auto& m : models) e.update(m.id(), m);
    save_state(db, name + "-" + std::to_string(k), e, 1);
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
  options o;
  o.player_cache_size = static_cast<std::uint32_t>(rows.size() / 2);
  o.database_cache_size = o.player_cache_size;
  o.buckets_rebalance_sample_count = o.player_cache_size;
  o.enable_database_scan = false;
  o.random_seed = 9;
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
    auto client =
        spawn_client<generic_profile>(sys, set, std::chrono::milliseconds(1000), std::uint64_t{5});
    caf::scoped_actor self{sys};
    wait_until_restored(self, set);
    const std::string p =
        params + ", \"instances\": 2, \"worker_idle\": \"" + to_string(mode) + "\"";
    const auto low = drive(sys, front{client}, reqs, 1, 1, -100.0, seconds);
    low_cpu[m] = low.cpu_cores;
    emit("actors", "cpu_cores_at_100_per_s", low.cpu_cores, "cores",
         p + ", \"offered_per_s\": 100, \"arrivals\": \"poisson\"");
    emit("actors", "latency_p99_at_100_per_s_us", low.p99, "us", p);
    const auto top = drive(sys, front{client}, reqs, 4, 64, 0, seconds);
    peak[m] = top.qps;
    emit("actors", "actor_queries_per_s", top.qps, "1/s", p);
    const auto half = drive(sys, front{client}, reqs, 16, 64, top.qps / 2, seconds);
    half_p99[m] = half.p99;
    emit("actors", "latency_p99_half_load_us", half.p99, "us", p);
    self->send_exit(client, caf::exit_reason::user_shutdown);
    for (auto& h : set) self->send_exit(h, caf::exit_reason::user_shutdown);
  }
  if (low_cpu[0] > 0 && peak[0] > 0 && half_p99[0] > 0) {
    emit("actors", "sleep_vs_poll_cpu_at_100_per_s", low_cpu[1] / low_cpu[0], "ratio", params);
    emit("actors", "sleep_vs_poll_peak_per_s", peak[1] / peak[0], "ratio", params);
    emit("actors", "sleep_vs_poll_half_load_p99", half_p99[1] / half_p99[0], "ratio", params);
  }
}

int main(int argc, char** argv) {
  const std::size_t players = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const double seconds = argc > 2 ? std::strtod(argv[2], nullptr) : 3.0;
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

  compare_worker_idle(db_path, rows, reqs, seconds, params);

  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  cfg.set("logger.verbosity", caf::atom("quiet"));
  add_message_types<generic_profile>(cfg, "generic");
  caf::actor_system sys{cfg};

  const front echo = sys.spawn(echo_actor);
  const auto ref = drive(sys, echo, reqs, loaders, in_flight, 0, seconds);
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  emit("actors", "caf_roundtrip_per_s", ref.qps, "1/s", params);
  emit("actors", "caf_roundtrip_per_cpu_s", ref.per_cpu_s, "1/s", params);

  double n1_per_cpu = 0, n1_qps = 0;
  for (std::uint32_t n : {1u, 2u}) {
    options o;
    o.player_cache_size = static_cast<std::uint32_t>(players / n);
    o.database_cache_size = o.player_cache_size;
    o.buckets_rebalance_sample_count = o.player_cache_size;
    o.enable_database_scan = false;
    o.random_seed = 9;
    const std::string name = "n" + std::to_string(n);
    prepare_snapshots(db_path, name, n, rows, o);

    instance_config<generic_profile> base;
    base.id = name;
    base.opts = o;
    base.profile = generic_profile(demo_profile_config());
    base.database.path = db_path;
    auto set = spawn_instance_set<generic_profile>(sys, n, base);
    auto client =
        spawn_client<generic_profile>(sys, set, std::chrono::milliseconds(1000), std::uint64_t{5});
    caf::scoped_actor self{sys};
    const std::uint64_t cached = wait_until_restored(self, set);
    const std::string p = params + ", \"instances\": " + std::to_string(n) + ", \"path\": \"" +
                          (n == 1 ? "supervisor" : "client") + "\"" +
                          ", \"cached\": " + std::to_string(cached);
    // One instance needs no routing: games hold its supervisor's handle. Two go
    // through the client, which routes and falls back.
    const front target = n == 1 ? front{set[0]} : front{client};
    const auto m = drive(sys, target, reqs, loaders, in_flight, 0, seconds);
    // The per-CPU comparison of N=2 with N=1 needs the same path: the client.
    const auto via_client =
        n == 1 ? drive(sys, front{client}, reqs, loaders, in_flight, 0, seconds) : m;
    emit("actors", "actor_queries_per_s", m.qps, "1/s", p);
    emit("actors", "actor_queries_per_cpu_s", m.per_cpu_s, "1/s", p);
    emit("actors", "latency_p50_us", m.p50, "us", p);
    emit("actors", "latency_p99_us", m.p99, "us", p);
    emit("actors", "latency_p999_us", m.p999, "us", p);
    // Half of the peak rate, offered open-loop by more generators in smaller
    // bursts (each sends on a 1 ms tick), so the latency is the service's.
    const auto half = drive(sys, target, reqs, 4 * loaders, in_flight, m.qps / 2, seconds);
    emit("actors", "latency_p99_half_load_us", half.p99, "us",
         p + ", \"offered_per_s\": " + std::to_string(static_cast<long long>(m.qps / 2)));
    if (n == 1) {
      n1_per_cpu = via_client.per_cpu_s;
      n1_qps = via_client.qps;
      emit("actors", "actor_queries_per_s_via_client", via_client.qps, "1/s", p);
      emit("actors", "actor_queries_per_cpu_s_via_client", via_client.per_cpu_s, "1/s", p);
      emit("actors", "n1_vs_caf_roundtrip", m.qps / ref.qps, "ratio", p);
    } else {
      emit("actors", "n2_vs_n1_per_cpu_s", m.per_cpu_s / n1_per_cpu, "ratio",
           p + ", \"both_via\": \"client\"");
      emit("actors", "n2_vs_n1_per_s", m.qps / n1_qps, "ratio", p + ", \"both_via\": \"client\"");
    }

    if (n == 2) {
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
      std::vector<measurement> guarded, direct;
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
        const auto rm = drive(remote_sys, *remote, reqs, loaders, in_flight, 0, seconds / 4);
        if (turn > 0) (guard ? guarded : direct).push_back(rm);
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
      const std::string g = p + ", \"port\": \"guarded\", \"turns\": 4";
      emit("actors", "remote_queries_per_s", median(guarded, &measurement::qps), "1/s", g);
      emit("actors", "remote_latency_p99_us", median(guarded, &measurement::p99), "us", g);
      emit("actors", "remote_latency_p50_us", median(guarded, &measurement::p50), "us", g);
      const std::string u = p + ", \"port\": \"caf_direct\", \"turns\": 4";
      emit("actors", "remote_unguarded_queries_per_s", median(direct, &measurement::qps), "1/s", u);
      emit("actors", "remote_unguarded_latency_p99_us", median(direct, &measurement::p99), "us", u);
      if (!direct.empty() && !guarded.empty()) {
        emit("actors", "remote_guarded_vs_unguarded_per_s",
             median(guarded, &measurement::qps) / median(direct, &measurement::qps), "ratio", p);
        emit("actors", "remote_guarded_vs_unguarded_per_cpu_s",
             median(guarded, &measurement::per_cpu_s) / median(direct, &measurement::per_cpu_s),
             "ratio", p);
      }
    }
    self->send_exit(client, caf::exit_reason::user_shutdown);
    for (auto& h : set) self->send_exit(h, caf::exit_reason::user_shutdown);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
