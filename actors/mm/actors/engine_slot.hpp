// An instance's engine, reachable from a thread that is not an actor (the
// HTTP server's network thread) so that a single query is answered where it
// arrived, without the hand-off to a CAF thread and back (two thread
// wake-ups a query: docs/performance.md, "HTTP queries answered where they
// arrive").
//
// Invariants:
// - The engine is read and changed only under the slot's mutex. The instance
//   actor holds it for each use (`lock()`, recursive: a handler's helpers may
//   take it again); another thread only tries it (`try_find`) and never
//   waits for the actor: a busy slot answers "ask the actor", and the query
//   goes the actor way, so the network thread is never held up by a scan or
//   a snapshot.
// - A slot answers other threads only while it is open: from the end of its
//   instance's restore (`open`) to the start of its stop (`close`) or its
//   exit (`retire`, a crash included), and on a
//   node of a cluster only while the node may serve the shard (its serving
//   deadline). Retire takes the engine out under the mutex, so no other
//   thread can be using it when it is destroyed.
// - A supervisor's slot outlives its instances: each run installs a new
//   engine under a new generation; a late retire of an older run is ignored.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "mm/actors/messages.hpp"
#include "mm/cluster/serving_deadline.hpp"
#include "mm/engine/engine.hpp"

namespace mm::actors {

template <class Profile>
class engine_slot {
 public:
  using engine_type = engine<Profile>;
  using request_type = match_request<typename Profile::query_type>;
  using reply_type = match_reply<typename Profile::model_type>;

  // The engine with the slot's mutex held, for the length of a statement or
  // a scope.
  class locked {
   public:
    locked(std::recursive_mutex& m, engine_type* e) : lock_(m), engine_(e) {}
    engine_type* operator->() const { return engine_; }
    engine_type& operator*() const { return *engine_; }

   private:
    std::unique_lock<std::recursive_mutex> lock_;
    engine_type* engine_;
  };

  // A new run's engine; returns its generation. Closed until open().
  std::uint64_t install(std::unique_ptr<engine_type> e,
                        std::shared_ptr<const cluster::serving_deadline> lease_gate) {
    std::lock_guard lock(mutex_);
    engine_ = std::move(e);
    lease_gate_ = std::move(lease_gate);
    open_ = false;
    routed_ = {};  // a new run counts from zero, as its instance does
    return ++generation_;
  }
  // The run's engine is restored: other threads may query it.
  void open(std::uint64_t generation) {
    std::lock_guard lock(mutex_);
    if (generation == generation_) open_ = true;
  }
  // The run is stopping (its last snapshot being written): other threads ask
  // the actor again, which answers as a stopping instance does.
  void close(std::uint64_t generation) {
    std::lock_guard lock(mutex_);
    if (generation == generation_) open_ = false;
  }
  // The run ends: the engine goes, taken out under the mutex.
  void retire(std::uint64_t generation) {
    std::unique_ptr<engine_type> gone;
    std::lock_guard lock(mutex_);
    if (generation != generation_) return;
    open_ = false;
    gone = std::move(engine_);
  }

  locked lock() { return locked(mutex_, engine_.get()); }

  // The engine's answer to `req`, given here on the calling thread; nullopt
  // when the slot is busy, closed, or its node may not serve the shard now:
  // then ask the instance actor. `last`: no member is asked after this one,
  // so its answer is final even when it found none. A final answer is
  // counted as the instance counts a routed query's (routed_answers).
  std::optional<reply_type> try_find(const request_type& req, bool last) {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || !open_ || !engine_) return std::nullopt;
    if (lease_gate_ && !lease_gate_->open()) return std::nullopt;
    auto reply = reply_type::from(engine_->find_match(req));
    if (last || reply.type != match_type::none_found) routed_.count(reply.type);
    return reply;
  }

  // The routed queries answered through try_find, for the instance's info
  // (kept here: the instance's own counters are its actor's alone).
  routed_answers routed() {
    std::lock_guard lock(mutex_);
    return routed_;
  }

 private:
  std::recursive_mutex mutex_;
  std::unique_ptr<engine_type> engine_;
  std::shared_ptr<const cluster::serving_deadline> lease_gate_;
  bool open_ = false;
  std::uint64_t generation_ = 0;
  routed_answers routed_;
};

// The slots of a set, one per shard of the whole set (index = shard), shared
// by the instances (each takes its shard's) and the query bridge.
template <class Profile>
struct engine_slots {
  explicit engine_slots(std::uint32_t shards) {
    for (std::uint32_t i = 0; i < shards; ++i)
      slots.push_back(std::make_shared<engine_slot<Profile>>());
  }
  std::vector<std::shared_ptr<engine_slot<Profile>>> slots;
};

}  // namespace mm::actors
