// Deterministic actor tests: CAF's test scheduler runs every actor on the
// test's thread when asked, and its clock only moves when the test moves it.
#pragma once

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <memory>
#include <optional>

#include "mm/actors/registration.hpp"

namespace mm::test {

class actor_fixture {
 public:
  actor_fixture() {
    cfg_.set("scheduler.policy", caf::atom("testing"));
    cfg_.set("logger.verbosity", caf::atom("quiet"));
    actors::add_message_types<generic_profile>(cfg_, "generic");
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    sched_ = &dynamic_cast<caf::scheduler::test_coordinator&>(sys_->scheduler());
  }
  // Every actor a test spawned must have been told to exit: the system waits
  // for all of them. Pending timers and request timeouts fire here.
  ~actor_fixture() {
    run();
    advance(std::chrono::hours(24 * 365));
  }

  caf::actor_system& sys() { return *sys_; }
  caf::scheduler::test_coordinator& sched() { return *sched_; }

  // Runs every ready job, but never past what the clock allows.
  void run() {
    while (sched_->try_run_once()) {
    }
  }
  // Moves the virtual clock (firing due timers) and runs what became ready.
  void advance(caf::timespan d) {
    sched_->clock().advance_time(d);
    run();
  }
  // Runs ready jobs of every actor except those named `skipped`.
  void run_except(const char* skipped) {
    while (sched_->run_jobs_filtered([&](caf::resumable* r) {
      auto* a = dynamic_cast<caf::local_actor*>(r);
      return !a || std::string(a->name()) != skipped;
    }) > 0) {
    }
  }

  // Sends a request from a fresh actor, runs everything, returns the reply or
  // the error (nothing yet if it waits on the clock).
  template <class R, class Handle, class... Ts>
  std::pair<std::optional<R>, caf::error> ask(const Handle& h, Ts... xs) {
    auto out = request<R>(h, xs...);
    run();
    return *out;
  }
  // Sends a request from a fresh actor without running anything: the reply
  // or the error lands in the returned slot when the scheduler gets to it.
  // (Shared, not on this stack: an unanswered request may time out after the
  // caller returned, when the fixture winds the clock forward at the end.)
  template <class R, class Handle, class... Ts>
  std::shared_ptr<std::pair<std::optional<R>, caf::error>> request(const Handle& h, Ts... xs) {
    auto out = std::make_shared<std::pair<std::optional<R>, caf::error>>();
    sys_->spawn([out, h, xs...](caf::event_based_actor* self) {
      self->request(h, std::chrono::seconds(24 * 3600), xs...)
          .then([out](R& r) { out->first = std::move(r); },
                [out](caf::error& e) { out->second = std::move(e); });
    });
    return out;
  }

 private:
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::scheduler::test_coordinator* sched_ = nullptr;
};

}  // namespace mm::test
