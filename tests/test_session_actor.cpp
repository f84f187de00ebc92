// The session service and its queue actors on CAF's deterministic scheduler
// and its virtual clock, with a real SQLite journal: owners are told their
// matches, cancels and expiries once each is durable; bad tickets are refused
// naming the field; an owner that is gone leaves no ticket behind; queues on
// first use, shards, lobbies.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "mm/session/public_id.hpp"
#include "session_fixture.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using session::ticket_state;
using test::party;
using test::session_fixture;
using test::two_queues;

TEST_CASE("a party and solos get their match through the service", "[session][actors]") {
  session_fixture x;
  const auto duo = x.create("coop", party({1000, 1100}, 1));
  const auto a = x.create("coop", party({1050}, 11));
  const auto b = x.create("coop", party({1080}, 12));
  CHECK(x.state(duo) == ticket_state::waiting);
  x.f.advance(999ms);
  CHECK(x.got->empty());  // the loop runs on its tick
  x.f.advance(1ms);
  REQUIRE(x.got->size() == 3);
  std::set<std::uint64_t> told;
  for (const auto& o : *x.got) {
    told.insert(o.ticket);
    CHECK(o.state == ticket_state::matched);
    CHECK(o.queue == "coop");
    CHECK(o.seq > 0);
    CHECK(o.match.id == x.got->front().match.id);
    CHECK(o.match.datacenter == "paris");
    CHECK(o.match.worst_rtt_ms == 20);
    REQUIRE(o.match.teams.size() == 1);
    CHECK(o.match.teams[0].size() == 4);
    // Every ticket's outcome carries the whole match (the journal makes one
    // an outcome from the tick's matches).
    CHECK(std::set<std::uint64_t>(o.match.tickets.begin(), o.match.tickets.end()) ==
          std::set<std::uint64_t>{duo, a, b});
  }
  CHECK(told == std::set<std::uint64_t>{duo, a, b});
  CHECK(x.state(a) == ticket_state::matched);
  auto [reports, err] = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value);
  REQUIRE(reports);
  CHECK(reports->at(0).waiting == 0);
  CHECK(reports->at(0).matches == 1);
  CHECK(reports->at(0).matched == 3);
}

TEST_CASE("cancel and expiry reach the owner, once", "[session][actors]") {
  session_fixture x;
  const auto first = x.create("coop", party({1000}, 1));
  REQUIRE(x.cancel(first));
  CHECK(*x.cancel(first) == false);
  REQUIRE(x.got->size() == 1);
  CHECK(x.got->at(0).state == ticket_state::cancelled);
  CHECK(x.state(first) == ticket_state::cancelled);

  session_ticket brief = party({1000}, 2);
  brief.give_up_after_ms = 5000;
  const auto lonely = x.create("coop", brief);
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
  session_fixture x;
  session_ticket nan = party({1000}, 1);
  nan.players[0].mmr = std::nan("");
  CHECK_THAT(x.refused("coop", nan), Contains("players[0].mmr"));
  CHECK_THAT(x.refused("coop", party({1, 2, 3, 4, 5}, 1)), Contains("players: a party of 5"));
  session_ticket twice = party({1000, 1000}, 1);
  twice.players[1].id = 1;
  CHECK_THAT(x.refused("coop", twice), Contains("players[1].id"));
  session_ticket nowhere = party({1000}, 1);
  nowhere.players[0].rtt_ms = {{"mars", 5}};
  CHECK_THAT(x.refused("coop", nowhere), Contains("players[0].rtt_ms.mars"));
  const auto id = x.create("coop", party({1000}, 1));
  CHECK_THAT(
      x.refused("coop", party({1000}, 1)),
      Contains("players[0].id: player 1 already waits in ticket " + session::format_public_id(id)));
  auto [o, err] = x.f.ask<ticket_outcome>(x.s, status_atom::value, std::uint64_t{999});
  CHECK_FALSE(o);
  CHECK(error_code_of(err) == errc::not_found);
  CHECK(x.got->empty());
  CHECK(x.state(id) == ticket_state::waiting);
}

