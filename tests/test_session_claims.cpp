// Session services that share a store and its players (the session queues
// in partitions): one waiting ticket per player holds across them through
// the claims in the store, on CAF's deterministic scheduler with a real
// SQLite journal that both services write.
#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>

#include "session_fixture.hpp"

using namespace mm;
using namespace mm::actors;
using namespace mm::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using session::ticket_state;

namespace {

session_service_config claiming() {
  auto c = two_queues();
  c.shared_claims = true;
  return c;
}

// A second service ("B") on the same store file, in the fixture's actor system.
struct other_service {
  explicit other_service(session_fixture& fixture)
      : x(fixture), store(std::make_shared<sqlite_store>(fixture.dir.file("journal.db"))) {
    auto c = claiming();
    c.service_name = "B";
    c.store = store;
    c.ids = std::make_shared<session::id_source>(
        session::id_key{0x1234, 0x5678}, [s = store] { return s->reserve_id_generation(); });
    c.detached_journal = false;
    c.unix_epoch_ms = x.unix_now();
    c.restored = load_session_journal(*store, c.service_name, &c.ids->permutation(),
                                      c.unix_epoch_ms, c.outcome_retention, c.max_outcomes);
    svc = x.f.sys().spawn(session_service, std::move(c));
    s = caf::actor_cast<session_interfaces::service>(svc);
    x.f.run();
  }
  ~other_service() {
    caf::anon_send_exit(svc, caf::exit_reason::user_shutdown);
    x.f.run();
  }
  std::pair<std::optional<std::uint64_t>, caf::error> create(const std::string& queue,
                                                             const session_ticket& t) {
    return x.f.ask<std::uint64_t>(s, create_atom::value, queue, t, x.owner);
  }
  std::uint64_t waiting(std::size_t slot) {
    auto [reports, e] = x.f.ask<std::vector<session_queue_report>>(s, info_atom::value);
    REQUIRE(reports);
    return reports->at(slot).waiting;
  }

  session_fixture& x;
  std::shared_ptr<sqlite_store> store;
  session_service_actor svc;
  session_interfaces::service s;
};

void check_refused_as_taken(const std::pair<std::optional<std::uint64_t>, caf::error>& r,
                            caf::actor_system& sys) {
  REQUIRE_FALSE(r.first);
  CHECK(error_code_of(r.second) == errc::conflict);
  CHECK_THAT(sys.render(r.second), Contains("players: a player of this ticket already waits"));
}

}  // namespace

TEST_CASE("services sharing a store keep one waiting ticket per player across them",
          "[session][actors][claims]") {
  session_fixture x(claiming());
  other_service b(x);
  const auto held = x.create("coop", party({1000}, 1));
  check_refused_as_taken(b.create("duel", party({1000}, 1)), x.f.sys());
  // A party is refused whole: player 2 was not kept by the refused ticket.
  check_refused_as_taken(b.create("coop", party({1000, 1000}, 1)), x.f.sys());
  REQUIRE(b.create("duel", party({1000}, 2)).first);
  // Once the ticket left (cancelled, or matched), its players may wait in B.
  REQUIRE(x.cancel(held));
  REQUIRE(b.create("duel", party({1000}, 1)).first);
  const auto p10 = x.create("duel", party({1500}, 10));
  const auto p11 = x.create("duel", party({1500}, 11));
  x.f.advance(1s);
  CHECK(x.state(p10) == ticket_state::matched);
  CHECK(x.state(p11) == ticket_state::matched);
  REQUIRE(b.create("coop", party({1500, 1500}, 10)).first);
  // And A is refused what B holds (its co-op pair waits for two more).
  auto again = x.ask_create("duel", party({1000}, 11), x.owner);
  CHECK(error_code_of(again.second) == errc::conflict);
}

TEST_CASE("a ticket the journal refused never enters its queue, so no tick matches it",
          "[session][actors][claims]") {
  session_fixture x(claiming());
  other_service b(x);
  x.create("coop", party({1000}, 1));
  // Player 1's duel in B could meet player 2's: refused, it is not there.
  check_refused_as_taken(b.create("duel", party({1000}, 1)), x.f.sys());
  REQUIRE(b.create("duel", party({1000}, 2)).first);
  CHECK(b.waiting(1) == 1);
  x.f.advance(2s);
  CHECK(b.waiting(1) == 1);
}

TEST_CASE("a start drops the claims of tickets its last run never wrote",
          "[session][actors][claims]") {
  session_fixture x(claiming());
  other_service b(x);
  // The last run of A claimed player 5 and died before writing the ticket.
  REQUIRE(x.store->claim_players(x.config.service_name, {{987'654, {5}}}).empty());
  check_refused_as_taken(b.create("duel", party({1000}, 5)), x.f.sys());
  x.stop();
  x.start(claiming());
  REQUIRE(b.create("duel", party({1000}, 5)).first);
}

TEST_CASE("a claim whose transaction failed leaves nothing behind", "[session][actors][claims]") {
  session_fixture x(claiming());
  // A short busy timeout, so that a locked write fails at once.
  x.stop();
  x.store = std::make_shared<sqlite_store>(x.dir.file("journal.db"), database_options{50});
  x.start(claiming());
  other_service b(x);
  {
    // Another writer holds the lock: the claim cannot be taken.
    SQLite::Database blocker(x.dir.file("journal.db"), SQLite::OPEN_READWRITE, 10'000);
    SQLite::Transaction hold(blocker, SQLite::TransactionBehavior::IMMEDIATE);
    auto [id, err] = x.ask_create("duel", party({1000}, 1), x.owner);
    CHECK_FALSE(id);
    CHECK(err);
  }
  // The player is free, in either service, and then held.
  x.f.advance(1s);
  const auto first = x.create("duel", party({1000}, 1));
  check_refused_as_taken(b.create("duel", party({1000}, 1)), x.f.sys());
  REQUIRE(x.cancel(first));
  REQUIRE(b.create("duel", party({1000}, 1)).first);
}

TEST_CASE("a claim taken for a ticket whose row was not written is released before the next",
          "[session][actors][claims]") {
  session_fixture x(claiming());
  // The claims' transaction commits, the batch's fails (a trigger refuses
  // the ticket's row): the claim of player 1 is left without its ticket.
  SQLite::Database admin(x.dir.file("journal.db"), SQLite::OPEN_READWRITE, 10'000);
  admin.exec(
      "CREATE TRIGGER refuse_tickets BEFORE INSERT ON session_ticket_journal "
      "BEGIN SELECT RAISE(ABORT, 'the test refuses ticket rows'); END");
  auto [id, err] = x.ask_create("duel", party({1000}, 1), x.owner);
  CHECK_FALSE(id);
  CHECK(err);
  admin.exec("DROP TRIGGER refuse_tickets");
  // The queue starts again from the store (its record was lost); nothing
  // is written meanwhile. Player 1 tries again: its own claim, left by the
  // failed write, does not stand in the way.
  for (int step = 0; step < 5; ++step) x.f.advance(1s);
  x.create("duel", party({1000}, 1));
}
