// The session queues in partitions behind one switch (session_switch.hpp):
// three session services, each running the queues that hash to it, writing
// one SQLite file with the player claims, on CAF's deterministic scheduler.
// A request reaches its queue's partition whichever it names (a queue, a
// ticket's id, a running match's id), what every partition holds is merged,
// and a partition that runs elsewhere is answered for without stopping the
// others.
#include <catch2/catch.hpp>

#include "mm/actors/event_stream.hpp"
#include "mm/actors/session_switch.hpp"
#include "mm/actors/ticket_event_feed.hpp"
#include "mm/session/partitions.hpp"
#include "session_fixture.hpp"

using namespace mm;
using namespace mm::actors;
using namespace mm::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using session::ticket_state;

namespace {

constexpr std::uint32_t partition_count = 3;
const session::id_key test_key{0x1234, 0x5678};

// coop and duel hash to partition 1 of 3, arena to 0, solo to 2 (the hash
// is stable: partitions.hpp).
session_service_config queues_over_three() {
  auto c = two_queues();
  for (const char* name : {"arena", "solo"}) {
    session::queue_config q = c.queues[1];  // a duel
    q.name = name;
    c.queues.push_back(q);
  }
  c.shared_claims = true;
  return c;
}

struct partitioned {
  partitioned() {
    REQUIRE(session::queue_partition("arena", partition_count) == 0);
    REQUIRE(session::queue_partition("coop", partition_count) == 1);
    REQUIRE(session::queue_partition("duel", partition_count) == 1);
    REQUIRE(session::queue_partition("solo", partition_count) == 2);
    parts =
        std::make_shared<session_partitions>(partition_count, session::id_permutation(test_key));
    s = caf::actor_cast<session_interfaces::service>(
        make_session_switch(f.sys(), parts, f.sys().message_types<session_interfaces::service>()));
    owner = spawn_owner(f, got);
    for (std::uint32_t p = 0; p < partition_count; ++p) start(p);
  }
  ~partitioned() {
    for (auto& svc : services) caf::anon_send_exit(svc, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
    f.run();
  }

  void start(std::uint32_t p) {
    auto store = std::make_shared<sqlite_store>(dir.file("journal.db"));
    auto c = queues_over_three();
    c.partition = {p, partition_count};
    c.event_stream = "sessions";
    c.events = feed;
    c.service_name = session::partition_service("sessions", p, partition_count);
    c.store = store;
    c.ids = std::make_shared<session::id_source>(
        test_key, [store] { return store->reserve_id_generation(); }, p);
    c.detached_journal = false;
    c.restored = load_session_journal(*store, c.service_name, &c.ids->permutation(), 0,
                                      c.outcome_retention, c.max_outcomes, c.event_stream,
                                      /*guests=*/true);
    if (services.size() <= p) services.resize(p + 1);
    services[p] = f.sys().spawn(session_service, std::move(c));
    parts->target(p).set(caf::actor_cast<caf::strong_actor_ptr>(services[p]));
    f.run();
  }
  // Partition `p` stops and starts again from the store.
  void restart(std::uint32_t p) {
    parts->target(p).clear({});
    caf::anon_send_exit(services[p], caf::exit_reason::user_shutdown);
    f.run();
    start(p);
  }

  std::pair<std::optional<std::uint64_t>, caf::error> ask_create(const std::string& queue,
                                                                 const session_ticket& t) {
    return f.ask<std::uint64_t>(s, create_atom::value, queue, t, owner);
  }
  std::uint64_t create(const std::string& queue, const session_ticket& t) {
    auto [id, err] = ask_create(queue, t);
    INFO(f.sys().render(err));
    REQUIRE(id);
    return *id;
  }
  std::optional<ticket_outcome> status(std::uint64_t id) {
    return f.ask<ticket_outcome>(s, status_atom::value, id).first;
  }
  std::vector<std::string> queue_names(const session_interfaces::service& of) {
    auto [reports, e] = f.ask<std::vector<session_queue_report>>(of, info_atom::value);
    INFO(f.sys().render(e));
    REQUIRE(reports);
    std::vector<std::string> names;
    for (const auto& r : *reports) names.push_back(r.queue);
    return names;
  }
  session_interfaces::service partition(std::uint32_t p) {
    return caf::actor_cast<session_interfaces::service>(services.at(p));
  }
  // What a node's reader of the event stream does (partition_news): the
  // news of multi-queue tickets over partitions, to the partitions named.
  void relay() {
    sqlite_store reader(dir.file("journal.db"));
    const auto rows = reader.read_stream_events("sessions", relayed, 10'000);
    if (!rows.empty()) relayed = rows.back().seq;
    for (auto& [service, news] : contested_news_of(rows)) {
      const auto p = session::service_partition(service, "sessions", partition_count);
      REQUIRE(p);
      // As partition_news: the outcomes first.
      if (!news.outcomes.empty())
        caf::anon_send(services[*p], elsewhere_atom::value, news.outcomes);
      if (!news.guests.empty()) caf::anon_send(services[*p], guest_atom::value, news.guests);
    }
    f.run();
  }
  // Player `player`'s ticket for duel (partition 1, its home) and arena
  // (partition 0), taken in by both.
  std::uint64_t duel_and_arena(std::uint64_t player) {
    auto t = party({1000}, player);
    t.also_queues = {"arena"};
    const auto id = create("duel", t);
    relay();
    return id;
  }
  std::size_t waiting_in(std::uint32_t p, const std::string& queue) {
    auto [reports, e] = f.ask<std::vector<session_queue_report>>(partition(p), info_atom::value);
    REQUIRE(reports);
    for (const auto& r : *reports)
      if (r.queue == queue) return r.waiting;
    return 0;
  }

  actor_fixture f;
  temp_dir dir;
  std::shared_ptr<session_partitions> parts;
  session_interfaces::service s;  // the switch
  outcomes got = std::make_shared<std::vector<ticket_outcome>>();
  session_interfaces::owner owner;
  std::vector<session_service_actor> services;  // by partition
  std::shared_ptr<ticket_event_feed> feed =
      std::make_shared<ticket_event_feed>(ticket_event_feed::limits{});
  std::uint64_t relayed = 0;  // the stream's last number relayed
};

using names = std::vector<std::string>;

}  // namespace

TEST_CASE("each partition runs only its own queues, and the switch lists them all",
          "[session][actors][partitions]") {
  partitioned x;
  CHECK(x.queue_names(x.partition(0)) == names{"arena"});
  CHECK(x.queue_names(x.partition(1)) == names{"coop", "duel"});
  CHECK(x.queue_names(x.partition(2)) == names{"solo"});
  CHECK(x.queue_names(x.s) == names{"arena", "coop", "duel", "solo"});
}

TEST_CASE("a ticket goes to its queue's partition, and its id brings a status or a cancel back",
          "[session][actors][partitions]") {
  partitioned x;
  const session::id_permutation ids(test_key);
  std::vector<std::uint64_t> made;
  for (const auto& [queue, p] : std::vector<std::pair<std::string, std::uint32_t>>{
           {"arena", 0}, {"duel", 1}, {"coop", 1}, {"solo", 2}}) {
    const auto id = x.create(queue, party({1000}, 10 + made.size()));
    CHECK(session::partition_of_serial(ids.decode(id)) == p);
    CHECK(x.parts->of_id(id) == p);
    const auto o = x.status(id);
    REQUIRE(o);
    CHECK(o->state == ticket_state::waiting);
    made.push_back(id);
  }
  // Each partition knows only its own: asked directly, another's is unknown.
  CHECK_FALSE(x.f.ask<ticket_outcome>(x.partition(0), status_atom::value, made[3]).first);
  CHECK(x.f.ask<bool>(x.s, cancel_atom::value, made[3]).first == true);
  CHECK(x.status(made[3])->state == ticket_state::cancelled);
  // Two duels meet in partition 1, told through the switch.
  const auto a = x.create("solo", party({1500}, 50));
  const auto b = x.create("solo", party({1500}, 51));
  x.f.advance(1s);
  CHECK(x.status(a)->state == ticket_state::matched);
  CHECK(x.status(b)->match.tickets.size() == 2);
  // An id no partition made is unknown, whichever partition its bits name.
  for (std::uint64_t guess : {std::uint64_t{1}, ids.encode((7ULL << 40) | (200ULL << 32) | 5)}) {
    auto [o, e] = x.f.ask<ticket_outcome>(x.s, status_atom::value, guess);
    CHECK_FALSE(o);
    CHECK(error_code_of(e) == errc::not_found);
  }
}

TEST_CASE("one player waits in one ticket across partitions", "[session][actors][partitions]") {
  partitioned x;
  const auto held = x.create("duel", party({1000}, 7));
  auto [id, e] = x.ask_create("arena", party({1000}, 7));
  CHECK_FALSE(id);
  CHECK(error_code_of(e) == errc::conflict);
  CHECK_THAT(x.f.sys().render(e), Contains("players"));
  REQUIRE(x.f.ask<bool>(x.s, cancel_atom::value, held).first == true);
  x.create("arena", party({1000}, 7));
}

TEST_CASE("a multi-queue ticket over two partitions waits in both and is matched in one",
          "[session][actors][partitions]") {
  partitioned x;
  auto t = party({1000}, 1);
  t.also_queues = {"arena"};  // duel: partition 1 (its home), arena: partition 0
  const auto id = x.create("duel", t);
  CHECK(x.waiting_in(1, "duel") == 1);
  CHECK(x.waiting_in(0, "arena") == 0);  // not until the stream says so
  x.relay();
  CHECK(x.waiting_in(0, "arena") == 1);
  // A partner in arena: partition 0 matches it; its home learns it from the stream.
  const auto partner = x.create("arena", party({1000}, 2));
  x.f.advance(1s);
  CHECK(x.status(partner)->state == ticket_state::matched);
  CHECK(x.status(id)->state == ticket_state::waiting);  // the home's books, not yet told
  x.relay();
  const auto o = x.status(id);
  REQUIRE(o);
  CHECK(o->state == ticket_state::matched);
  CHECK(o->match.queue == "arena");
  CHECK(x.waiting_in(1, "duel") == 0);
  bool owner_told = false;
  for (const auto& ev : *x.got)
    owner_told = owner_told || (ev.ticket == id && ev.match.queue == "arena");
  CHECK(owner_told);
  // Unknown queues are refused whatever partition would run them.
  t = party({1000}, 3);
  t.also_queues = {"nowhere"};
  auto [none, e] = x.ask_create("duel", t);
  CHECK_FALSE(none);
  CHECK_THAT(x.f.sys().render(e), Contains("queues[1]: no queue 'nowhere'"));
}

TEST_CASE(
    "of two partitions that match one ticket at once the first commit wins, the other "
    "match's tickets wait again",
    "[session][actors][partitions]") {
  partitioned x;
  const auto shared = x.duel_and_arena(1);
  const auto in_duel = x.create("duel", party({1000}, 2));
  const auto in_arena = x.create("arena", party({1000}, 3));
  x.f.advance(1s);  // both partitions tick: each forms a match with the shared ticket
  x.relay();
  const auto a = x.status(in_duel), b = x.status(in_arena), s = x.status(shared);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(s);
  CHECK(s->state == ticket_state::matched);
  // Exactly one partner is matched (with the shared ticket), the other waits again.
  CHECK((a->state == ticket_state::matched) != (b->state == ticket_state::matched));
  const auto& winner = a->state == ticket_state::matched ? *a : *b;
  CHECK(winner.match.id == s->match.id);
  const std::string loser_queue = a->state == ticket_state::matched ? "arena" : "duel";
  const std::uint32_t loser_partition = loser_queue == "arena" ? 0 : 1;
  CHECK(x.waiting_in(loser_partition, loser_queue) == 1);
  // Back in its queue for real: a new partner matches it.
  const auto next = x.create(loser_queue, party({1000}, 4));
  x.f.advance(1s);
  CHECK(x.status(next)->state == ticket_state::matched);
  CHECK(x.status(a->state == ticket_state::matched ? in_arena : in_duel)->state ==
        ticket_state::matched);
}

TEST_CASE("a cancel at the home loses to a guest partition's match written first",
          "[session][actors][partitions]") {
  partitioned x;
  const auto id = x.duel_and_arena(1);
  x.create("arena", party({1000}, 2));
  x.f.advance(1s);  // matched in arena (partition 0); duel's home not yet told
  CHECK(x.f.ask<bool>(x.s, cancel_atom::value, id).first == false);
  x.relay();
  CHECK(x.status(id)->state == ticket_state::matched);
}

TEST_CASE("a partition that starts again takes its guests back from the store",
          "[session][actors][partitions]") {
  partitioned x;
  auto t = party({1000}, 1);
  t.also_queues = {"arena", "solo"};  // home 1, guests 0 and 2
  const auto id = x.create("duel", t);
  x.restart(0);  // before any relay: its start reads the guest row
  CHECK(x.waiting_in(0, "arena") == 1);
  x.restart(1);
  CHECK(x.waiting_in(1, "duel") == 1);
  x.relay();
  CHECK(x.waiting_in(2, "solo") == 1);
  CHECK(x.waiting_in(0, "arena") == 1);  // taken in once
  // A cancel at the home reaches every guest through the stream.
  CHECK(x.f.ask<bool>(x.s, cancel_atom::value, id).first == true);
  x.relay();
  CHECK(x.waiting_in(0, "arena") == 0);
  CHECK(x.waiting_in(2, "solo") == 0);
  // Nothing is placed into a running match... and the players are free.
  x.create("solo", party({1000}, 1));
}

TEST_CASE("a guest whose player's own ticket there is still on its way to the store is taken in",
          "[session][actors][partitions]") {
  partitioned x;
  auto t = party({1000}, 1);
  t.also_queues = {"arena"};  // home 1, guest 0
  const auto id = x.create("duel", t);
  // Player 1's ticket for arena alone reaches partition 0, which books it
  // while its write is on its way; the store will refuse it (player 1
  // waits in `id`). The guest news of `id` comes meanwhile.
  const auto only = [&](std::initializer_list<caf::actor> actors) {
    std::vector<caf::resumable*> allowed;
    for (const auto& a : actors)
      allowed.push_back(dynamic_cast<caf::resumable*>(caf::actor_cast<caf::abstract_actor*>(a)));
    x.f.sched().run_jobs_filtered([&](caf::resumable* r) {
      return std::find(allowed.begin(), allowed.end(), r) != allowed.end();
    });
  };
  const auto zero = caf::actor_cast<caf::actor>(x.services[0]);
  caf::anon_send(x.s, create_atom::value, std::string("arena"), party({1000}, 1), x.owner);
  only({caf::actor_cast<caf::actor>(x.s), zero});
  caf::anon_send(x.services[0], guest_atom::value, std::vector<std::uint64_t>{id});
  only({zero});
  x.f.run();
  x.f.advance(1s);  // asked again once the other create had its answer
  CHECK(x.waiting_in(0, "arena") == 1);
  CHECK(x.status(id)->state == ticket_state::waiting);
  // And matched there with a partner: its home is told.
  x.create("arena", party({1000}, 2));
  x.f.advance(1s);
  x.relay();
  CHECK(x.status(id)->state == ticket_state::matched);
}

TEST_CASE("a partition served elsewhere is answered for, and the others keep serving",
          "[session][actors][partitions]") {
  partitioned x;
  const auto solo = x.create("solo", party({1000}, 1));
  x.parts->target(2).clear("http://node-b:8080");
  auto [id, e] = x.ask_create("solo", party({1000}, 2));
  CHECK_FALSE(id);
  CHECK(error_code_of(e) == errc::not_owned_here);
  CHECK_THAT(x.f.sys().render(e), Contains("session partition 2 is not served by this node: ask "
                                           "http://node-b:8080"));
  auto [o, e2] = x.f.ask<ticket_outcome>(x.s, status_atom::value, solo);
  CHECK(error_code_of(e2) == errc::not_owned_here);
  x.create("duel", party({1000}, 3));
  // The listing holds the queues of the partitions that run here.
  CHECK(x.queue_names(x.s) == names{"arena", "coop", "duel"});
  for (std::uint32_t p = 0; p < partition_count; ++p) x.parts->target(p).clear({});
  auto [none, e3] = x.f.ask<std::vector<session_queue_report>>(x.s, info_atom::value);
  CHECK(error_code_of(e3) == errc::not_owned_here);
}

namespace {

// Game server gs's running match m1 in solo, one seat taken by `player`.
backfill_registration match_m1(std::uint64_t player = 100) {
  backfill_registration r;
  r.queue = "solo";
  r.match_id = "m1";
  r.datacenter = "paris";
  r.server = "10.0.0.1:7777";
  r.teams = {party({1000}, player).players, {}};
  r.credential = "gs";
  return r;
}

}  // namespace

TEST_CASE("a running match is found by its id in whichever partition runs its queue",
          "[session][actors][partitions][backfill]") {
  partitioned x;
  const backfill_registration r = match_m1();
  auto [added, e] = x.f.ask<backfill_state>(x.s, backfill_atom::value, create_atom::value, r);
  INFO(x.f.sys().render(e));
  REQUIRE(added);
  auto [found, e2] = x.f.ask<backfill_state>(x.s, backfill_atom::value, status_atom::value,
                                             std::string("m1"), std::string("gs"));
  REQUIRE(found);
  CHECK(found->registration.queue == "solo");
  auto [every, e3] = x.f.ask<std::vector<backfill_state>>(
      x.s, backfill_atom::value, inspect_atom::value, std::string(), std::string());
  REQUIRE(every);
  CHECK(every->size() == 1);
  auto [missing, e4] = x.f.ask<backfill_state>(x.s, backfill_atom::value, status_atom::value,
                                               std::string("m2"), std::string("gs"));
  CHECK_FALSE(missing);
  CHECK(error_code_of(e4) == errc::not_found);
  // An update names its match alone (no queue): found where it runs.
  backfill_registration change = r;
  change.queue.clear();
  auto [updated, e6] =
      x.f.ask<backfill_state>(x.s, backfill_atom::value, update_atom::value, change);
  INFO(x.f.sys().render(e6));
  CHECK(updated);
  // Its id is solo's partition's: arena's (partition 0) refuses it.
  backfill_registration same_id = r;
  same_id.queue = "arena";
  same_id.teams = {party({1000}, 101).players, {}};
  auto [twice, e8] =
      x.f.ask<backfill_state>(x.s, backfill_atom::value, create_atom::value, same_id);
  CHECK_FALSE(twice);
  CHECK(error_code_of(e8) == errc::conflict);
  // With a partition run by another node, a match not found here may be
  // there: not_owned_here, so a client relaying over the nodes asks on.
  x.parts->target(0).clear("http://node-b:8080");
  auto [elsewhere, e7] = x.f.ask<backfill_state>(x.s, backfill_atom::value, status_atom::value,
                                                 std::string("m2"), std::string("gs"));
  CHECK_FALSE(elsewhere);
  CHECK(error_code_of(e7) == errc::not_owned_here);
  x.parts->target(0).set(caf::actor_cast<caf::strong_actor_ptr>(x.services[0]));
  CHECK(x.f.ask<bool>(x.s, backfill_atom::value, close_atom::value, std::string("m1"),
                      std::string("gs"))
            .first == true);
  auto [gone, e5] = x.f.ask<backfill_state>(x.s, backfill_atom::value, status_atom::value,
                                            std::string("m1"), std::string("gs"));
  CHECK(error_code_of(e5) == errc::not_found);
}

TEST_CASE("a second registration of an id while the first's claim is asked is refused",
          "[session][actors][partitions][backfill]") {
  // The partition's journal claims the id in the store; the service records
  // the owner before it asks, so both requests, sent before either is
  // answered, cannot both be taken.
  partitioned x;
  const backfill_registration r = match_m1(), again = match_m1(101);
  auto first = x.f.request<backfill_state>(x.s, backfill_atom::value, create_atom::value, r);
  auto second = x.f.request<backfill_state>(x.s, backfill_atom::value, create_atom::value, again);
  x.f.run();
  CHECK(first->first.has_value() != second->first.has_value());
  const auto& refused = first->first ? second->second : first->second;
  CHECK(error_code_of(refused) == errc::conflict);
  // And a refused registration in another partition leaves the holder's
  // claim: the match is still found, and still refused to arena.
  backfill_registration arena = r;
  arena.queue = "arena";
  auto [elsewhere, e] =
      x.f.ask<backfill_state>(x.s, backfill_atom::value, create_atom::value, arena);
  CHECK(error_code_of(e) == errc::conflict);
  auto [found, e2] = x.f.ask<backfill_state>(x.s, backfill_atom::value, status_atom::value,
                                             std::string("m1"), std::string("gs"));
  CHECK(found);
}

TEST_CASE("the lobbies are partition 0's", "[session][actors][partitions]") {
  partitioned x;
  lobby_registration l;
  l.id = "lobby-1";
  l.mode = "ffa";
  l.datacenter = "paris";
  l.max_players = 8;
  auto [made, e0] = x.f.ask<bool>(x.s, lobby_atom::value, create_atom::value, l);
  INFO(x.f.sys().render(e0));
  REQUIRE(made == true);
  auto [here, e] = x.f.ask<lobbies_report>(x.partition(0), lobby_atom::value, info_atom::value);
  REQUIRE(here);
  auto [there, e2] = x.f.ask<lobbies_report>(x.partition(1), lobby_atom::value, info_atom::value);
  REQUIRE(there);
  CHECK(here->lobbies == 1);
  CHECK(there->lobbies == 0);
}

TEST_CASE("the partitions' events are one sequence, and a restart goes on from its end",
          "[session][actors][partitions][events]") {
  partitioned x;
  std::uint64_t expected = 0;
  auto check_feed = [&] {
    const auto page = x.feed->read_after(0, event_filter{}, 1000);
    REQUIRE(page.events.size() == expected);
    for (std::size_t i = 0; i < page.events.size(); ++i) CHECK(page.events[i]->seq == i + 1);
    CHECK(x.feed->last_seq() == expected);
  };
  player_id next = 1;
  for (int round = 0; round < 3; ++round)
    for (const std::string queue : {"arena", "duel", "solo", "coop"}) {
      auto t = party({1000}, next++);
      t.credential = "game-" + queue;
      x.create(queue, t);
      ++expected;
    }
  check_feed();
  x.f.advance(1s);  // arena, duel and solo each match their pairs: 3 x 2 outcomes
  expected += 6;
  check_feed();
  // A restarted partition's outcomes still carry their tickets' credentials
  // (it reads them back with the waiting tickets).
  x.restart(1);
  const auto coop_ticket =
      x.feed->read_after(0, event_filter{{}, {"coop"}}, 1).events.at(0)->ticket;
  REQUIRE(x.f.ask<bool>(x.s, cancel_atom::value, coop_ticket).first == true);
  ++expected;
  check_feed();
  // A node that follows the stream in the store reads the same events,
  // credentials included (its outcome rows get them from the creations).
  sqlite_store store(x.dir.file("journal.db"));
  ticket_event_feed elsewhere(ticket_event_feed::limits{});
  CHECK(pull_stream_events(store, "sessions", elsewhere, 7) == 7);
  CHECK(pull_stream_events(store, "sessions", elsewhere, 1000) == expected - 7);
  CHECK(pull_stream_events(store, "sessions", elsewhere, 1000) == 0);
  const auto live = x.feed->read_after(0, event_filter{}, 1000).events;
  const auto pulled = elsewhere.read_after(0, event_filter{}, 1000).events;
  REQUIRE(pulled.size() == live.size());
  for (std::size_t i = 0; i < live.size(); ++i) {
    CHECK(pulled[i]->seq == live[i]->seq);
    CHECK(pulled[i]->ticket == live[i]->ticket);
    CHECK(pulled[i]->state == live[i]->state);
    CHECK(pulled[i]->queue == live[i]->queue);
    CHECK(pulled[i]->credential == live[i]->credential);
    CHECK(pulled[i]->credential == "game-" + live[i]->queue);
  }
  // Every partition's journal reads the stream's end back.
  for (std::uint32_t p = 0; p < partition_count; ++p) {
    journal_read r;
    r.event_stream = "sessions";
    CHECK(store.read_journal(session::partition_service("sessions", p, partition_count), r)
              .last_seq == expected);
  }
}