TEST_CASE("a replaced ticket's owner is told it was cancelled, in any queue", "[session][actors]") {
  session_fixture x;
  const auto old = x.create("coop", party({1000}, 1));
  session_ticket again = party({1000, 1010}, 1);
  again.replace_existing = true;
  const auto now = x.create("coop", again);
  REQUIRE(x.got->size() == 1);
  CHECK(x.got->at(0).ticket == old);
  CHECK(x.got->at(0).state == ticket_state::cancelled);
  CHECK(x.state(now) == ticket_state::waiting);
  // Player 2 waits in the co-op ticket: a duel ticket of theirs replaces it.
  session_ticket duel = party({1000}, 2);
  duel.replace_existing = true;
  const auto moved = x.create("duel", duel);
  REQUIRE(x.got->size() == 2);
  CHECK(x.got->at(1).ticket == now);
  CHECK(x.state(moved) == ticket_state::waiting);
  CHECK(x.state(now) == ticket_state::cancelled);
}

TEST_CASE("tickets of an owner that is gone are cancelled", "[session][actors]") {
  session_fixture x;
  auto got = std::make_shared<std::vector<ticket_outcome>>();
  auto gone = test::spawn_owner(x.f, got);
  x.f.run();
  auto [id, err] = x.ask_create("coop", party({1000}, 1), gone);
  REQUIRE(id);
  const auto mine = x.create("coop", party({1000}, 2));
  caf::anon_send_exit(gone, caf::exit_reason::user_shutdown);
  x.f.run();
  CHECK(x.state(*id) == ticket_state::cancelled);
  CHECK(x.state(mine) == ticket_state::waiting);
  CHECK(got->empty());
  CHECK(x.got->empty());
}

TEST_CASE("tickets go to their queue, ids are unique, unordered and name no queue",
          "[session][actors]") {
  session_fixture x;
  const auto c1 = x.create("coop", party({1000}, 1));
  const auto d1 = x.create("duel", party({1000}, 2));
  const auto d2 = x.create("duel", party({1050}, 3));
  CHECK(c1 != d1);
  // Consecutive ids share no structure: they differ in about half their bits.
  std::set<std::uint64_t> ids{c1, d1, d2};
  int far_apart = 0;
  std::uint64_t prev = 0;
  for (int i = 0; i < 64; ++i) {
    const auto id = x.create("coop", party({3000.0 + i * 1000}, 100 + static_cast<player_id>(i)));
    ids.insert(id);
    if (prev != 0 && __builtin_popcountll(prev ^ id) >= 16) ++far_apart;
    prev = id;
  }
  CHECK(ids.size() == 67);
  CHECK(far_apart >= 60);
  x.f.advance(1s);
  REQUIRE(x.got->size() == 2);  // the duel formed; the co-op tickets wait
  CHECK(x.got->at(0).queue == "duel");
  CHECK(x.got->at(0).match.tickets.size() == 2);
  CHECK_FALSE(ids.count(x.got->at(0).match.id));
  auto o = x.status(c1);
  REQUIRE(o);
  CHECK(o->state == ticket_state::waiting);
  CHECK(o->queue == "coop");
  REQUIRE(x.cancel(c1));
  REQUIRE(x.got->size() == 3);
  CHECK(x.got->at(2).state == ticket_state::cancelled);
  // An id no queue gave: not found.
  auto [nothing, e6] = x.f.ask<bool>(x.s, cancel_atom::value, std::uint64_t{99});
  CHECK(error_code_of(e6) == errc::not_found);
  auto [reports, e8] = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value);
  REQUIRE(reports);
  REQUIRE(reports->size() == 2);
  CHECK(reports->at(0).queue == "coop");
  CHECK(reports->at(0).cancelled == 1);
  CHECK(reports->at(1).queue == "duel");
  CHECK(reports->at(1).matches == 1);
}

TEST_CASE("match ids are unique across queues", "[session][actors]") {
  session_service_config c = two_queues();
  c.queues.push_back(c.queues[1]);
  c.queues[2].name = "arena";
  session_fixture x(c);
  x.create("duel", party({1000}, 1));
  x.create("duel", party({1000}, 2));
  x.create("arena", party({1000}, 3));
  x.create("arena", party({1000}, 4));
  x.f.advance(1s);
  REQUIRE(x.got->size() == 4);
  std::set<std::uint64_t> matches;
  for (const auto& o : *x.got) matches.insert(o.match.id);
  CHECK(matches.size() == 2);
}

