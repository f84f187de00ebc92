// The session queue as an actor, on CAF's deterministic scheduler and its
// virtual clock: owners are told their matches, cancels and expiries; bad
// tickets are refused naming the field; an owner that is gone leaves no
// ticket behind.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <set>

#include "actor_fixture.hpp"
#include "mm/actors/errors.hpp"
#include "mm/actors/session_queue_actor.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using session::ticket_state;

namespace {

using outcomes = std::shared_ptr<std::vector<ticket_outcome>>;

session_interfaces::owner spawn_owner(test::actor_fixture& f, outcomes got) {
  return f.sys().spawn([got]() -> session_interfaces::owner::behavior_type {
    return {[got](ticket_atom, const ticket_outcome& o) { got->push_back(o); }};
  });
}

// 4-player co-op over two datacenters, the staged latency policy, a tick a second.
session_queue_actor_config coop_config() {
  session_queue_actor_config c;
  c.queue.name = "coop";
  c.queue.min_players = c.queue.max_players = 4;
  c.queue.teams = 0;
  c.queue.max_party_size = 4;
  c.queue.latency = session::latency_stages{};
  session::rule skill;
  skill.name = "skill";
  skill.max_difference = 200;
  c.queue.rules = {skill};
  c.latency =
      session::latency_model({{"paris", {48.9, 2.4}, "eu"}, {"tokyo", {35.7, 139.7}, "asia"}});
  return c;
}

session_ticket party(std::vector<double> mmr, player_id first) {
  session_ticket t;
  for (std::size_t i = 0; i < mmr.size(); ++i) {
    session_player p;
    p.id = first + i;
    p.mmr = mmr[i];
    p.rtt_ms = {{"paris", 20}, {"tokyo", 250}};
    t.players.push_back(p);
  }
  return t;
}

struct queue_fixture {
  test::actor_fixture f;
  session_interfaces::queue q;
  outcomes got = std::make_shared<std::vector<ticket_outcome>>();
  session_interfaces::owner owner;

