// The build links CAF 0.17 through cmake/FindCAF.cmake; this proves it with one
// typed actor on the deterministic test scheduler (no threads, no sleeps).
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <catch2/catch.hpp>

namespace {
using echo_actor = caf::typed_actor<caf::replies_to<int>::with<int>>;

echo_actor::behavior_type doubling() {
  return {[](int x) { return 2 * x; }};
}
}  // namespace

TEST_CASE("CAF 0.17 links and runs on the deterministic scheduler", "[caf]") {
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("testing"));
  caf::actor_system sys{cfg};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  auto d = sys.spawn(doubling);
  int answer = 0;
  auto client = sys.spawn([&](caf::event_based_actor* self) {
    self->request(d, caf::infinite, 21).then([&](int r) { answer = r; });
  });
  while (sched.try_run_once()) {
  }
  CHECK(answer == 42);
  caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
  while (sched.try_run_once()) {
  }
}
