// A new configuration for running session queues (session_reconfigure.hpp),
// on the deterministic scheduler with a real SQLite journal: the next tick
// runs the new rules; waiting tickets keep their ids and waiting times;
// nothing sent meanwhile is lost; what no longer fits fails, written; a
// queue no longer configured is closed; a config that cannot run changes
// nothing.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "mm/engine/random.hpp"
#include "session_fixture.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using session::ticket_state;
using test::party;
using test::session_fixture;
using test::two_queues;

namespace {

// `c`'s queues with the duel's skill rule at `max_difference`.
queue_set with_duel_skill(const session_service_config& c, double max_difference) {
  queue_set next{c.queues, c.default_queue};
  next.queues[1].rules[0].max_difference = max_difference;
  return next;
}

std::pair<std::optional<std::uint32_t>, caf::error> configure(session_fixture& x, queue_set next) {
  return x.f.ask<std::uint32_t>(x.svc, configure_atom::value, std::move(next));
}

std::vector<waiting_ticket_view> waiting(session_fixture& x, const std::string& queue) {
  auto [page, err] = x.f.ask<std::vector<waiting_ticket_view>>(
      x.s, inspect_atom::value, queue, std::uint32_t{0}, std::uint32_t{1000});
  REQUIRE(page);
  return *page;
}

}  // namespace

TEST_CASE("a new rule holds from the queue's next tick, its waiting tickets kept",
          "[session][actors]") {
  session_fixture x;
  const auto a = x.create("duel", party({1000}, 1));
  const auto b = x.create("duel", party({1500}, 2));
  const auto coop = x.create("coop", party({1000, 1010}, 10));
  x.f.advance(5s);  // 500 apart: the duel's 100 keeps them apart
  CHECK(x.state(a) == ticket_state::waiting);
  CHECK(x.state(b) == ticket_state::waiting);
  const auto before = waiting(x, "duel");
  REQUIRE(before.size() == 2);

  auto [changed, err] = configure(x, with_duel_skill(x.config, 600));
  INFO(x.f.sys().render(err));
  REQUIRE(changed);
  CHECK(*changed == 1);  // the co-op queue did not change
  // Carried over under their ids, their waiting time going on.
  const auto after = waiting(x, "duel");
  REQUIRE(after.size() == 2);
  std::map<std::uint64_t, std::int64_t> waited;
  for (const auto& v : before) waited[v.ticket] = v.waited_ms;
  for (const auto& v : after) CHECK(v.waited_ms == waited.at(v.ticket));
  x.f.advance(1s);  // the next tick
  CHECK(x.state(a) == ticket_state::matched);
  CHECK(x.state(b) == ticket_state::matched);
  CHECK(x.state(coop) == ticket_state::waiting);

  // Back again: the same pair is kept apart once more.
  REQUIRE(configure(x, with_duel_skill(x.config, 100)).first == 1u);
  const auto c = x.create("duel", party({1000}, 3));
  const auto d = x.create("duel", party({1500}, 4));
  x.f.advance(3s);
  CHECK(x.state(c) == ticket_state::waiting);
  CHECK(x.state(d) == ticket_state::waiting);
  // The same config again changes no queue.
  CHECK(configure(x, with_duel_skill(x.config, 100)).first == 0u);
}

TEST_CASE("tickets sent while a queue takes its config wait in the new one, none lost",
          "[session][actors]") {
  session_fixture x;
  rng r(7);
  std::set<std::uint64_t> acknowledged;
  std::size_t changes = 0;
  for (int round = 0; round < 30; ++round) {
    // Requests queued behind the change, in the same mailbox pass.
    auto next = with_duel_skill(x.config, round % 2 == 0 ? 50 : 400);
    auto change = x.f.sys().spawn([&](caf::event_based_actor* self) {
      self->request(x.svc, caf::infinite, configure_atom::value, next).then([&](std::uint32_t n) {
        changes += n;
      });
    });
    std::vector<std::pair<std::optional<std::uint64_t>, caf::error>> creates;
    for (int i = 0; i < 4; ++i) {
      const player_id p = static_cast<player_id>(100 + round * 10 + i);
      const double mmr = 900 + static_cast<double>(r() % 400);
      creates.push_back(x.ask_create("duel", party({mmr}, p), x.owner));
    }
    for (auto& [id, err] : creates) {
      INFO(x.f.sys().render(err));
      REQUIRE(id);
      acknowledged.insert(*id);
    }
    x.f.advance(std::chrono::milliseconds(300 + r() % 900));
  }
  CHECK(changes == 30);
  x.f.advance(2s);
  // Every acknowledged ticket is waiting or has one outcome, told once.
  std::map<std::uint64_t, int> told;
  for (const auto& o : *x.got) ++told[o.ticket];
  for (const auto id : acknowledged) {
    const auto s = x.state(id);
    if (s == ticket_state::waiting)
      CHECK(told[id] == 0);
    else
      CHECK(told[id] == 1);
  }
}

TEST_CASE("what a new config strands fails and is told, a queue it drops is closed",
          "[session][actors]") {
  session_fixture x;
  const auto trio = x.create("coop", party({1000, 1000, 1000}, 1));
  const auto solo = x.create("coop", party({1000}, 5));
  const auto duel = x.create("duel", party({1000}, 9));
  queue_set next{x.config.queues, x.config.default_queue};
  next.queues[0].max_party_size = 2;  // the trio no longer fits
  next.queues.pop_back();             // no duel
  REQUIRE(configure(x, next).first == 1u);
  x.f.run();
  CHECK(x.state(trio) == ticket_state::failed);
  CHECK(x.state(solo) == ticket_state::waiting);
  // The duel is closed to new tickets; the one waiting there stays.
  CHECK_THAT(x.refused("duel", party({1000}, 20)), Contains("closed"));
  CHECK(x.state(duel) == ticket_state::waiting);
  CHECK(x.cancel(duel) == true);
  // Configured again, it opens.
  REQUIRE(configure(x, queue_set{x.config.queues, x.config.default_queue}).first == 1u);
  x.create("duel", party({1000}, 21));
}

TEST_CASE("a config that cannot run is refused whole: no queue changes", "[session][actors]") {
  session_fixture x;
  const auto a = x.create("duel", party({1000}, 1));
  const auto b = x.create("duel", party({1500}, 2));
  auto next = with_duel_skill(x.config, 600);
  next.queues[0].min_players = 9;  // co-op: more than its 4 seats
  auto [changed, err] = configure(x, next);
  CHECK_FALSE(changed);
  CHECK(error_code_of(err) == errc::invalid_config);
  CHECK_THAT(x.f.sys().render(err), Contains("min_players"));
  x.f.advance(3s);
  CHECK(x.state(a) == ticket_state::waiting);  // the duel kept its 100
  CHECK(x.state(b) == ticket_state::waiting);
}
