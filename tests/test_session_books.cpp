// The session service's books read from another thread (ticket_book.hpp):
// on CAF's deterministic scheduler, with a real SQLite journal, every answer
// the books give a thread that is not the service's is the one the service
// gives for the same ticket at the same moment, over random tickets,
// cancels, matches and expiries, and the one the test knows independently;
// the books answer only while their service runs, never after it stopped,
// never an older run's; and readers on other threads, while the books are
// written, see a ticket whole or not at all.
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <thread>

#include "mm/engine/random.hpp"
#include "session_fixture.hpp"

using namespace mm;
using namespace mm::actors;
using namespace std::chrono_literals;
using session::ticket_state;
using test::party;
using test::session_fixture;

namespace {

std::shared_ptr<ticket_book> books_for(const session_service_config& c) {
  return std::make_shared<ticket_book>(c.outcome_retention, c.max_outcomes);
}

// What the test made: each ticket's first queue and credential.
struct made_ticket {
  std::string queue, credential;
};

// Both answers for `id`: the service's (nullopt: it knows no such ticket)
// and the books' from this thread; and the books' against what the test
// knows independently: the ticket as made until its owner is told of its
// outcome, then that outcome (or nothing, once the oldest outcomes are
// dropped). Adds the state to `seen`.
void same_answer(session_fixture& x, const ticket_book& books, std::uint64_t id,
                 const std::map<std::uint64_t, made_ticket>& made, std::set<ticket_state>& seen) {
  const auto asked = x.status(id);
  const auto read = books.try_status(id);
  INFO("ticket " << id);
  REQUIRE(asked.has_value() == read.has_value());
  const auto it = made.find(id);
  const ticket_outcome* told = nullptr;
  for (const auto& o : *x.got)
    if (o.ticket == id) told = &o;
  if (!read) {
    CHECK((it == made.end() || told != nullptr));
    return;
  }
  REQUIRE(it != made.end());
  CHECK(read->credential == it->second.credential);
  if (told == nullptr) {
    CHECK(read->state == ticket_state::waiting);
    CHECK(read->queue == it->second.queue);
  } else {
    CHECK(read->state == told->state);
    CHECK(read->match.id == told->match.id);
  }
  seen.insert(asked->state);
  CHECK(read->ticket == asked->ticket);
  CHECK(read->state == asked->state);
  CHECK(read->queue == asked->queue);
  CHECK(read->credential == asked->credential);
  CHECK(read->seq == asked->seq);
  CHECK(read->at_unix_ms == asked->at_unix_ms);
  CHECK(read->match.id == asked->match.id);
  CHECK(read->match.tickets == asked->match.tickets);
}

}  // namespace

TEST_CASE("the books answer another thread as the service does, over random tickets",
          "[session][actors]") {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    auto config = test::two_queues();
    config.queues[0].give_up_after = 5s;  // coop: some expire
    config.max_outcomes = 40;             // and old outcomes are dropped
    auto books = books_for(config);
    config.book = books;
    session_fixture x(config);
    rng r(seed);
    std::vector<std::uint64_t> ids;
    std::map<std::uint64_t, made_ticket> made;
    std::set<ticket_state> seen;
    player_id next_player = 1;
    for (int step = 0; step < 150; ++step) {
      const auto pick = r.below(10);
      if (pick < 6) {
        const std::size_t size = 1 + r.below(2);
        std::vector<double> mmr;
        for (std::size_t i = 0; i < size; ++i) mmr.push_back(800 + r.below(8) * 100.0);
        session_ticket t = party(mmr, next_player);
        next_player += size;
        t.credential = r.below(2) == 0 ? "alpha" : "beta";
        const bool duel = size == 1 && r.below(3) == 0;
        if (duel && r.below(2) == 0) t.also_queues = {"coop"};
        auto [id, err] = x.ask_create(duel ? "duel" : "coop", t, x.owner);
        if (id) {
          ids.push_back(*id);
          made[*id] = {duel ? "duel" : "coop", t.credential};
        }
      } else if (pick < 8 && !ids.empty()) {
        x.cancel(ids[r.below(ids.size())]);
      } else {
        x.f.advance(std::chrono::milliseconds(200 + r.below(2000)));
      }
      // The last few and a sample of the rest, and one never issued.
      for (std::size_t k = ids.size() > 6 ? ids.size() - 6 : 0; k < ids.size(); ++k)
        same_answer(x, *books, ids[k], made, seen);
      if (!ids.empty()) same_answer(x, *books, ids[r.below(ids.size())], made, seen);
      same_answer(x, *books, 0x5eed0000 + step, made, seen);
    }
    for (const auto id : ids) same_answer(x, *books, id, made, seen);
    // The cases were all there: waiting, matched, cancelled and expired.
    CHECK(seen.size() == 4);
  }
}