  explicit queue_fixture(session_queue_actor_config c = coop_config()) {
    q = f.sys().spawn(session_queue_actor, std::move(c));
    owner = spawn_owner(f, got);
    f.run();
  }
  ~queue_fixture() {
    caf::anon_send_exit(q, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
  }
  std::uint64_t create(const session_ticket& t) {
    auto [id, err] = f.ask<std::uint64_t>(q, create_atom::value, t, owner);
    REQUIRE(id);
    return *id;
  }
  std::string refused(const session_ticket& t) {
    auto [id, err] = f.ask<std::uint64_t>(q, create_atom::value, t, owner);
    REQUIRE_FALSE(id);
    CHECK(error_code_of(err) == errc::invalid_argument);
    return f.sys().render(err);
  }
  ticket_state status(std::uint64_t id) {
    auto [o, err] = f.ask<ticket_outcome>(q, status_atom::value, id);
    REQUIRE(o);
    return o->state;
  }
};

}  // namespace

TEST_CASE("a party and solos get their match through the queue actor", "[session][actors]") {
  queue_fixture x;
  const auto duo = x.create(party({1000, 1100}, 1));
  const auto a = x.create(party({1050}, 11));
  const auto b = x.create(party({1080}, 12));
  CHECK(x.status(duo) == ticket_state::waiting);
  x.f.advance(999ms);
  CHECK(x.got->empty());  // the loop runs on its tick
  x.f.advance(1ms);
  REQUIRE(x.got->size() == 3);
  std::set<std::uint64_t> told;
  for (const auto& o : *x.got) {
    told.insert(o.ticket);
    CHECK(o.state == ticket_state::matched);
    CHECK(o.queue == "coop");
    CHECK(o.match.id == x.got->front().match.id);
    CHECK(o.match.datacenter == "paris");
    CHECK(o.match.worst_rtt_ms == 20);
    REQUIRE(o.match.teams.size() == 1);
    CHECK(o.match.teams[0].size() == 4);
  }
  CHECK(told == std::set<std::uint64_t>{duo, a, b});
  CHECK(x.status(a) == ticket_state::matched);
  auto [info, err] = x.f.ask<session_queue_report>(x.q, info_atom::value);
  REQUIRE(info);
  CHECK(info->waiting == 0);
  CHECK(info->matches == 1);
  CHECK(info->matched == 3);
}

TEST_CASE("cancel and expiry reach the owner, once", "[session][actors]") {
  queue_fixture x;
  const auto first = x.create(party({1000}, 1));
  auto [ok, err] = x.f.ask<bool>(x.q, cancel_atom::value, first);
  REQUIRE(ok);
  CHECK(*ok);
  auto [again, err2] = x.f.ask<bool>(x.q, cancel_atom::value, first);
  REQUIRE(again);
  CHECK_FALSE(*again);
  REQUIRE(x.got->size() == 1);
  CHECK(x.got->at(0).state == ticket_state::cancelled);
  CHECK(x.status(first) == ticket_state::cancelled);

  session_ticket brief = party({1000}, 2);
  brief.give_up_after_ms = 5000;
  const auto lonely = x.create(brief);
  x.f.advance(4s);
  CHECK(x.got->size() == 1);
  x.f.advance(1s);  // the tick at 5 s: its give-up time
  REQUIRE(x.got->size() == 2);
  CHECK(x.got->at(1).ticket == lonely);
  CHECK(x.got->at(1).state == ticket_state::expired);
  x.f.advance(10s);
  CHECK(x.got->size() == 2);
}

TEST_CASE("a bad ticket is refused naming the field, and the queue serves on",
          "[session][actors]") {
  queue_fixture x;
  session_ticket nan = party({1000}, 1);
  nan.players[0].mmr = std::nan("");
  CHECK_THAT(x.refused(nan), Contains("players[0].mmr"));
  CHECK_THAT(x.refused(party({1, 2, 3, 4, 5}, 1)), Contains("players: a party of 5"));
  session_ticket twice = party({1000, 1000}, 1);
  twice.players[1].id = 1;
  CHECK_THAT(x.refused(twice), Contains("players[1].id"));
  session_ticket nowhere = party({1000}, 1);
  nowhere.players[0].rtt_ms = {{"mars", 5}};
  CHECK_THAT(x.refused(nowhere), Contains("players[0].rtt_ms.mars"));
  x.create(party({1000}, 1));
  CHECK_THAT(x.refused(party({1000}, 1)), Contains("already waits"));
  auto [o, err] = x.f.ask<ticket_outcome>(x.q, status_atom::value, std::uint64_t{999});
  CHECK_FALSE(o);
  CHECK(error_code_of(err) == errc::invalid_argument);
  CHECK(x.got->empty());
}

TEST_CASE("a replaced ticket's owner is told it was cancelled", "[session][actors]") {
  queue_fixture x;
  const auto old = x.create(party({1000}, 1));
  session_ticket again = party({1000, 1010}, 1);
  again.replace_existing = true;
  const auto now = x.create(again);
  REQUIRE(x.got->size() == 1);
  CHECK(x.got->at(0).ticket == old);
  CHECK(x.got->at(0).state == ticket_state::cancelled);
  CHECK(x.status(now) == ticket_state::waiting);
}

TEST_CASE("tickets of an owner that is gone are cancelled", "[session][actors]") {
  queue_fixture x;
  auto got = std::make_shared<std::vector<ticket_outcome>>();
  auto gone = spawn_owner(x.f, got);
  x.f.run();
  auto [id, err] = x.f.ask<std::uint64_t>(x.q, create_atom::value, party({1000}, 1), gone);
  REQUIRE(id);
  const auto mine = x.create(party({1000}, 2));
  caf::anon_send_exit(gone, caf::exit_reason::user_shutdown);
  x.f.run();
  CHECK(x.status(*id) == ticket_state::cancelled);
  CHECK(x.status(mine) == ticket_state::waiting);
  CHECK(got->empty());
  CHECK(x.got->empty());
}
