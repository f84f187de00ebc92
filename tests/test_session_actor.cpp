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
#include "mm/actors/session_service.hpp"

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

namespace {

session_service_config two_queues() {
  session_service_config c;
  auto coop = coop_config();
  c.latency = coop.latency;
  session::queue_config duel;
  duel.name = "duel";
  session::rule skill;
  skill.name = "skill";
  duel.rules = {skill};
  c.queues = {coop.queue, duel};
  return c;
}

}  // namespace

TEST_CASE("the session service passes tickets to their queue, ids unique across queues",
          "[session][actors]") {
  test::actor_fixture f;
  auto got = std::make_shared<std::vector<ticket_outcome>>();
  auto owner = spawn_owner(f, got);
  session_interfaces::service s =
      caf::actor_cast<session_interfaces::service>(f.sys().spawn(session_service, two_queues()));
  f.run();
  auto [c1, e1] =
      f.ask<std::uint64_t>(s, create_atom::value, std::string("coop"), party({1000}, 1), owner);
  auto [d1, e2] =
      f.ask<std::uint64_t>(s, create_atom::value, std::string("duel"), party({1000}, 2), owner);
  auto [d2, e3] =
      f.ask<std::uint64_t>(s, create_atom::value, std::string("duel"), party({1050}, 3), owner);
  REQUIRE((c1 && d1 && d2));
  CHECK(*c1 != *d1);
  CHECK((*c1 >> ticket_queue_shift) == 1);
  CHECK((*d1 >> ticket_queue_shift) == 2);
  f.advance(1s);
  REQUIRE(got->size() == 2);  // the duel formed; the co-op ticket waits
  CHECK(got->at(0).queue == "duel");
  CHECK(got->at(0).match.tickets.size() == 2);
  auto [st, e4] = f.ask<ticket_outcome>(s, status_atom::value, *c1);
  REQUIRE(st);
  CHECK(st->state == ticket_state::waiting);
  CHECK(st->queue == "coop");
  auto [cancelled, e5] = f.ask<bool>(s, cancel_atom::value, *c1);
  REQUIRE(cancelled);
  CHECK(*cancelled);
  REQUIRE(got->size() == 3);
  CHECK(got->at(2).state == ticket_state::cancelled);
  // Ids no queue gave: false, or an error naming the ticket.
  auto [nothing, e6] = f.ask<bool>(s, cancel_atom::value, std::uint64_t{99} << ticket_queue_shift);
  REQUIRE(nothing);
  CHECK_FALSE(*nothing);
  auto [unknown, e7] = f.ask<ticket_outcome>(s, status_atom::value, std::uint64_t{12345});
  CHECK_FALSE(unknown);
  CHECK(error_code_of(e7) == errc::invalid_argument);
  auto [reports, e8] = f.ask<std::vector<session_queue_report>>(s, info_atom::value);
  REQUIRE(reports);
  REQUIRE(reports->size() == 2);
  CHECK(reports->at(0).queue == "coop");
  CHECK(reports->at(0).cancelled == 1);
  CHECK(reports->at(1).queue == "duel");
  CHECK(reports->at(1).matches == 1);
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
}