TEST_CASE("the books answer only while their service runs, never an older run's",
          "[session][actors]") {
  auto config = test::two_queues();
  auto first_books = books_for(config);
  config.book = first_books;
  session_fixture x(config);
  const auto waits = x.create("coop", party({1000}, 1));
  const auto gone = x.create("coop", party({3000}, 2));
  REQUIRE(x.cancel(gone));
  REQUIRE(first_books->try_status(waits));
  CHECK(first_books->try_status(waits)->state == ticket_state::waiting);
  CHECK(first_books->try_status(gone)->state == ticket_state::cancelled);

  // Stopped: the books answer nothing, so a poll asks the service (and
  // gets its error while none runs).
  x.stop();
  CHECK_FALSE(first_books->try_status(waits));
  CHECK_FALSE(first_books->try_status(gone));

  // The next run reads the journal into books of its own.
  auto second_books = books_for(config);
  config.book = second_books;
  x.start(config);
  REQUIRE(second_books->try_status(waits));
  CHECK(second_books->try_status(waits)->state == ticket_state::waiting);
  CHECK(second_books->try_status(gone)->state == ticket_state::cancelled);
  CHECK_FALSE(first_books->try_status(waits));

  // A crash of the service closes its books as a stop does.
  caf::anon_send_exit(x.svc, caf::exit_reason::kill);
  x.f.run();
  CHECK_FALSE(second_books->try_status(waits));
  x.svc = nullptr;
}

TEST_CASE("the books are closed to other threads until the restore ends", "[session][actors]") {
  ticket_book books(std::chrono::minutes(10), 100);
  ticket_book::entry e;
  e.slots = {0};
  e.credential = books.intern("alpha");
  books.name_queue(0, "coop");
  books.add(7, e);
  CHECK_FALSE(books.try_status(7));  // still restoring
  REQUIRE(books.status(7));          // the service's own read
  books.open(true);
  REQUIRE(books.try_status(7));
  CHECK(books.try_status(7)->queue == "coop");
  CHECK(books.try_status(7)->credential == "alpha");
  CHECK_FALSE(books.try_status(8));
}

