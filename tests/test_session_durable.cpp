// The session ticket's life a game can trust, on the deterministic scheduler
// with a real SQLite journal: one waiting ticket per player across every
// queue, multi-queue tickets matched once, queues that end for any reason
// starting again from the journal, a service started again from its store
// (waiting tickets under their ids and times, outcomes kept, ids never
// again), a match written before anyone hears of it, a write that fails
// losing nothing, credentials.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <set>

#include "mm/actors/ticket_codec.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/public_id.hpp"
#include "session_fixture.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using session::ticket_state;
using test::party;
using test::queue_actor;
using test::service_of;
using test::session_fixture;
using test::two_queues;

namespace {

session_ticket with_queues(session_ticket t, std::vector<std::string> more) {
  t.also_queues = std::move(more);
  return t;
}

}  // namespace

TEST_CASE("a player waits in one ticket across every queue", "[session][actors]") {
  session_fixture x;
  const auto coop = x.create("coop", party({1000}, 1));
  // The same player in another queue, alone or in a party: refused naming them.
  CHECK_THAT(x.refused("duel", party({1000}, 1)),
             Contains("players[0].id: player 1 already waits in ticket " +
                      session::format_public_id(coop)));
  CHECK_THAT(x.refused("coop", party({1000, 1000}, 0)), Contains("players[1].id: player 1"));
  auto [id, err] = x.ask_create("duel", party({1000}, 1), x.owner);
  CHECK(error_code_of(err) == errc::conflict);
  // Once the ticket left, the player may wait again, anywhere.
  REQUIRE(x.cancel(coop));
  x.create("duel", party({1000}, 1));
}

TEST_CASE("a multi-queue ticket is matched once and leaves every queue", "[session][actors]") {
  session_fixture x;
  // Player 1 waits in both queues; both could form a match with it at the
  // same tick: a duel with player 2, a co-op with players 3-5.
  const auto both = x.create("coop", with_queues(party({1000}, 1), {"duel"}));
  const auto duelist = x.create("duel", party({1010}, 2));
  const auto c3 = x.create("coop", party({1000, 1020, 1030}, 3));
  auto o = x.status(both);
  REQUIRE(o);
  CHECK(o->state == ticket_state::waiting);
  x.f.advance(1s);
  // Whichever queue ticked first took it; the other's match did not form.
  std::size_t told_both = 0;
  std::set<std::uint64_t> in_matches;
  for (const auto& t : *x.got) {
    if (t.ticket == both) ++told_both;
    CHECK(t.state == ticket_state::matched);
    for (auto m : t.match.tickets) in_matches.insert(m);
  }
  CHECK(told_both == 1);
  const bool duel_won = x.status(duelist)->state == ticket_state::matched;
  CHECK(x.status(c3)->state == (duel_won ? ticket_state::waiting : ticket_state::matched));
  CHECK(x.status(duelist)->state == (duel_won ? ticket_state::matched : ticket_state::waiting));
  auto [reports, e] = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value);
  REQUIRE(reports);
  CHECK(reports->at(0).waiting == (duel_won ? 1u : 0u));  // the co-op trio, or nothing
  CHECK(reports->at(1).waiting == (duel_won ? 0u : 1u));  // player 2, or nothing
  // Cancelling a multi-queue ticket takes it out of all its queues, once.
  const auto again = x.create("coop", with_queues(party({5000}, 10), {"duel"}));
  REQUIRE(*x.cancel(again));
  CHECK(x.got->back().ticket == again);
  CHECK(x.got->back().state == ticket_state::cancelled);
  auto [after, e2] = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value);
  CHECK(after->at(0).waiting + after->at(1).waiting == 1);
  // A queue it cannot wait in refuses the whole ticket.
  CHECK_THAT(x.refused("coop", with_queues(party({1000}, 20), {"ranked"})),
             Contains("queues[1]: no queue 'ranked'"));
  CHECK_THAT(x.refused("coop", with_queues(party({1000}, 21), {"coop"})),
             Contains("queues[1]: the ticket is for 'coop' already"));
}