TEST_CASE("queues on first use: only with a default config, named safely, bounded",
          "[session][actors]") {
  test::actor_fixture f;
  auto got = std::make_shared<std::vector<ticket_outcome>>();
  auto owner = spawn_owner(f, got);
  const auto create = [&](session_interfaces::service& s, const std::string& queue, player_id id) {
    return f.ask<std::uint64_t>(s, create_atom::value, queue, party({1000}, id), owner);
  };
  session_interfaces::service fixed =
      caf::actor_cast<session_interfaces::service>(f.sys().spawn(session_service, two_queues()));
  f.run();
  auto [none, e1] = create(fixed, "ranked", 1);
  CHECK_FALSE(none);
  CHECK_THAT(f.sys().render(e1), Contains("queue: no queue 'ranked'"));

  session_service_config c = two_queues();
  c.default_queue = c.queues[1];
  c.max_queues = 3;
  session_interfaces::service open =
      caf::actor_cast<session_interfaces::service>(f.sys().spawn(session_service, c));
  f.run();
  auto [made, e2] = create(open, "ranked", 1);
  REQUIRE(made);
  CHECK((*made >> ticket_queue_shift) == 3);
  auto [bad, e3] = create(open, "Ranked Mode!", 2);
  CHECK_FALSE(bad);
  CHECK_THAT(f.sys().render(e3), Contains("queue: a new queue's name"));
  auto [full, e4] = create(open, "casual", 3);
  CHECK_FALSE(full);
  CHECK_THAT(f.sys().render(e4), Contains("maximum of 3 queues"));
  auto [reports, e5] = f.ask<std::vector<session_queue_report>>(open, info_atom::value);
  REQUIRE(reports);
  CHECK(reports->size() == 3);
  CHECK(reports->at(2).queue == "ranked");
  CHECK(reports->at(2).waiting == 1);
  for (auto* s : {&fixed, &open}) caf::anon_send_exit(*s, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
}

namespace {

// The queue actor a service runs as its `number`th queue (a test reaches
// into the service's state; the test scheduler runs everything on this
// thread).
session_interfaces::queue queue_handle(const session_service_actor& s, std::size_t number) {
  auto* svc = dynamic_cast<session_service_pointer>(caf::actor_cast<caf::abstract_actor*>(s));
  REQUIRE(svc);
  return svc->state.queues.at(number - 1).handle;
}

}  // namespace

TEST_CASE("a crashed queue starts again with its waiting tickets, owners hear only the truth",
          "[session][actors]") {
  test::actor_fixture f;
  auto got = std::make_shared<std::vector<ticket_outcome>>();
  auto owner = spawn_owner(f, got);
  session_service_config c = two_queues();
  c.backoff = {std::chrono::seconds(2), std::chrono::seconds(60), std::chrono::seconds(600)};
  session_service_actor svc = f.sys().spawn(session_service, c);
  auto s = caf::actor_cast<session_interfaces::service>(svc);
  f.run();
  const auto create = [&](const char* queue, session_ticket t) {
    auto [id, err] = f.ask<std::uint64_t>(s, create_atom::value, std::string(queue), t, owner);
    REQUIRE(id);
    return *id;
  };
  // Two duelists match at the first tick; three co-op players wait.
  const auto d1 = create("duel", party({1000}, 1));
  const auto d2 = create("duel", party({1020}, 2));
  const auto w1 = create("coop", party({1000}, 11));
  const auto w2 = create("coop", party({1100, 1050}, 12));
  f.advance(1s);
  REQUIRE(got->size() == 2);
  for (const auto& o : *got) CHECK(o.state == ticket_state::matched);
  // A duel ticket that waits, then the queues crash.
  const auto d3 = create("duel", party({3000}, 3));
  caf::anon_send_exit(queue_handle(svc, 1), caf::exit_reason::unhandled_exception);
  caf::anon_send_exit(queue_handle(svc, 2), caf::exit_reason::unhandled_exception);
  f.run();
  auto [st, err] = f.ask<ticket_outcome>(s, status_atom::value, w1);
  CHECK_FALSE(st);
  CHECK(error_code_of(err) == errc::instance_down);  // at once, never a hang
  auto [made, err2] =
      f.ask<std::uint64_t>(s, create_atom::value, std::string("coop"), party({1000}, 20), owner);
  CHECK_FALSE(made);
  CHECK(error_code_of(err2) == errc::instance_down);
  auto [reports, err3] = f.ask<std::vector<session_queue_report>>(s, info_atom::value);
  REQUIRE(reports);
  CHECK(reports->at(0).waiting == 2);  // the co-op tickets it will restore
  CHECK(reports->at(1).waiting == 1);

  f.advance(2s);  // the backoff: both start again
  for (auto id : {w1, w2, d3}) {
    auto [o, e] = f.ask<ticket_outcome>(s, status_atom::value, id);
    REQUIRE(o);
    CHECK(o->state == ticket_state::waiting);
  }
  auto [gone, e4] = f.ask<ticket_outcome>(s, status_atom::value, d1);
  CHECK_FALSE(gone);  // finished before the crash: its outcome went with the old actor
  // New tickets get new ids; the restored ones match and their owner is told once.
  const auto w3 = create("coop", party({1010}, 30));
  CHECK(w3 > w2);
  f.advance(1s);
  REQUIRE(got->size() == 5);
  std::set<std::uint64_t> told;
  for (std::size_t i = 2; i < got->size(); ++i) {
    CHECK(got->at(i).state == ticket_state::matched);
    told.insert(got->at(i).ticket);
  }
  CHECK(told == std::set<std::uint64_t>{w1, w2, w3});
  CHECK_FALSE(told.count(d1));
  CHECK_FALSE(told.count(d2));
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
}

TEST_CASE("a service whose queue config cannot run fails at its start", "[session][actors]") {
  test::actor_fixture f;
  session_service_config c = two_queues();
  c.queues[1].max_players = 0;  // a match of no one
  auto svc = f.sys().spawn(session_service, c);
  f.run();
  auto s = caf::actor_cast<session_interfaces::service>(svc);
  auto [reports, err] = f.ask<std::vector<session_queue_report>>(s, info_atom::value);
  CHECK_FALSE(reports);  // it is not there to answer
  CHECK(err);
}

TEST_CASE("lobbies through the session service: fullest first, auto-created, idle closed",
          "[session][actors]") {
  test::actor_fixture f;
  session_service_config c = two_queues();
  c.lobbies.default_max_players = 8;
  c.lobbies.idle_after = std::chrono::seconds(30);
  session_service_actor svc = f.sys().spawn(session_service, c);
  auto s = caf::actor_cast<session_interfaces::service>(svc);
  f.run();
  const auto reg = [&](const char* id, const char* dc, std::uint32_t max, std::uint32_t players) {
    return f.ask<bool>(s, lobby_atom::value, create_atom::value,
                       lobby_registration{id, "ctf", dc, max, players, false});
  };
  CHECK(reg("p1", "paris", 10, 3).first);
  CHECK(reg("p2", "paris", 10, 7).first);
  CHECK(reg("t1", "tokyo", 10, 9).first);
  auto [dup, e1] = reg("p1", "paris", 10, 0);
  CHECK_FALSE(dup);
  CHECK_THAT(f.sys().render(e1), Contains("id: lobby 'p1' is already registered"));
  auto [over, e2] = reg("p3", "paris", 4, 5);
  CHECK_THAT(f.sys().render(e2), Contains("players:"));
  auto [nodc, e3] = reg("p4", "mars", 4, 0);
  CHECK_THAT(f.sys().render(e3), Contains("datacenter: no datacenter 'mars'"));

  lobby_query q;
  q.modes = {"ctf"};
  q.party_size = 2;
  q.rtt_ms = {{"paris", 15}, {"tokyo", 240}};
  auto [placed, e4] = f.ask<lobby_placement>(s, lobby_atom::value, find_atom::value, q);
  REQUIRE(placed);
  CHECK(placed->lobby == "p2");  // the fullest in the region with room for two
  CHECK(placed->players == 9);
  CHECK_FALSE(placed->created);
  q.party_size = 2;
  auto [second, e5] = f.ask<lobby_placement>(s, lobby_atom::value, find_atom::value, q);
  REQUIRE(second);
  CHECK(second->lobby == "p1");  // p2 has one seat left
  q.modes = {"duel"};
  auto [made, e6] = f.ask<lobby_placement>(s, lobby_atom::value, find_atom::value, q);
  REQUIRE(made);
  CHECK(made->created);
  CHECK(made->datacenter == "paris");
  q.prevent_auto_create = true;
  q.modes = {"race"};
  auto [none, e7] = f.ask<lobby_placement>(s, lobby_atom::value, find_atom::value, q);
  CHECK_FALSE(none);
  CHECK(error_code_of(e7) == errc::no_available_lobby);

  CHECK(f.ask<bool>(s, lobby_atom::value, update_atom::value, std::string("t1"), 0u).first);
  auto [unknown, e8] = f.ask<bool>(s, lobby_atom::value, update_atom::value, std::string("zz"), 1u);
  CHECK_THAT(f.sys().render(e8), Contains("id: no lobby 'zz'"));
  auto [report, e9] = f.ask<lobbies_report>(s, lobby_atom::value, info_atom::value);
  REQUIRE(report);
  CHECK(report->lobbies == 4);
  CHECK(report->players == 3 + 2 + 7 + 2 + 0 + 2);
  CHECK(report->found == 3);
  CHECK(report->created == 1);
  CHECK(report->full == 1);
  REQUIRE(report->by_datacenter.size() == 2);
  CHECK(report->by_datacenter[0].datacenter == "paris");
  CHECK(report->by_datacenter[0].lobbies == 3);
  f.advance(31s);  // t1 has been empty for 30 s
  auto [list, e10] =
      f.ask<std::vector<lobby_registration>>(s, lobby_atom::value, inspect_atom::value);
  REQUIRE(list);
  REQUIRE(list->size() == 3);
  CHECK(list->at(0).created_by_find);  // "auto-1", by id
  CHECK(list->at(1).id == "p1");
  CHECK(list->at(1).players == 5);
  CHECK(f.ask<bool>(s, lobby_atom::value, close_atom::value, std::string("p1")).first == true);
  CHECK(*f.ask<bool>(s, lobby_atom::value, close_atom::value, std::string("p1")).first == false);
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
}

TEST_CASE("a saved service's waiting tickets wait again under their ids in the next run",
          "[session][actors]") {
  test::actor_fixture f;
  auto got = std::make_shared<std::vector<ticket_outcome>>();
  auto owner = spawn_owner(f, got);
  session_service_config c = two_queues();
  c.default_queue = c.queues[1];
  session_service_actor svc = f.sys().spawn(session_service, c);
  auto s = caf::actor_cast<session_interfaces::service>(svc);
  f.run();
  const auto create = [&](session_interfaces::service to, const char* queue, session_ticket t) {
    auto [id, err] = f.ask<std::uint64_t>(to, create_atom::value, std::string(queue), t, owner);
    REQUIRE(id);
    return *id;
  };
  const auto w1 = create(s, "coop", party({1000}, 1));
  const auto w2 = create(s, "coop", party({1050, 1100}, 2));
  const auto r1 = create(s, "ranked", party({1500}, 10));  // a queue made on first use: number 3
  const auto d1 = create(s, "duel", party({1000}, 20));
  const auto d2 = create(s, "duel", party({1010}, 21));
  f.advance(1s);  // the duel matches; the others wait
  REQUIRE(got->size() == 2);
  const std::set<std::uint64_t> duel(got->at(0).match.tickets.begin(),
                                     got->at(0).match.tickets.end());
  CHECK(duel == std::set<std::uint64_t>{d1, d2});
  f.advance(4s);

  auto [saved, err] = f.ask<saved_tickets>(svc, session_save_atom::value);
  REQUIRE(saved);
  CHECK(saved->now_ms == 5000);
  REQUIRE(saved->tickets.size() == 3);
  CHECK(saved->tickets[0].ticket.id == w1);
  CHECK(saved->tickets[0].queue == "coop");
  CHECK(saved->tickets[0].ticket.created_ms == 0);
  CHECK(saved->tickets[2].ticket.id == r1);
  CHECK(saved->tickets[2].queue == "ranked");
  // Stopped: no queue serves, none restarts, no ticket is made.
  auto [none, e1] = f.ask<ticket_outcome>(s, status_atom::value, w1);
  CHECK(error_code_of(e1) == errc::instance_down);
  auto [late, e2] =
      f.ask<std::uint64_t>(s, create_atom::value, std::string("coop"), party({1}, 30), owner);
  CHECK(error_code_of(e2) == errc::instance_down);
  f.advance(10min);
  CHECK(error_code_of(f.ask<ticket_outcome>(s, status_atom::value, w1).second) ==
        errc::instance_down);
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);

  // The next run: created 5 s before its start.
  session_service_config next = c;
  for (auto t : saved->tickets) {
    t.ticket.created_ms -= saved->now_ms;
    next.restored_tickets.push_back(t);
  }
  auto s2 = caf::actor_cast<session_interfaces::service>(f.sys().spawn(session_service, next));
  f.run();
  for (auto id : {w1, w2, r1}) {
    auto [o, e] = f.ask<ticket_outcome>(s2, status_atom::value, id);
    REQUIRE(o);
    CHECK(o->state == ticket_state::waiting);
  }
  // A new co-op player completes the match; its owner is told, the old
  // tickets' owners (actors of the last run) are not.
  const auto w3 = create(s2, "coop", party({1020}, 40));
  CHECK(w3 > w2);
  got->clear();
  f.advance(1s);
  REQUIRE(got->size() == 1);
  CHECK(got->at(0).ticket == w3);
  CHECK(got->at(0).match.tickets.size() == 3);
  auto [o1, e3] = f.ask<ticket_outcome>(s2, status_atom::value, w1);
  REQUIRE(o1);
  CHECK(o1->state == ticket_state::matched);
  // Its wait counts from its first creation: 5 s before the run plus the tick.
  auto [reports, e4] = f.ask<std::vector<session_queue_report>>(s2, info_atom::value);
  REQUIRE(reports);
  CHECK(reports->at(0).wait_seconds.sum == Approx(6 + 6 + 1));
  caf::anon_send_exit(s2, caf::exit_reason::user_shutdown);

  // Without the default config "ranked" cannot be made again: its ticket is dropped.
  session_service_config strict = next;
  strict.default_queue.reset();
  auto s3 = caf::actor_cast<session_interfaces::service>(f.sys().spawn(session_service, strict));
  f.run();
  CHECK(f.ask<ticket_outcome>(s3, status_atom::value, w1).first);
  CHECK_FALSE(f.ask<ticket_outcome>(s3, status_atom::value, r1).first);
  caf::anon_send_exit(s3, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
}

TEST_CASE("a queue split by region runs one actor per region, made on first use",
          "[session][actors]") {
  test::actor_fixture f;
  auto got = std::make_shared<std::vector<ticket_outcome>>();
  auto owner = spawn_owner(f, got);
  session_service_config c = two_queues();
  c.queues[1].shard_by = "region";  // the duel queue
  c.max_queues = 3;
  auto s = caf::actor_cast<session_interfaces::service>(f.sys().spawn(session_service, c));
  f.run();
  const auto in = [](const char* region, player_id id, double mmr) {
    session_ticket t = party({mmr}, id);
    for (auto& p : t.players) p.strings = {{"region", region}};
    return t;
  };
  const auto create = [&](const char* queue, const session_ticket& t) {
    return f.ask<std::uint64_t>(s, create_atom::value, std::string(queue), t, owner);
  };
  auto [eu1, e1] = create("duel", in("eu", 1, 1000));
  auto [na1, e2] = create("duel", in("na", 2, 1000));
  auto [eu2, e3] = create("duel", in("eu", 3, 1010));
  REQUIRE((eu1 && na1 && eu2));
  CHECK((*eu1 >> ticket_queue_shift) == 2);  // coop is 1, duel.eu made now
  CHECK((*na1 >> ticket_queue_shift) == 3);
  CHECK((*eu2 >> ticket_queue_shift) == 2);
  f.advance(1s);
  // The two Europeans match; the American waits in a queue of its own.
  REQUIRE(got->size() == 2);
  for (const auto& o : *got) CHECK(o.queue == "duel.eu");
  auto [reports, e4] = f.ask<std::vector<session_queue_report>>(s, info_atom::value);
  REQUIRE(reports);
  REQUIRE(reports->size() == 3);
  CHECK(reports->at(1).queue == "duel.eu");
  CHECK(reports->at(2).queue == "duel.na");
  CHECK(reports->at(2).waiting == 1);
  // A party needs one value; the limit on queues holds for shards too.
  session_ticket mixed = in("eu", 10, 1000);
  mixed.players.push_back(in("na", 11, 1000).players[0]);
  CHECK_THAT(f.sys().render(create("duel", mixed).second),
             Contains("players[1].strings.region: differs from players[0]'s"));
  CHECK_THAT(f.sys().render(create("duel", party({1000}, 12)).second),
             Contains("players[0].strings.region: queue 'duel' is split by it"));
  CHECK_THAT(f.sys().render(create("duel", in("Asia!", 13, 1000)).second),
             Contains("players[0].strings.region: 1 to 64 of a-z"));
  CHECK_THAT(f.sys().render(create("duel", in("asia", 14, 1000)).second),
             Contains("maximum of 3 queues"));
  CHECK_THAT(f.sys().render(create("duel.na", in("eu", 15, 1000)).second),
             Contains("names a shard"));
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
}
