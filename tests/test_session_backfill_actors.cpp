// Backfill through the session service and its queue actors, on CAF's
// deterministic scheduler and its virtual clock with a real SQLite journal:
// placements reach the tickets' owners and the game server's events, seats
// are held until confirmed, released or expired (and races between those),
// and running matches with their reservations survive a crash of their
// queue and a restart of the service. Credentials and bounds per game server.
#include <catch2/catch.hpp>

#include "mm/actors/ticket_event_feed.hpp"
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

// Match `id` of game server `gs` in coop at paris, with these players in it.
backfill_registration running(const std::string& id, std::vector<double> mmr, player_id first,
                              const std::string& gs = "gs") {
  backfill_registration r;
  r.queue = "coop";
  r.match_id = id;
  r.datacenter = "paris";
  r.server = "10.0.0.1:7777";
  r.teams = {party(std::move(mmr), first).players};
  r.credential = gs;
  return r;
}

struct backfills {
  session_fixture& x;
  std::pair<std::optional<backfill_state>, caf::error> add(const backfill_registration& r) {
    return x.f.ask<backfill_state>(x.s, backfill_atom::value, create_atom::value, r);
  }
  backfill_state added(const backfill_registration& r) {
    auto [b, err] = add(r);
    INFO(x.f.sys().render(err));
    REQUIRE(b);
    return *b;
  }
  std::optional<backfill_state> status(const std::string& id, const std::string& gs = "gs") {
    return x.f.ask<backfill_state>(x.s, backfill_atom::value, status_atom::value, id, gs).first;
  }
  std::pair<std::optional<backfill_state>, caf::error> seats(const std::string& id,
                                                             std::uint64_t reservation, bool joined,
                                                             std::vector<player_id> players = {},
                                                             const std::string& gs = "gs") {
    seat_change c{id, reservation, std::move(players), gs};
    if (joined) return x.f.ask<backfill_state>(x.s, backfill_atom::value, confirm_atom::value, c);
    return x.f.ask<backfill_state>(x.s, backfill_atom::value, release_atom::value, c);
  }
};

}  // namespace