TEST_CASE("random multi-queue traffic: no ticket in two matches, every outcome told once",
          "[session][actors]") {
  rng r(2028);
  for (int run = 0; run < 12; ++run) {
    session_service_config c = two_queues();
    c.queues.push_back(c.queues[1]);
    c.queues[2].name = "arena";
    c.queues[2].min_players = c.queues[2].max_players = 3;
    c.queues[2].teams = 0;
    session_fixture x(c);
    const std::vector<std::string> names{"coop", "duel", "arena"};
    std::set<std::uint64_t> created;
    for (int step = 0; step < 60; ++step) {
      const player_id p = 1 + r.below(40);
      std::vector<std::string> qs;
      for (const auto& n : names)
        if (r.below(2) == 0) qs.push_back(n);
      if (qs.empty()) qs.push_back(names[r.below(3)]);
      session_ticket t = party({1000.0 + static_cast<double>(r.below(300))}, p);
      t.replace_existing = r.below(3) == 0;
      t.also_queues.assign(qs.begin() + 1, qs.end());
      auto [id, err] = x.ask_create(qs[0], t, x.owner);
      if (id) created.insert(*id);
      if (r.below(5) == 0 && !created.empty()) x.cancel(*created.begin());
      if (r.below(4) == 0) x.f.advance(1s);
    }
    x.f.advance(2min);  // every ticket has left by now
    std::map<std::uint64_t, int> told;
    std::map<std::uint64_t, std::uint64_t> match_of;
    for (const auto& o : *x.got) {
      ++told[o.ticket];
      if (o.state != ticket_state::matched) continue;
      for (auto t : o.match.tickets) {
        const auto [it, fresh] = match_of.emplace(t, o.match.id);
        CHECK(it->second == o.match.id);  // never in two matches
      }
    }
    for (const auto& [id, n] : told) CHECK(n == 1);
    CHECK(told.size() == created.size());
    for (const auto id : created) CHECK(x.state(id) != ticket_state::waiting);
  }
}

TEST_CASE("a queue actor that ends for any reason starts again from the journal",
          "[session][actors]") {
  for (const auto reason : {caf::exit_reason::kill, caf::exit_reason::unhandled_exception,
                            caf::exit_reason::user_shutdown, caf::exit_reason::unreachable}) {
    session_service_config c = two_queues();
    c.backoff = {std::chrono::seconds(2), std::chrono::seconds(60), std::chrono::seconds(600)};
    session_fixture x(c);
    const auto w1 = x.create("coop", party({1000}, 11));
    const auto w2 = x.create("coop", party({1100, 1050}, 12));
    caf::anon_send_exit(queue_actor(x.svc, 0), reason);
    x.f.run();
    REQUIRE(x.svc);
    // The service serves on: a status from its books, instance_down for the
    // queue's own work, never a hang.
    CHECK(x.state(w1) == ticket_state::waiting);
    auto [made, err] = x.ask_create("coop", party({1000}, 20), x.owner);
    CHECK_FALSE(made);
    CHECK(error_code_of(err) == errc::instance_down);
    auto [cancelled, err2] = x.f.ask<bool>(x.s, cancel_atom::value, w1);
    CHECK(error_code_of(err2) == errc::instance_down);
    x.create("duel", party({1000}, 30));  // the other queue serves
    x.f.advance(2s);                      // the backoff: the queue starts again
    const auto w3 = x.create("coop", party({1010}, 40));
    x.f.advance(1s);
    std::set<std::uint64_t> told;
    for (const auto& o : *x.got) {
      CHECK(o.state == ticket_state::matched);
      CHECK(told.insert(o.ticket).second);
    }
    CHECK(told == std::set<std::uint64_t>{w1, w2, w3});
  }
}

