// A server alone with its session queues in partitions (sessions.partitions)
// on its SQLite file: the partitions run side by side, one player still has
// one waiting ticket across them, the event feed follows their one sequence
// (WebSocket and `after` across a restart), running match ids name one match
// across the partitions, and a server that still holds tickets or running
// matches of its queues without partitions refuses to turn them on.
#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <thread>

#include "client/event_client.hpp"
#include "server_fixture.hpp"
#include "ticket_ledger.hpp"

using mm::test::json;
using mm::test::live_server;

namespace {

// duel and coop run in partition 1 of 3, arena in 0, solo in 2.
json partitioned(std::uint32_t partitions) {
  return mm::test::partitioned_queues_patch(partitions);
}

mm::client::event_connect events_of(const live_server& s, std::optional<std::uint64_t> after) {
  mm::client::event_connect c;
  c.port = s.port();
  c.token = mm::test::test_token;
  c.after = after;
  return c;
}

// Polls the server until `done` (10 s at most); whether it was.
template <class Done>
bool within_10s(Done done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));  // polling a process
  }
  return true;
}

// The ticket events a follower gets within `wait` of each other, in order.
std::vector<json> drain(mm::client::event_client& follower, std::chrono::milliseconds wait) {
  std::vector<json> out;
  while (auto m = follower.next(wait)) {
    json e = json::parse(*m);
    if (e.contains("ticket")) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

TEST_CASE("a server alone runs its session queues in partitions with one event sequence",
          "[server][sessions][partitions]") {
  live_server s(partitioned(3), 0);
  mm::client::event_client follower(events_of(s, std::nullopt));
  std::set<std::string> matched;
  std::uint64_t player = 1;
  for (const std::string queue : {"arena", "duel", "solo"}) {
    const json t1 = s.post_json("/api/tickets", mm::test::duel_ticket(queue, player++),
                                mm::test::test_token, 201);
    s.post_json("/api/tickets", mm::test::duel_ticket(queue, player++), mm::test::test_token, 201);
    const json done = s.get_json("/api/tickets/" + t1["ticket"].get<std::string>() + "?wait=10",
                                 mm::test::test_token);
    CHECK(done["state"] == "matched");
    matched.insert(t1["ticket"].get<std::string>());
  }
  // Every queue is listed, whatever partition runs it.
  std::set<std::string> listed;
  const json all = s.get_json("/api/queues", mm::test::test_token);
  INFO(all.dump().substr(0, 300));
  for (const auto& q : all["queues"]) listed.insert(q["queue"].get<std::string>());
  CHECK(listed == std::set<std::string>{"arena", "coop", "duel", "solo"});

  // One waiting ticket per player across the partitions.
  const json waits =
      s.post_json("/api/tickets", mm::test::duel_ticket("arena", 500), mm::test::test_token, 201);
  const auto twice =
      s.post("/api/tickets", mm::test::duel_ticket("solo", 500).dump(), mm::test::test_token);
  REQUIRE(twice);
  CHECK(twice->status == 409);

  // The feed holds every partition's events, in one increasing sequence.
  const auto events = drain(follower, std::chrono::milliseconds(1000));
  std::uint64_t last = 0;
  std::set<std::string> seen_matched;
  for (const auto& e : events) {
    CHECK(e["seq"].get<std::uint64_t>() > last);
    last = e["seq"].get<std::uint64_t>();
    if (e["state"] == "matched") seen_matched.insert(e["ticket"].get<std::string>());
  }
  for (const auto& t : matched) CHECK(seen_matched.count(t));
  REQUIRE(!events.empty());
  CHECK(events.back()["ticket"] == waits["ticket"]);

  // After a restart the waiting ticket waits, its claim holds, and `after`
  // goes on from the same numbers.
  follower.close();
  CHECK(s.stop() == 0);
  s.restart(partitioned(3));
  const json back =
      s.get_json("/api/tickets/" + waits["ticket"].get<std::string>(), mm::test::test_token);
  CHECK(back["state"] == "waiting");
  const auto again =
      s.post("/api/tickets", mm::test::duel_ticket("solo", 500).dump(), mm::test::test_token);
  REQUIRE(again);
  CHECK(again->status == 409);
  const json cancel_path =
      s.post_json("/api/tickets", mm::test::duel_ticket("solo", 501), mm::test::test_token, 201);
  mm::client::event_client resumed(events_of(s, last));
  const auto later = drain(resumed, std::chrono::milliseconds(1000));
  REQUIRE(!later.empty());
  CHECK(later.front()["seq"].get<std::uint64_t>() == last + 1);
  CHECK(later.front()["ticket"] == cancel_path["ticket"]);
  CHECK(s.stop() == 0);
}

TEST_CASE("a multi-queue ticket over partitions waits in each and is matched in one of them",
          "[server][sessions][partitions]") {
  live_server s(partitioned(3), 0);
  const auto waiting_in = [&](const std::string& queue) {
    const json all = s.get_json("/api/queues", mm::test::test_token);
    for (const auto& q : all["queues"])
      if (q["queue"] == queue) return q["waiting"].get<std::uint64_t>();
    return std::uint64_t{0};
  };
  // Home: duel's partition (1); it also waits in arena (0) and solo (2).
  json body = mm::test::duel_ticket("duel", 1);
  body.erase("queue");
  body["queues"] = {"duel", "arena", "solo"};
  const json t = s.post_json("/api/tickets", body, mm::test::test_token, 201);
  const std::string id = t["ticket"];
  CHECK(within_10s([&] { return waiting_in("arena") == 1 && waiting_in("solo") == 1; }));
  // A partner in arena: matched there; the poll at its home says so.
  const json partner =
      s.post_json("/api/tickets", mm::test::duel_ticket("arena", 2), mm::test::test_token, 201);
  const json done = s.get_json("/api/tickets/" + id + "?wait=10", mm::test::test_token);
  INFO(done.dump());
  REQUIRE(done["state"] == "matched");
  CHECK(done["queue"] == "arena");  // where it was matched
  const json other =
      s.get_json("/api/tickets/" + partner["ticket"].get<std::string>(), mm::test::test_token);
  CHECK(other["match"]["id"] == done["match"]["id"]);
  // Its owner's events hold the outcome the guest partition wrote, once.
  std::size_t told = 0;
  const json page = s.get_json("/api/events?after=0&limit=1000", mm::test::test_token);
  for (const auto& e : page["events"])
    if (e["ticket"] == id && e["state"] == "matched") ++told;
  CHECK(told == 1);
  // It left every queue; its player is free for a new ticket.
  CHECK(within_10s([&] {
    return waiting_in("duel") == 0 && waiting_in("solo") == 0 && waiting_in("arena") == 0;
  }));
  s.post_json("/api/tickets", mm::test::duel_ticket("solo", 1), mm::test::test_token, 201);
  CHECK(s.stop() == 0);
}

TEST_CASE(
    "a server does not turn partitions on while its queues still hold waiting tickets or running "
    "matches",
    "[server][sessions][partitions]") {
  live_server s(partitioned(1), 0);
  s.post_json("/api/tickets", mm::test::duel_ticket("solo", 7), mm::test::test_token, 201);
  s.post_json("/api/backfills",
              {{"queue", "coop"},
               {"match_id", "m-1"},
               {"datacenter", "paris"},
               {"teams", {{{{"id", 100}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}}},
              mm::test::test_token, 201);
  CHECK(s.stop() == 0);
  mm::test::child_process p({MATCHMAKERD_BINARY, "--config", s.dir().file("matchmakerd.json"),
                             "--sessions.partitions", "3", "--http.port", "0"},
                            true);
  std::string out;
  CHECK(p.finish(&out) != 0);
  CHECK_THAT(out, Catch::Contains("sessions.partitions") &&
                      Catch::Contains("still holds 1 waiting tickets and 1 running matches"));
}

TEST_CASE("a running match's id names one match across the partitions, and finds it",
          "[server][sessions][partitions][backfill]") {
  // arena (partition 0 of 3) takes running matches as coop (partition 1) does.
  json patch = partitioned(3);
  for (auto& q : patch["sessions"]["queues"])
    if (q["name"] == "arena") q.update({{"min_players", 4}, {"max_players", 4}, {"teams", 0}});
  live_server s(patch, 0);
  const auto match_in = [](const std::string& queue) {
    return json{{"queue", queue},
                {"match_id", "m-1"},
                {"datacenter", "paris"},
                {"server", "10.0.0.1:7777"},
                {"teams", {{{{"id", 100}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}}};
  };
  s.post_json("/api/backfills", match_in("coop"), mm::test::test_token, 201);
  // Another partition refuses the id while coop's partition holds it.
  const json taken = s.post_json("/api/backfills", match_in("arena"), mm::test::test_token, 409);
  CHECK(taken["error"].get<std::string>().rfind("match_id:", 0) == 0);
  // Named by its id alone, it is found in its partition: read, updated (the
  // update names no queue), stopped.
  CHECK(s.get_json("/api/backfills/m-1", mm::test::test_token)["queue"] == "coop");
  httplib::Client c("127.0.0.1", s.port());
  const json two = {{"teams",
                     {{{{"id", 100}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}},
                       {{"id", 101}, {"mmr", 1500}, {"rtt_ms", {{"paris", 20}}}}}}}};
  const auto updated =
      c.Put("/api/backfills/m-1", {{"Authorization", "Bearer " + mm::test::test_token}}, two.dump(),
            "application/json");
  REQUIRE(updated);
  CHECK(updated->status == 200);
  CHECK(json::parse(updated->body)["open_seats"] == 2);
  const auto stopped =
      c.Delete("/api/backfills/m-1", {{"Authorization", "Bearer " + mm::test::test_token}});
  REQUIRE(stopped);
  CHECK(stopped->status == 200);
  CHECK(s.get_json("/api/backfills/m-1", mm::test::test_token, 404).contains("error"));
  // Free again: arena takes it, and keeps it across a restart.
  s.post_json("/api/backfills", match_in("arena"), mm::test::test_token, 201);
  CHECK(s.stop() == 0);
  s.restart(patch);
  CHECK(s.get_json("/api/backfills/m-1", mm::test::test_token)["queue"] == "arena");
  s.post_json("/api/backfills", match_in("coop"), mm::test::test_token, 409);
  CHECK(s.stop() == 0);
}
