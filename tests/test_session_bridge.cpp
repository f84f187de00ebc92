// The session bridge, the HTTP threads' way to the session service: its
// creates keep their own deadlines (no CAF request timeout each), so a
// create the service never answers is answered by the bridge's sweep, after
// its timeout and before 1.125 × it, once; one still owed when the bridge
// stops is answered with an error. And creates the service answers leave no
// timer behind in CAF's clock (a request timeout each would stay there until
// it fell due, then cost the bridge a message to drop).
#include <catch2/catch.hpp>

#include "actor_fixture.hpp"
#include "mm/actors/session_bridge.hpp"
#include "session_fixture.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;

TEST_CASE("a create the session service never answers times out on the bridge's sweep, once",
          "[actors][session]") {
  test::actor_fixture f;
  // A service that leaves every request unanswered in its mailbox.
  auto silent = caf::actor_cast<session_interfaces::service>(
      f.sys().spawn([](caf::event_based_actor* self) -> caf::behavior {
        self->set_default_handler(caf::skip);
        return {[](int) {}};
      }));
  std::vector<caf::expected<std::uint64_t>> got;
  const auto create = [&](session_bridge& b, player_id who) {
    b.create("duel", test::party({1500}, who),
             [&got](caf::expected<std::uint64_t> a) { got.push_back(std::move(a)); });
    f.run();
  };
  {
    session_bridge bridge(f.sys(), silent, 800ms);
    create(bridge, 1);
    f.advance(400ms);
    create(bridge, 2);
    f.advance(399ms);
    CHECK(got.empty());
    f.advance(100ms);
    REQUIRE(got.size() == 1);
    CHECK(got[0].error() == caf::sec::request_timeout);
    f.advance(500ms);
    REQUIRE(got.size() == 2);
    CHECK(got[1].error() == caf::sec::request_timeout);
    f.advance(2s);
    CHECK(got.size() == 2);  // nothing twice
    create(bridge, 3);       // still owed when the bridge stops
  }
  f.run();
  REQUIRE(got.size() == 3);
  CHECK_FALSE(got[2]);
  caf::anon_send_exit(silent, caf::exit_reason::kill);
}

TEST_CASE("creates answered by the session service leave no timer behind each",
          "[actors][session]") {
  test::session_fixture sf;
  auto& f = sf.f;
  const auto timers = [&] { return f.sched().clock().schedule().size(); };
  session_bridge bridge(f.sys(), sf.s, 10s);
  std::vector<caf::expected<std::uint64_t>> got;
  const std::size_t before = timers();
  for (player_id who = 1; who <= 50; ++who)
    bridge.create("coop", test::party({1500}, who),
                  [&got](caf::expected<std::uint64_t> a) { got.push_back(std::move(a)); });
  f.run();
  REQUIRE(got.size() == 50);
  for (const auto& a : got) CHECK(a);
  CHECK(timers() <= before + 1);  // the bridge's one sweep
  f.advance(11s);                 // the sweep ends with nothing owed
  CHECK(timers() <= before);
}