TEST_CASE("a service started again from its store: tickets wait under their ids, outcomes kept",
          "[session][actors]") {
  session_service_config c = two_queues();
  c.default_queue = c.queues[1];
  session_fixture x(c);
  const auto w1 = x.create("coop", party({1000}, 1));
  const auto w2 = x.create("coop", party({1050, 1100}, 2));
  const auto r1 = x.create("ranked", party({1500}, 10));  // made on first use
  const auto d1 = x.create("duel", party({1000}, 20));
  x.create("duel", party({1010}, 21));
  x.f.advance(1s);  // the duel matches; the others wait
  REQUIRE(x.got->size() == 2);
  const auto match = x.got->at(0).match.id;
  x.f.advance(4s);
  // A crash: the service and everything under it end at once.
  caf::anon_send_exit(x.svc, caf::exit_reason::kill);
  x.f.run();
  x.got->clear();
  x.start(c);
  for (auto id : {w1, w2, r1}) CHECK(x.state(id) == ticket_state::waiting);
  auto kept = x.status(d1);
  REQUIRE(kept);
  CHECK(kept->state == ticket_state::matched);
  CHECK(kept->match.id == match);
  // Its players still wait: one ticket each, as before.
  CHECK_THAT(x.refused("duel", party({1000}, 1)), Contains("already waits in ticket"));
  // A new co-op player completes the match: only its owner is told (the old
  // tickets' owners were actors of the last run).
  const auto w3 = x.create("coop", party({1020}, 40));
  CHECK(w3 != w1);
  x.f.advance(1s);
  REQUIRE(x.got->size() == 1);
  CHECK(x.got->at(0).ticket == w3);
  CHECK(x.got->at(0).match.tickets.size() == 3);
  CHECK(x.state(w1) == ticket_state::matched);
  // Its wait counts from its first creation: 5 s before the restart, plus the tick.
  auto [reports, e4] = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value);
  REQUIRE(reports);
  CHECK(reports->at(0).wait_seconds.sum == Approx(6 + 6 + 1));
  // Past the outcome retention an outcome is forgotten: not found, never another's.
  x.f.advance(11min);
  auto [gone, e5] = x.f.ask<ticket_outcome>(x.s, status_atom::value, d1);
  CHECK(error_code_of(e5) == errc::not_found);
}

TEST_CASE("a match is written before anyone hears of it", "[session][actors]") {
  session_fixture x;
  std::vector<std::uint64_t> ids;
  for (player_id p = 1; p <= 4; ++p) ids.push_back(x.create("coop", party({1000}, p)));
  // The tick forms the match, but the journal has not written it yet.
  x.f.sched().clock().advance_time(1s);
  x.f.run_except("mm.session_journal");
  CHECK(x.got->empty());
  // A crash now (the journal dies with what it holds, and the service with
  // it): the match is forgotten, and so nobody was told of it.
  caf::anon_send_exit(service_of(x.svc)->state.journal, caf::exit_reason::kill);
  x.f.run();
  x.start(x.config);
  for (auto id : ids) CHECK(x.state(id) == ticket_state::waiting);
  x.f.advance(1s);
  REQUIRE(x.got->empty());  // the old run's owner is gone: the outcome is there to read
  for (auto id : ids) CHECK(x.state(id) == ticket_state::matched);
}

