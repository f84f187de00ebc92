// Smallest program on CAF 0.17: one typed actor answers one request. It proves
// that cmake/FindCAF.cmake yields working CAF::core and CAF::io targets.
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <iostream>

namespace {
using doubler = caf::typed_actor<caf::replies_to<int>::with<int>>;

doubler::behavior_type doubling() {
  return {[](int x) { return 2 * x; }};
}
}  // namespace

int main() {
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  auto d = sys.spawn(doubling);
  int answer = 0;
  self->request(d, caf::infinite, 21)
      .receive([&](int r) { answer = r; }, [&](caf::error&) { answer = -1; });
  std::cout << "CAF " << CAF_MAJOR_VERSION << "." << CAF_MINOR_VERSION << "." << CAF_PATCH_VERSION
            << " round trip: 21 * 2 = " << answer << "\n";
  self->send_exit(d, caf::exit_reason::user_shutdown);
  return answer == 42 ? 0 : 1;
}
