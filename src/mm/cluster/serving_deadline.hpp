// Until when a node may serve what it holds leases on: the fence on the
// node's side (docs/design.md, "Leases"). The lease agent moves it after each
// renewal to the instant the renewal was sent plus the lease, less a margin:
// the database's expiry is later than that (the renewal reached it after it
// was sent), so the node stops serving before any other node may take what
// it holds. Every request path reads it (one atomic load and a clock read);
// a node paused past it (SIGSTOP), or cut off from the database, serves
// nothing more from the moment it runs again, whatever its threads were
// doing when it stopped.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace mm::cluster {

class serving_deadline {
 public:
  using clock = std::chrono::steady_clock;

  bool open(clock::time_point now = clock::now()) const {
    return now.time_since_epoch().count() < until_.load(std::memory_order_acquire);
  }
  void extend_to(clock::time_point t) {
    until_.store(t.time_since_epoch().count(), std::memory_order_release);
  }
  void close() { until_.store(0, std::memory_order_release); }
  clock::time_point until() const {
    return clock::time_point(clock::duration(until_.load(std::memory_order_acquire)));
  }

 private:
  std::atomic<clock::rep> until_{0};
};

}  // namespace mm::cluster