TEST_CASE("the books read from other threads while the service writes them: whole answers only",
          "[session][actors]") {
  // One writer as the service (tickets in and out, outcomes kept and
  // dropped, credentials and queues added, which grows their arrays), two
  // readers as HTTP threads. A reader sees a ticket whole or not at all.
  ticket_book books(std::chrono::minutes(10), 500);
  books.open(true);
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> answered{0};
  std::atomic<std::uint64_t> torn{0};
  std::atomic<int> started{0};
  constexpr std::uint64_t tickets = 20'000;
  const auto reader = [&](std::uint64_t seed) {
    rng r(seed);
    started.fetch_add(1);
    // While the writer writes, then once more over every id when it is done
    // (so that some reads surely answer).
    for (std::uint64_t last = 0; last < tickets;) {
      const bool writing = !done.load();
      const std::uint64_t id = writing ? 1 + r.below(tickets) : ++last;
      if (const auto o = books.try_status(id)) {
        answered.fetch_add(1);
        const bool whole =
            o->ticket == id && o->credential == "c" + std::to_string(id % 37) &&
            (o->state != ticket_state::waiting || o->queue == "q" + std::to_string(id % 11)) &&
            (o->state != ticket_state::matched || o->match.id == id * 3);
        if (!whole) torn.fetch_add(1);
      }
    }
  };
  std::thread a(reader, 1), b(reader, 2);
  while (started.load() < 2) std::this_thread::yield();  // both read while this writes
  rng r(3);
  for (std::uint64_t id = 1; id <= tickets; ++id) {
    books.name_queue(static_cast<std::uint32_t>(id % 11), "q" + std::to_string(id % 11));
    ticket_book::entry e;
    e.slots = {static_cast<std::uint32_t>(id % 11)};
    e.players = {id};
    e.credential = books.intern("c" + std::to_string(id % 37));
    books.add(id, e);
    if (id > 20) {  // one that waited a while leaves, matched or expired
      const std::uint64_t leaves = id - 20;
      if (auto left = books.remove(leaves)) {
        ticket_outcome o;
        o.ticket = leaves;
        o.credential = books.credential(left->credential);
        o.state = r.below(2) == 0 ? ticket_state::matched : ticket_state::expired;
        if (o.state == ticket_state::matched) o.match.id = leaves * 3;
        o.at_unix_ms = static_cast<std::int64_t>(id);
        books.keep(o, static_cast<std::int64_t>(id));
      }
    }
  }
  done = true;
  a.join();
  b.join();
  CHECK(torn.load() == 0);
  CHECK(answered.load() > 0);
}

TEST_CASE("the books admit a ticket by ownership: never another owner's ticket replaced or named",
          "[session][books]") {
  rng r(52);
  for (int run = 0; run < 200; ++run) {
    ticket_book book(std::chrono::minutes(1), 100);
    const std::vector<std::string> owners = {"token:alice", "token:bob", "actor:gs-eu"};
    std::map<player_id, std::pair<std::uint64_t, std::string>> waits;  // the oracle
    for (std::uint64_t id = 1; id <= 10; ++id) {
      ticket_book::entry e;
      const std::string owner = owners[r.below(owners.size())];
      for (int k = 0; k < 1 + static_cast<int>(r.below(3)); ++k) {
        const player_id p = 1 + r.below(40);
        if (waits.count(p) || std::count(e.players.begin(), e.players.end(), p)) continue;
        e.players.push_back(p);
        waits[p] = {id, owner};
      }
      e.credential = book.intern(owner);
      e.pending = r.below(5) == 0;
      book.add(id, std::move(e));
    }
    std::vector<player_id> party;
    for (int k = 0; k < 1 + static_cast<int>(r.below(4)); ++k) party.push_back(1 + r.below(40));
    const std::string caller = owners[r.below(owners.size())];
    const bool replace = r.below(2) == 0;
    const auto got = book.admit(party, caller, replace);
    // The oracle: the first player that waits decides a refusal.
    std::string expected;
    std::set<std::uint64_t> replaced;
    for (std::size_t i = 0; i < party.size() && expected.empty(); ++i) {
      const auto w = waits.find(party[i]);
      if (w == waits.end()) continue;
      const auto [ticket, owner] = w->second;
      const std::string who =
          "players[" + std::to_string(i) + "].id: player " + std::to_string(party[i]);
      if (owner != caller)
        expected = who + " already waits in a ticket of another owner";
      else if (!replace)
        expected = who + " already waits in ticket " + session::format_public_id(ticket);
      else if (book.find(ticket)->pending)
        expected =
            who + "'s ticket " + session::format_public_id(ticket) + " is still being created";
      else
        replaced.insert(ticket);
    }
    CHECK(got.refusal == expected);
    if (expected.empty())
      CHECK(std::set<std::uint64_t>(got.replaced.begin(), got.replaced.end()) == replaced);
    for (const auto& [p, w] : waits)  // another owner's id is never in the answer
      if (w.second != caller) {
        CHECK(got.refusal.find(session::format_public_id(w.first)) == std::string::npos);
        CHECK(std::count(got.replaced.begin(), got.replaced.end(), w.first) == 0);
      }
  }
}