TEST_CASE("a tick whose write fails is forgotten: its tickets wait again, then match once",
          "[session][actors]") {
  session_fixture x;
  // The same file with a short busy timeout, so that a locked write fails
  // at once instead of after 5 s.
  x.stop();
  x.store = std::make_shared<sqlite_store>(x.dir.file("journal.db"), database_options{50});
  // What GET /readyz reads of the journal (its last write).
  const auto health = std::make_shared<actors::journal_health>();
  x.config.journal_writes = health;
  x.start(x.config);
  std::vector<std::uint64_t> ids;
  for (player_id p = 1; p <= 4; ++p) ids.push_back(x.create("coop", party({1000}, p)));
  {
    // Another writer holds the lock: the tick's match cannot be written.
    SQLite::Database blocker(x.dir.file("journal.db"), SQLite::OPEN_READWRITE, 10'000);
    SQLite::Transaction hold(blocker, SQLite::TransactionBehavior::IMMEDIATE);
    x.f.advance(1s);
    // Nobody was told of the match, the queue ended to start again from
    // the store, and the tickets still wait, under their ids.
    CHECK(x.got->empty());
    for (auto id : ids) CHECK(x.state(id) == ticket_state::waiting);
    CHECK(health->last_write_failed);
    CHECK(health->failures >= 1);
  }  // rolled back: the lock is free
  // The queue starts again after its back-off, reads its tickets back, and
  // ticks (the clock moved in steps: each step runs what falls due in it).
  for (int step = 0; step < 5; ++step) x.f.advance(1s);
  REQUIRE(x.got->size() == 4);
  std::set<std::uint64_t> told;
  for (const auto& o : *x.got) {
    told.insert(o.ticket);
    CHECK(o.state == ticket_state::matched);
    CHECK(o.match.tickets.size() == 4);
    CHECK(o.match.id == x.got->front().match.id);
  }
  CHECK(told == std::set<std::uint64_t>(ids.begin(), ids.end()));
  CHECK_FALSE(health->last_write_failed);  // the match was written
  for (int step = 0; step < 5; ++step) x.f.advance(1s);
  CHECK(x.got->size() == 4);  // told once
}

TEST_CASE("a ticket belongs to the credential that created it", "[session][actors]") {
  session_fixture x;
  session_ticket t = party({1000}, 1);
  t.credential = "alice";
  const auto id = x.create("coop", t);
  CHECK(x.status(id)->credential == "alice");
  auto [mallory, e1] = x.f.ask<bool>(x.s, cancel_atom::value, id, std::string("token:mallory"));
  CHECK(error_code_of(e1) == errc::not_found);
  CHECK(x.state(id) == ticket_state::waiting);
  auto [alice, e2] = x.f.ask<bool>(x.s, cancel_atom::value, id, std::string("alice"));
  REQUIRE(alice);
  CHECK(*alice);
  CHECK(x.status(id)->credential == "alice");  // the outcome keeps it
}

TEST_CASE("replace_existing replaces only the caller's own ticket, and only once it is taken",
          "[session][actors]") {
  session_fixture x;
  session_ticket a = party({1000}, 1);
  a.credential = "alice";
  const auto old = x.create("coop", a);
  // Another owner: neither replaced nor named, with or without replace_existing.
  for (const bool replace : {false, true}) {
    session_ticket m = party({1000}, 1);
    m.credential = "mallory";
    m.replace_existing = replace;
    const std::string why = x.refused("coop", m);
    CHECK_THAT(why, Contains("players[0].id: player 1 already waits in a ticket of another owner"));
    CHECK_THAT(why, !Contains(session::format_public_id(old)));
    CHECK(x.state(old) == ticket_state::waiting);
  }
  // The owner without replace_existing is told its own ticket.
  CHECK_THAT(x.refused("coop", a), Contains(session::format_public_id(old)));
  // A replacement a queue refuses (no RTT nor location for coop's latency
  // policy) cancels nothing, in its first queue or in another.
  for (const bool multi : {false, true}) {
    session_ticket bad = multi ? with_queues(party({1000}, 1), {"duel"}) : party({1000}, 1);
    bad.credential = "alice";
    bad.replace_existing = true;
    bad.players[0].rtt_ms.clear();
    CHECK_THAT(x.refused("coop", bad), Contains("needs rtt_ms or a location"));
    CHECK(x.state(old) == ticket_state::waiting);
    if (multi) {  // the refusal came from coop, its first queue; now from duel, its second
      session_ticket pair = with_queues(party({1000, 1010}, 1), {"duel"});
      pair.credential = "alice";
      pair.replace_existing = true;
      CHECK_THAT(x.refused("coop", pair), Contains("max_party_size of 1"));
      CHECK(x.state(old) == ticket_state::waiting);
    }
  }
  // A replacement that is taken cancels the old ticket.
  a.replace_existing = true;
  const auto fresh = x.create("coop", a);
  CHECK(x.state(old) == ticket_state::cancelled);
  CHECK(x.state(fresh) == ticket_state::waiting);
}

TEST_CASE("the journal's bytes carry infinities and refuse what they cannot read",
          "[session][actors]") {
  session_ticket t = party({1000}, 1);
  t.players[0].numbers = {{"luck", std::numeric_limits<double>::infinity()},
                          {"debt", -std::numeric_limits<double>::infinity()},
                          {"void", std::numeric_limits<double>::quiet_NaN()}};
  t.credential = "alice";
  const auto back = decode_ticket(encode_ticket(t));
  REQUIRE(back);
  CHECK(back->players[0].numbers[0].value == std::numeric_limits<double>::infinity());
  CHECK(back->players[0].numbers[1].value == -std::numeric_limits<double>::infinity());
  CHECK(back->players[0].numbers[2].value == 0);
  CHECK(back->credential == "alice");
  ticket_outcome o;
  o.ticket = 7;
  o.state = ticket_state::matched;
  o.match.worst_rtt_ms = std::numeric_limits<double>::infinity();
  const auto out = decode_outcome(encode_outcome(o));
  REQUIRE(out);
  CHECK(out->match.worst_rtt_ms == std::numeric_limits<double>::infinity());
  std::string bytes = encode_outcome(o);
  CHECK_FALSE(decode_outcome(bytes.substr(0, bytes.size() / 2)));  // cut short
  bytes[0] = 9;
  CHECK_FALSE(decode_outcome(bytes));  // another version
  CHECK_FALSE(decode_ticket(""));
}

TEST_CASE("outcomes written by version 1 still decode, and backfill fields survive version 2",
          "[session][actors]") {
  // Version 1's bytes, as that version wrote them: the match without
  // backfill's fields, and no to_game_server.
  std::vector<char> v1{1};
  caf::binary_serializer sink{nullptr, v1};
  session_match m;
  m.id = 99;
  m.queue = "coop";
  m.teams = {{1, 2}};
  m.tickets = {5};
  m.formed_at_ms = 1234;
  REQUIRE_FALSE(sink(std::string("coop"), std::uint64_t{5}, ticket_state::matched, m.id, m.queue,
                     m.datacenter, m.teams, m.tickets, m.mmr_spread, m.worst_rtt_ms, m.bot_match,
                     m.formed_at_ms, std::string("alice"), std::uint64_t{17}, std::int64_t{888}));
  const auto old = decode_outcome(std::string(v1.begin(), v1.end()));
  REQUIRE(old);
  CHECK(old->ticket == 5);
  CHECK(old->match.id == 99);
  CHECK(old->match.teams == std::vector<std::vector<mm::player_id>>{{1, 2}});
  CHECK(old->match.formed_at_ms == 1234);
  CHECK(old->match.running_match.empty());
  CHECK(old->credential == "alice");
  CHECK(old->seq == 17);
  CHECK_FALSE(old->to_game_server);

  ticket_outcome o = *old;
  o.match.running_match = "m-7";
  o.match.server = "10.0.0.7:7777";
  o.match.reserved_until_ms = 31'234;
  o.to_game_server = true;
  const auto now = decode_outcome(encode_outcome(o));
  REQUIRE(now);
  CHECK(now->match.running_match == "m-7");
  CHECK(now->match.server == "10.0.0.7:7777");
  CHECK(now->match.reserved_until_ms == 31'234);
  CHECK(now->to_game_server);

  backfill_state b;
  b.registration.queue = "coop";
  b.registration.match_id = "m-7";
  b.registration.teams = {{party({1500}, 3).players[0]}};
  b.registered_ms = 100;
  seat_hold h;
  h.id = 77;
  h.tickets = {5};
  h.created_ms = {50};
  h.players = {1, 2};
  h.team_of = {0, 0};
  h.mmr = {1500.25, std::numeric_limits<double>::infinity()};
  h.expires_ms = 30'100;
  b.reservations = {h};
  const auto back = decode_backfill(encode_backfill(b));
  REQUIRE(back);
  CHECK(back->registration.match_id == "m-7");
  CHECK(back->registration.teams[0][0].id == 3);
  REQUIRE(back->reservations.size() == 1);
  CHECK(back->reservations[0].mmr[0] == 1500.25);
  CHECK(back->reservations[0].mmr[1] == std::numeric_limits<double>::infinity());
  CHECK(back->reservations[0].expires_ms == 30'100);
  CHECK_FALSE(decode_backfill(encode_outcome(o)));
}

TEST_CASE("the journal keys its rows by serial, and takes over version 8's rows by public id",
          "[session][actors]") {
  session_fixture x;
  const auto w1 = x.create("coop", party({1000}, 1));
  const auto w2 = x.create("coop", party({1050}, 2));
  const auto d1 = x.create("duel", party({1000}, 20));
  x.create("duel", party({1010}, 21));
  x.f.advance(1s);  // the duel matches; the co-op tickets wait
  REQUIRE(x.got->size() == 2);
  x.stop();
  const session::id_permutation ids(session::id_key{0x1234, 0x5678});  // the fixture's key
  {
    SQLite::Database db(x.dir.file("journal.db"), SQLite::OPEN_READWRITE);
    // Serials in the order the tickets were made: a batch's rows share pages.
    std::vector<std::int64_t> keys;
    SQLite::Statement q(db, "SELECT ticket_id FROM session_ticket_journal ORDER BY created_at");
    while (q.executeStep()) keys.push_back(q.getColumn(0).getInt64());
    REQUIRE(keys.size() == 4);
    CHECK(static_cast<std::uint64_t>(keys[0]) == ids.decode(w1));
    CHECK(std::is_sorted(keys.begin(), keys.end()));
    // The same rows as version 8 kept them: by public id, in the table of old.
    SQLite::Transaction tx(db);
    SQLite::Statement all(db, "SELECT ticket_id FROM session_ticket_journal");
    std::vector<std::int64_t> serials;
    while (all.executeStep()) serials.push_back(all.getColumn(0).getInt64());
    for (const auto serial : serials) {
      SQLite::Statement move(db,
                             "INSERT INTO session_ticket_journal_v8 SELECT ?, service, queues, "
                             "credential, created_at, ticket, state, finished_at, outcome FROM "
                             "session_ticket_journal WHERE ticket_id = ?");
      move.bind(1, static_cast<std::int64_t>(ids.encode(static_cast<std::uint64_t>(serial))));
      move.bind(2, serial);
      move.exec();
    }
    db.exec("DELETE FROM session_ticket_journal");
    tx.commit();
  }
  x.start(two_queues());  // takes them over
  CHECK(x.state(w1) == ticket_state::waiting);
  CHECK(x.state(w2) == ticket_state::waiting);
  CHECK(x.state(d1) == ticket_state::matched);
  {
    SQLite::Database db(x.dir.file("journal.db"), SQLite::OPEN_READONLY);
    CHECK(db.execAndGet("SELECT count(*) FROM session_ticket_journal_v8").getInt() == 0);
    CHECK(db.execAndGet("SELECT count(*) FROM session_ticket_journal").getInt() == 4);
  }
  // They go on as any other: the waiting pair's outcome is written by serial.
  const auto w3 = x.create("coop", party({1020, 1030}, 40));
  x.f.advance(1s);
  CHECK(x.state(w1) == ticket_state::matched);
  CHECK(x.state(w3) == ticket_state::matched);
  x.stop();
  x.start(two_queues());
  CHECK(x.state(w2) == ticket_state::matched);
}
