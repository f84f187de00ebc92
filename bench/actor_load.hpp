// Load generators for benchmarks that drive matchmakers through CAF: closed
// loops of single queries or batches, and open loops of Poisson arrivals
// from a thread of their own. They run in the benchmark's actor system, in
// the same process as the matchmaker or across CAF's network layer.
#pragma once

#include <sys/prctl.h>
#include <sys/resource.h>

#include <algorithm>
#include <caf/all.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "mm/actors/client.hpp"
#include "mm/actors/router.hpp"
#include "mm/engine/generic_profile.hpp"
#include "mm/engine/random.hpp"
#include "mm/strategies/percentile.hpp"

namespace mm::bench {

using namespace mm::actors;
using reply_t = match_reply<generic_model>;
using request_t = match_request<generic_query>;
using fire_atom = caf::atom_constant<caf::atom("ldfire")>;
using ready_atom = caf::atom_constant<caf::atom("ldready")>;
// A loader's requests, shared, not copied: copying tens of thousands of
// queries into a loader took the worker for tens of milliseconds, which
// the first arrivals of an open loop waited for.
using request_set = std::shared_ptr<const std::vector<request_t>>;
using front = client_interface<generic_profile>::type;

// The reference: the same request and reply types answered at once.
inline front::behavior_type echo_actor() {
  return {
      [](find_atom, const request_t& r) {
        reply_t x;
        x.type = match_type::success;
        x.best_candidate_id = r.query.attacker + 1;
        return x;
      },
      [](find_atom, const std::vector<request_t>& batch) {
        std::vector<reply_t> out(batch.size());
        for (std::size_t i = 0; i < batch.size(); ++i) {
          out[i].type = match_type::success;
          out[i].best_candidate_id = batch[i].query.attacker + 1;
        }
        return out;
      },
      [](update_atom, const player_update<generic_model>&) {},
      [](update_atom, const std::vector<player_update<generic_model>>&) {},
      [](enroll_atom, player_id) { return true; },
      [](remove_atom, player_id) { return true; },
  };
}

inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// What the load generators share: the latencies they measured.
struct load_results {
  std::mutex m;
  std::vector<double> latencies_us, lateness_us;
  std::uint64_t replies = 0, errors = 0;
};

// How a load generator sends one query: a request to one handle (a
// supervisor, the client actor, a remote proxy), or through a router of its
// own, in its own context (the game-facing API). Returns the request's handle.
using reply_handle = decltype(std::declval<caf::event_based_actor*>()->request(
    std::declval<front>(), std::chrono::seconds(1), find_atom::value, std::declval<request_t>()));
using sender_fn = std::function<reply_handle(caf::event_based_actor*, const request_t&)>;

template <class Handle>
sender_fn to_handle(Handle h) {
  return [h](caf::event_based_actor* self, const request_t& r) {
    return self->request(h, std::chrono::seconds(10), find_atom::value, r);
  };
}

inline sender_fn through_router(set_router<generic_profile> router) {
  return [router](caf::event_based_actor* self, const request_t& r) mutable {
    return router.find(self, std::chrono::seconds(10), r);
  };
}

// Closed loop (in_flight > 0): keeps `in_flight` requests outstanding until
// `until` (wall time); latency runs from the send. Open loop (in_flight ==
// 0): sends one request per `fire` message, which carries the arrival's
// planned time (arrivals()), and latency runs from that planned time, so a
// request that waited for the loader or a worker counts that wait (no
// coordinated omission). How late the arrival thread itself was is kept
// apart, by arrivals().
inline void loader(caf::event_based_actor* self, sender_fn send, request_set reqs,
                   std::size_t in_flight, double until, std::size_t expected, load_results* out) {
  struct local {
    std::vector<double> lat;
    std::size_t next = 0;
    std::uint64_t replies = 0, errors = 0;
  };
  auto st = std::make_shared<local>();
  // Room for every sample up front: growing a large vector inside the loader
  // would stall it (and show up as the service's latency).
  st->lat.reserve(expected);
  auto flush = [=] {
    std::lock_guard lock(out->m);
    out->latencies_us.insert(out->latencies_us.end(), st->lat.begin(), st->lat.end());
    out->replies += st->replies;
    out->errors += st->errors;
  };
  // `since`: the planned arrival (open loop), or a negative number for "now".
  auto fire = std::make_shared<std::function<void(bool, double)>>();
  *fire = [=](bool again, double since) {
    const double sent = since >= 0 ? since : now_s();
    send(self, (*reqs)[st->next++ % reqs->size()])
        .then(
            [=](const reply_t&) {
              st->lat.push_back((now_s() - sent) * 1e6);
              ++st->replies;
              if (again && now_s() < until) (*fire)(true, -1);
            },
            [=](caf::error&) {
              ++st->errors;
              if (again && now_s() < until) (*fire)(true, -1);
            });
  };
  for (std::size_t i = 0; i < in_flight; ++i) (*fire)(true, -1);
  self->become([=](fire_atom, double planned) { (*fire)(false, planned); },
               [](ready_atom) { return true; });
  // Flushed inside the actor, before its down message reaches drive().
  self->set_exit_handler([=](const caf::exit_msg& m) {
    flush();
    self->quit(m.reason);
  });
}

// Open-loop arrivals: a thread of its own plans Poisson arrivals at `rate`
// per second until `until` and hands each, at its time, to the next loader in
// turn. Behind plan, it sends at once (the load stays open-loop). Returns how
// late it handed each arrival over against the plan, in microseconds.
//
// With `cpu` < 0 it sleeps until each arrival (timer slack set to 1 us), on
// whatever core the kernel gives it. With `cpu` >= 0 it runs on that core
// alone and spins to each planned time: no wake-up latency of its own, so
// it stays on plan as long as that core is its own (the caller keeps the
// other threads off it).
inline std::vector<double> arrivals(const std::vector<caf::actor>& loaders, double rate,
                                    double until, std::uint64_t seed, int cpu = -1) {
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  if (cpu >= 0) pin_thread_to({cpu});
  rng gaps(seed);
  const auto gap_s = [&] {
    const double u = (static_cast<double>(gaps.below(1u << 30)) + 0.5) / (1u << 30);
    return -std::log(u) / rate;
  };
  std::vector<double> late;
  late.reserve(static_cast<std::size_t>(1.3 * rate * std::max(0.0, until - now_s())) + 1024);
  std::size_t k = 0;
  for (double planned = now_s() + gap_s(); planned < until; planned += gap_s()) {
    if (cpu >= 0) {
      while (now_s() < planned) {
      }
    } else {
      const double ahead = planned - now_s();
      if (ahead > 0) std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
    }
    late.push_back(std::max(0.0, now_s() - planned) * 1e6);
    caf::anon_send(loaders[k++ % loaders.size()], fire_atom::value, planned);
  }
  if (cpu >= 0) pin_thread_to({});
  return late;
}

struct measurement {
  double qps = 0, per_cpu_s = 0, p50 = 0, p99 = 0, p999 = 0;
  double late_p99 = 0;   // open loop: how late the arrival thread sent, p99
  double cpu_cores = 0;  // process CPU time / wall time while the load ran
  std::uint64_t errors = 0;
};

// Loader i's share of the requests.
inline request_set share(const std::vector<request_t>& reqs, std::size_t i, std::size_t loaders) {
  return std::make_shared<const std::vector<request_t>>(
      reqs.begin() + static_cast<std::ptrdiff_t>(i * reqs.size() / loaders),
      reqs.begin() + static_cast<std::ptrdiff_t>((i + 1) * reqs.size() / loaders));
}

// Waits until the loaders stopped sending (at `until`) and had their last
// replies, stops them (they flush into `res`), and sums up since t0 / c0.
inline measurement finish(caf::actor_system& sys, const std::vector<caf::actor>& spawned,
                          const load_results& res, double t0, double c0, double until,
                          double seconds) {
  caf::scoped_actor self{sys};
  for (auto& l : spawned) self->monitor(l);
  std::this_thread::sleep_for(std::chrono::duration<double>(std::max(0.0, until - now_s()) + 0.5));
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
  if (!res.lateness_us.empty()) m.late_p99 = percentile(res.lateness_us, 0.99);
  m.errors = res.errors;
  return m;
}

// `make_sender(i)` gives loader i its way to send (a router each, seeded apart).
template <class MakeSender>
measurement drive(caf::actor_system& sys, MakeSender make_sender,
                  const std::vector<request_t>& reqs, std::size_t loaders, std::size_t in_flight,
                  double rate, double seconds, int generator_cpu = -1) {
  load_results res;
  double t0 = now_s(), c0 = cpu_seconds();
  double until = t0 + seconds;
  // Expected replies per loader: the rate, or a generous bound of 1.5 M/s closed-loop.
  const double expected = (rate > 0 ? 1.3 * rate : 1.5e6) * seconds / static_cast<double>(loaders);
  std::vector<caf::actor> spawned;
  for (std::size_t i = 0; i < loaders; ++i)
    spawned.push_back(sys.spawn(loader, sender_fn(make_sender(i)), share(reqs, i, loaders),
                                rate > 0 ? 0 : in_flight, until,
                                static_cast<std::size_t>(expected) + 1024, &res));
  if (rate > 0) {
    // Arrivals start once every loader is ready, so none waits for a
    // loader's start-up.
    caf::scoped_actor ask{sys};
    for (auto& l : spawned)
      ask->request(l, caf::infinite, ready_atom::value).receive([](bool) {}, [](caf::error&) {});
    t0 = now_s();
    c0 = cpu_seconds();
    until = t0 + seconds;
    auto late =
        arrivals(spawned, rate, until, static_cast<std::uint64_t>(rate) + loaders, generator_cpu);
    std::lock_guard lock(res.m);
    res.lateness_us = std::move(late);
  }
  return finish(sys, spawned, res, t0, c0, until, seconds);
}

// Closed loop of batches: keeps `in_flight` batches of `batch` queries each
// outstanding against `target` until `until`. Latency is per batch.
inline void batch_loader(caf::event_based_actor* self, front target, request_set reqs,
                         std::size_t in_flight, std::size_t batch, double until,
                         load_results* out) {
  struct local {
    std::vector<double> lat;
    std::size_t next = 0;
    std::uint64_t replies = 0, errors = 0;
  };
  auto st = std::make_shared<local>();
  auto fire = std::make_shared<std::function<void()>>();
  *fire = [=] {
    std::vector<request_t> b;
    b.reserve(batch);
    for (std::size_t i = 0; i < batch; ++i) b.push_back((*reqs)[st->next++ % reqs->size()]);
    const double sent = now_s();
    self->request(target, std::chrono::seconds(10), find_atom::value, std::move(b))
        .then(
            [=](const std::vector<reply_t>& r) {
              st->lat.push_back((now_s() - sent) * 1e6);
              st->replies += r.size();
              if (now_s() < until) (*fire)();
            },
            [=](caf::error& e) {
              if (st->errors++ == 0)
                std::fprintf(stderr, "bench: batch: %s\n", self->system().render(e).c_str());
              if (now_s() < until) (*fire)();
            });
  };
  for (std::size_t i = 0; i < in_flight; ++i) (*fire)();
  // A behavior of its own: without one the actor would end after this function.
  self->become([](fire_atom, double) {});
  self->set_exit_handler([=](const caf::exit_msg& m) {
    std::lock_guard lock(out->m);
    out->latencies_us.insert(out->latencies_us.end(), st->lat.begin(), st->lat.end());
    out->replies += st->replies;
    out->errors += st->errors;
    self->quit(m.reason);
  });
}

inline measurement drive_batches(caf::actor_system& sys, front target,
                                 const std::vector<request_t>& reqs, std::size_t loaders,
                                 std::size_t in_flight, std::size_t batch, double seconds) {
  load_results res;
  const double t0 = now_s(), c0 = cpu_seconds();
  const double until = t0 + seconds;
  std::vector<caf::actor> spawned;
  for (std::size_t i = 0; i < loaders; ++i)
    spawned.push_back(
        sys.spawn(batch_loader, target, share(reqs, i, loaders), in_flight, batch, until, &res));
  return finish(sys, spawned, res, t0, c0, until, seconds);
}

template <class Handle>
auto handle_sender(Handle h) {
  return [h](std::size_t) { return to_handle(h); };
}

inline auto router_sender(const std::vector<interfaces<generic_profile>::matchmaker>& set) {
  return [set](std::size_t i) {
    return through_router(set_router<generic_profile>(set, std::uint64_t{77 + i}));
  };
}

}  // namespace mm::bench