TEST_CASE("a placement reaches the ticket's owner and the game server's events",
          "[session][actors][backfill]") {
  auto c = two_queues();
  auto feed = std::make_shared<ticket_event_feed>(ticket_event_feed::limits{});
  c.events = feed;
  session_fixture x(c);
  backfills b{x};
  const backfill_state first = b.added(running("m1", {1000, 1020}, 100));
  CHECK(first.open == std::vector<std::uint32_t>{2});
  CHECK(first.players_in == std::vector<std::uint32_t>{2});
  const auto solo = x.create("coop", party({1010}, 1));
  const auto other = x.create("coop", party({1030}, 2));
  x.f.advance(1s);
  REQUIRE(x.got->size() == 2);
  for (const auto& o : *x.got) {
    CHECK(o.state == ticket_state::matched);
    CHECK(o.match.running_match == "m1");
    CHECK(o.match.server == "10.0.0.1:7777");
    CHECK(o.match.datacenter == "paris");
    CHECK(o.match.reserved_until_ms == 31'000);  // placed at 1 s, held for 30 s
    CHECK_FALSE(o.to_game_server);
  }
  CHECK(x.state(solo) == ticket_state::matched);
  CHECK(x.status(other)->match.running_match == "m1");
  // The game server's copies: on the events' channel, under its credential.
  const auto page = feed->read_after(0, event_filter{std::string("gs"), {}}, 100);
  REQUIRE(page.events.size() == 2);
  for (const auto& e : page.events) {
    CHECK(e->to_game_server);
    CHECK(e->match.running_match == "m1");
  }
  const auto now = b.status("m1");
  REQUIRE(now);
  CHECK(now->open == std::vector<std::uint32_t>{0});
  CHECK(now->reserved == std::vector<std::uint32_t>{2});
  REQUIRE(now->reservations.size() == 1);
  CHECK(now->reservations[0].id == x.got->front().match.id);
  CHECK(now->reservations[0].players.size() == 2);
}

TEST_CASE("seats are held until confirmed, released or expired, whichever comes first",
          "[session][actors][backfill]") {
  session_fixture x;
  backfills b{x};
  b.added(running("m1", {1000, 1020}, 100));
  x.create("coop", party({1010}, 1));
  x.create("coop", party({1030}, 2));
  x.f.advance(1s);
  REQUIRE(x.got->size() == 2);
  const std::uint64_t held = x.got->front().match.id;
  // Player 1 joined; a release of player 1 after it finds no such seat.
  auto [joined, e1] = b.seats("m1", held, true, {1});
  REQUIRE(joined);
  CHECK(joined->players_in == std::vector<std::uint32_t>{3});
  CHECK(joined->reserved == std::vector<std::uint32_t>{1});
  auto [late, e2] = b.seats("m1", held, false, {1});
  CHECK_FALSE(late);
  CHECK(error_code_of(e2) == errc::invalid_argument);
  CHECK_THAT(x.f.sys().render(e2), Contains("players[0]: player 1 holds no seat"));
  // Player 2's seat expires at 31 s, not before.
  x.f.advance(29s);
  CHECK(b.status("m1")->reserved == std::vector<std::uint32_t>{1});
  x.f.advance(1s);
  CHECK(b.status("m1")->reserved == std::vector<std::uint32_t>{0});
  CHECK(b.status("m1")->open == std::vector<std::uint32_t>{1});
  // A confirm after the expiry: the reservation is gone.
  auto [gone, e3] = b.seats("m1", held, true, {2});
  CHECK_FALSE(gone);
  CHECK(error_code_of(e3) == errc::not_found);
  // The open seat is offered again.
  const auto next = x.create("coop", party({1000}, 3));
  x.f.advance(1s);
  CHECK(x.status(next)->match.running_match == "m1");
}

TEST_CASE("running matches and their reservations survive a queue crash and a restart",
          "[session][actors][backfill]") {
  auto c = two_queues();
  c.backoff = {std::chrono::seconds(2), std::chrono::seconds(60), std::chrono::seconds(600)};
  session_fixture x(c);
  backfills b{x};
  b.added(running("m1", {1000, 1020}, 100));
  b.added(running("m2", {3000}, 200));
  x.create("coop", party({1010}, 1));
  x.f.advance(1s);
  REQUIRE(x.got->size() == 1);
  const std::uint64_t held = x.got->front().match.id;
  const auto before = b.status("m1");
  REQUIRE(before);
  REQUIRE(before->reservations.size() == 1);

  // The queue's actor is killed: its supervisor starts it again from the
  // journal, with the match and its seats.
  caf::anon_send_exit(test::queue_actor(x.svc, 0), caf::exit_reason::kill);
  x.f.run();
  CHECK(error_code_of(b.seats("m1", held, true).second) == errc::instance_down);
  x.f.advance(2s);
  const auto crashed = b.status("m1");
  REQUIRE(crashed);
  REQUIRE(crashed->reservations.size() == 1);
  CHECK(crashed->reservations[0].expires_ms == before->reservations[0].expires_ms);
  // And the service started again from its store.
  x.stop();
  x.start(x.config);
  const auto after = b.status("m1");
  REQUIRE(after);
  CHECK(after->registration.server == "10.0.0.1:7777");
  // The same unix times, on the clock of a service started 3 s later.
  CHECK(after->registered_ms == before->registered_ms - 3000);
  REQUIRE(after->reservations.size() == 1);
  CHECK(after->reservations[0].id == held);
  CHECK(after->reservations[0].expires_ms == before->reservations[0].expires_ms - 3000);
  CHECK(after->reserved == std::vector<std::uint32_t>{1});
  CHECK(b.status("m2"));
  // Still the game server's alone, and still held: a second registration of
  // the id is refused, a confirm works.
  CHECK_FALSE(b.status("m1", "someone-else"));
  CHECK(error_code_of(b.add(running("m1", {1000}, 300)).second) == errc::conflict);
  auto [ok, e] = b.seats("m1", held, true);
  CHECK(ok);
  // Stopped: gone after a restart too.
  CHECK(x.f.ask<bool>(x.s, backfill_atom::value, close_atom::value, std::string("m2"),
                      std::string("gs"))
            .first.value_or(false));
  x.stop();
  x.start(x.config);
  CHECK_FALSE(b.status("m2"));
  CHECK(b.status("m1")->players_in == std::vector<std::uint32_t>{3});
}

TEST_CASE("a game server's matches are its own, and bounded in number and rate",
          "[session][actors][backfill]") {
  auto c = two_queues();
  c.max_backfills_per_credential = 2;
  c.backfill_requests_per_s = 1;
  c.backfill_burst = 3;
  session_fixture x(c);
  backfills b{x};
  b.added(running("m1", {1000}, 100));
  b.added(running("m2", {1000}, 200));
  auto [third, e1] = b.add(running("m3", {1000}, 300));
  CHECK(error_code_of(e1) == errc::limit_reached);
  CHECK_THAT(x.f.sys().render(e1), Contains("max_backfills_per_credential of 2"));
  // The bucket of 3 is spent: the next change waits for a token.
  auto [fast, e2] = b.add(running("m4", {1000}, 400, "other"));
  CHECK(fast);  // another credential has its own bucket
  auto update = running("m1", {1000, 1100}, 100);
  auto [u1, e3] = x.f.ask<backfill_state>(x.s, backfill_atom::value, update_atom::value, update);
  CHECK(error_code_of(e3) == errc::limit_reached);
  CHECK_THAT(x.f.sys().render(e3), Contains("changes a second from this credential"));
  x.f.advance(1s);
  auto [u2, e4] = x.f.ask<backfill_state>(x.s, backfill_atom::value, update_atom::value, update);
  REQUIRE(u2);
  CHECK(u2->players_in == std::vector<std::uint32_t>{2});
  // Another credential's match is not found, for every message.
  update.credential = "other";
  CHECK(error_code_of(x.f.ask<backfill_state>(x.s, backfill_atom::value, update_atom::value, update)
                          .second) == errc::not_found);
  CHECK_FALSE(b.status("m1", "other"));
  // An admin (no credential) sees every match; a game server its own.
  auto [all, e5] = x.f.ask<std::vector<backfill_state>>(
      x.s, backfill_atom::value, inspect_atom::value, std::string(), std::string());
  REQUIRE(all);
  CHECK(all->size() == 3);
  auto [own, e6] = x.f.ask<std::vector<backfill_state>>(
      x.s, backfill_atom::value, inspect_atom::value, std::string("coop"), std::string("other"));
  REQUIRE(own);
  REQUIRE(own->size() == 1);
  CHECK(own->front().registration.match_id == "m4");
  // A bad registration names its field, and holds no id.
  auto bad = running("m5", {1000}, 500, "third");
  bad.teams[0][0].mmr = std::nan("");
  auto [refused, e7] = b.add(bad);
  CHECK(error_code_of(e7) == errc::invalid_argument);
  CHECK_THAT(x.f.sys().render(e7), Contains("teams[0][0].mmr"));
  bad.teams[0][0].mmr = 1000;
  CHECK(b.add(bad).first);
}

TEST_CASE("a running match is shown with a reservation only once the journal wrote it",
          "[session][actors][backfill]") {
  session_fixture x;
  backfills b{x};
  b.added(running("m1", {1000, 1020}, 100));
  x.create("coop", party({1010}, 1));
  // The tick places the ticket; its record waits in the journal's mailbox.
  x.f.sched().clock().advance_time(1s);
  x.f.run_except("mm.session_journal");
  auto shown = std::make_shared<std::optional<backfill_state>>();
  x.f.sys().spawn([shown, s = x.s](caf::event_based_actor* self) {
    self->request(s, std::chrono::seconds(3600), backfill_atom::value, status_atom::value,
                  std::string("m1"), std::string("gs"))
        .then([shown](backfill_state& st) { *shown = std::move(st); });
  });
  x.f.run_except("mm.session_journal");
  CHECK_FALSE(*shown);  // not before the write: a crash now would take it back
  x.f.run();
  REQUIRE(*shown);
  REQUIRE((*shown)->reservations.size() == 1);
  // What was shown is what the store holds.
  const auto rows = x.store->read_backfills("matchmakerd");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].match_id == "m1");
}