TEST_CASE("queues on first use: only with a default config, named safely, bounded",
          "[session][actors]") {
  {
    session_fixture fixed;
    CHECK_THAT(fixed.refused("ranked", party({1000}, 1)), Contains("queue: no queue 'ranked'"));
  }
  session_service_config c = two_queues();
  c.default_queue = c.queues[1];
  c.max_queues = 3;
  session_fixture x(c);
  x.create("ranked", party({1000}, 1));
  CHECK_THAT(x.refused("Ranked Mode!", party({1000}, 2)), Contains("queue: a new queue's name"));
  CHECK_THAT(x.refused("casual", party({1000}, 3)), Contains("maximum of 3 queues"));
  auto [reports, e5] = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value);
  REQUIRE(reports);
  CHECK(reports->size() == 3);
  CHECK(reports->at(2).queue == "ranked");
  CHECK(reports->at(2).waiting == 1);
}

TEST_CASE("a service whose queue config cannot run fails at its start", "[session][actors]") {
  session_service_config c = two_queues();
  c.queues[1].max_players = 0;  // a match of no one
  session_fixture x(c);
  auto [reports, err] = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value);
  CHECK_FALSE(reports);  // it is not there to answer
  CHECK(err);
}

TEST_CASE("a queue split by region runs one actor per region, made on first use",
          "[session][actors]") {
  session_service_config c = two_queues();
  c.queues[1].shard_by = "region";  // the duel queue
  c.max_queues = 3;
  session_fixture x(c);
  const auto in = [](const char* region, player_id id, double mmr) {
    session_ticket t = party({mmr}, id);
    for (auto& p : t.players) p.strings = {{"region", region}};
    return t;
  };
  x.create("duel", in("eu", 1, 1000));
  const auto na1 = x.create("duel", in("na", 2, 1000));
  x.create("duel", in("eu", 3, 1010));
  x.f.advance(1s);
  // The two Europeans match; the American waits in a queue of its own.
  REQUIRE(x.got->size() == 2);
  for (const auto& o : *x.got) CHECK(o.queue == "duel.eu");
  CHECK(x.status(na1)->queue == "duel.na");
  auto [reports, e4] = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value);
  REQUIRE(reports);
  REQUIRE(reports->size() == 3);
  CHECK(reports->at(1).queue == "duel.eu");
  CHECK(reports->at(2).queue == "duel.na");
  CHECK(reports->at(2).waiting == 1);
  // A party needs one value; the limit on queues holds for shards too.
  session_ticket mixed = in("eu", 10, 1000);
  mixed.players.push_back(in("na", 11, 1000).players[0]);
  CHECK_THAT(x.refused("duel", mixed),
             Contains("players[1].strings.region: differs from players[0]'s"));
  CHECK_THAT(x.refused("duel", party({1000}, 12)),
             Contains("players[0].strings.region: queue 'duel' is split by it"));
  CHECK_THAT(x.refused("duel", in("Asia!", 13, 1000)),
             Contains("players[0].strings.region: 1 to 64 of a-z"));
  CHECK_THAT(x.refused("duel", in("asia", 14, 1000)), Contains("maximum of 3 queues"));
  CHECK_THAT(x.refused("duel.na", in("eu", 15, 1000)), Contains("names a shard"));
}

TEST_CASE("lobbies through the session service: fullest first, auto-created, idle closed",
          "[session][actors]") {
  session_service_config c = two_queues();
  c.lobbies.default_max_players = 8;
  c.lobbies.idle_after = std::chrono::seconds(30);
  session_fixture x(c);
  auto& f = x.f;
  auto& s = x.s;
  const auto reg = [&](const char* id, const char* dc, std::uint32_t max, std::uint32_t players) {
    return f.ask<bool>(s, lobby_atom::value, create_atom::value,
                       lobby_registration{id, "ctf", dc, max, players, false, {}});
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

  CHECK(f.ask<bool>(s, lobby_atom::value, update_atom::value, std::string("t1"), 0u, std::string())
            .first);
  auto [unknown, e8] =
      f.ask<bool>(s, lobby_atom::value, update_atom::value, std::string("zz"), 1u, std::string());
  CHECK(error_code_of(e8) == errc::not_found);
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
  // Another credential's lobby is left alone, as one that does not exist.
  CHECK(*f.ask<bool>(s, lobby_atom::value, close_atom::value, std::string("p1"),
                     std::string("someone-else"))
             .first == false);
  CHECK(f.ask<bool>(s, lobby_atom::value, close_atom::value, std::string("p1"), std::string())
            .first == true);
  CHECK(*f.ask<bool>(s, lobby_atom::value, close_atom::value, std::string("p1"), std::string())
             .first == false);
}
