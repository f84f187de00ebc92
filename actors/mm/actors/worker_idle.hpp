// How CAF's worker threads wait when they run out of work. CAF 0.17's own
// default ("poll"): after a burst a worker polls its queue 100 times, then
// 500 more times with a 50 µs sleep between polls (25 ms at ~20,000
// wake-ups a second), and only then waits on a condition variable (woken by
// a message from outside the scheduler, e.g. the network or a timer, or after
// 10 ms to steal work). At a low steady rate (a query every few ms) the
// workers never leave the 50 µs phase: most of a core burns on nothing.
// "sleep" skips that phase: after the 100 quick polls the worker waits.
// docs/performance.md, "Worker threads at a low rate", has the measurements.
#pragma once

#include <caf/actor_system_config.hpp>
#include <cstddef>
#include <string>

namespace mm::actors {

enum class worker_idle { poll, sleep };

inline const char* to_string(worker_idle w) {
  return w == worker_idle::poll ? "poll" : "sleep";
}

// Sets CAF's work-stealing parameters for `how`, before the actor system is
// made from `cfg`.
// Either value is set explicitly, so a later call overrides an earlier one
// (use_network sets `sleep`; 500 is CAF 0.17's own default).
inline void set_worker_idle(caf::actor_system_config& cfg, worker_idle how) {
  cfg.set("work-stealing.moderate-poll-attempts",
          how == worker_idle::sleep ? std::size_t{0} : std::size_t{500});
}

}  // namespace mm::actors
