// The ticket events through the real matchmakerd: a WebSocket per token sees
// its own tickets (an admin every ticket, or a queue's), resumes after a
// sequence number with each missed event exactly once, across a restart too;
// the long-poll does the same; auth, Origin and the bounds refuse before the
// handshake; mmctl ticket watch follows a ticket to its match.
#include <SQLiteCpp/Database.h>

#include <future>

#include "client/event_client.hpp"
#include "session_http.hpp"

using namespace mm::test;
using namespace std::chrono_literals;
using mm::client::event_client;
using mm::client::event_connect;

namespace {

event_connect as(const live_server& s, const std::string& token) {
  event_connect c;
  c.port = s.port();
  c.token = token;
  return c;
}

// The next message of type "event" within `wait` (others skipped).
std::optional<json> next_event(event_client& c, std::chrono::milliseconds wait = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto text = c.next(100ms);
    if (!text) {
      if (c.closed()) return std::nullopt;
      continue;
    }
    json m = json::parse(*text);
    if (m["type"] == "event") return m;
  }
  return std::nullopt;
}

// Every event message that comes within `quiet` of the previous one.
std::vector<json> drain(event_client& c, std::chrono::milliseconds quiet) {
  std::vector<json> out;
  while (auto e = next_event(c, quiet)) out.push_back(*e);
  return out;
}

}  // namespace

TEST_CASE("ticket events over a WebSocket: a token's own, an admin's all, resumed exactly once",
          "[server][session][events]") {
  live_server s(session_patch(), 100);
  event_client mine(as(s, test_token));
  event_client theirs(as(s, other_test_token));
  event_client admin(as(s, admin_token));
  const json hello = json::parse(*mine.next(5s));
  CHECK(hello["type"] == "hello");
  CHECK(hello["own_tickets_only"] == true);

  const auto a = create(s, solo("duel", 1, 1500));
  const auto b = create(s, solo("duel", 2, 1510), other_test_token);
  // Mine: a waits, then a is matched (with b); b's events are not mine.
  const auto w = next_event(mine);
  REQUIRE(w);
  CHECK((*w)["ticket"] == a);
  CHECK((*w)["state"] == "waiting");
  const auto m = next_event(mine);
  REQUIRE(m);
  CHECK((*m)["ticket"] == a);
  CHECK((*m)["state"] == "matched");
  CHECK((*m)["match"]["tickets"].size() == 2);
  CHECK((*m)["seq"].get<std::uint64_t>() > (*w)["seq"].get<std::uint64_t>());
  for (const auto& e : drain(theirs, 300ms)) CHECK(e["ticket"] == b);
  // The admin saw all four, in sequence order.
  const auto all = drain(admin, 300ms);
  REQUIRE(all.size() == 4);
  for (std::size_t i = 1; i < all.size(); ++i)
    CHECK(all[i]["seq"].get<std::uint64_t>() > all[i - 1]["seq"].get<std::uint64_t>());

  // Disconnected, then resumed from the last sequence seen: exactly what was missed.
  const std::uint64_t seen = (*m)["seq"];
  mine.close();
  std::vector<std::string> made;
  for (int i = 0; i < 5; ++i) made.push_back(create(s, solo("duel", 10 + i, 100 + 1000 * i)));
  CHECK(del(s, "/api/tickets/" + made[0], test_token)->status == 200);
  event_connect resume = as(s, test_token);
  resume.after = seen;
  event_client back(resume);
  // The first six (the five may expire later, past the point of this check).
  std::vector<json> missed;
  while (missed.size() < 6) {
    const auto e = next_event(back);
    REQUIRE(e);
    missed.push_back(*e);
  }
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(missed[i]["ticket"] == made[i]);
    CHECK(missed[i]["state"] == "waiting");
  }
  CHECK(missed[5]["state"] == "cancelled");
  CHECK(missed[5]["ticket"] == made[0]);

  // A queue filter for an admin, and a subscription added on the connection.
  event_connect coop_only = as(s, admin_token);
  coop_only.queues = "coop";
  event_client coop(coop_only);
  create(s, solo("duel", 30, 9000));
  CHECK_FALSE(next_event(coop, 500ms));
  coop.send(R"({"type":"subscribe","queue":"duel"})");
  const auto t31 = create(s, solo("duel", 31, 9900));
  bool seen31 = false;
  while (!seen31) {
    const auto e = next_event(coop);
    REQUIRE(e);
    CHECK((*e)["queue"] == "duel");
    seen31 = (*e)["ticket"] == t31;
  }
}

TEST_CASE("the events survive a restart and the long-poll resumes from a sequence number",
          "[server][session][events]") {
  live_server s(session_patch(), 100);
  const json start = s.get_json("/api/events", test_token);
  const std::uint64_t from = start["next_after"];
  const auto a = create(s, solo("duel", 1, 1500));
  // A long-poll that waits for the next event, answered by the match.
  auto poll = std::async(std::launch::async, [&] {
    return s.get_json("/api/events?wait=10&after=" + std::to_string(from + 1), test_token);
  });
  create(s, solo("duel", 2, 1505), other_test_token);
  const json got = poll.get();
  REQUIRE(got["events"].size() == 1);
  CHECK(got["events"][0]["state"] == "matched");
  CHECK(got["events"][0]["ticket"] == a);

  REQUIRE(s.stop() == 0);
  s.restart(json::object());
  const json again = s.get_json("/api/events?after=" + std::to_string(from), test_token);
  REQUIRE(again["events"].size() == 2);  // mine only: waiting, matched
  CHECK(again["events"][0]["state"] == "waiting");
  CHECK(again["events"][1]["state"] == "matched");
  CHECK(again["missed"] == false);
  // The sequence goes on from where it was: a new ticket's event is later.
  create(s, solo("duel", 3, 5000));
  const json later = s.get_json("/api/events?after=" + again["next_after"].dump(), test_token);
  REQUIRE(later["events"].size() == 1);
  CHECK(later["events"][0]["seq"].get<std::uint64_t>() > again["next_after"].get<std::uint64_t>());
  // Bad parameters are named.
  const json bad = s.get_json("/api/events?after=x", test_token, 400);
  CHECK(bad["error"].get<std::string>().find("after") != std::string::npos);
}

TEST_CASE("the event sequence goes on after a prune deleted every event and a restart",
          "[server][session][events]") {
  json patch = session_patch();
  patch["sessions"]["outcome_retention"] = "1s";
  live_server s(patch, 100);
  for (int i = 0; i < 3; ++i) {  // events 1 to 6: waiting, cancelled
    const auto id = create(s, solo("duel", 40 + i, 1000 + 1000 * i));
    REQUIRE(del(s, "/api/tickets/" + id, test_token)->status == 200);
  }
  const json before = s.get_json("/api/events?after=0", test_token);
  const std::uint64_t last = before["last_seq"];
  CHECK(last >= 6);
  // The journal's prune (every 10 s) deletes the events past the retention.
  const auto deadline = std::chrono::steady_clock::now() + 40s;
  for (;;) {
    SQLite::Database db(s.dir().file("mm.db"), SQLite::OPEN_READONLY);
    if (db.execAndGet("SELECT count(*) FROM session_ticket_events").getInt() == 0) break;
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(200ms);  // polls another process's file: no reply to await
  }
  REQUIRE(s.stop() == 0);
  s.restart(json::object());
  const json again = s.get_json("/api/events?after=0", test_token);
  CHECK(again["last_seq"].get<std::uint64_t>() == last);
  // A follower resuming after the last event it saw gets the next one.
  const auto next = create(s, solo("duel", 50, 5000));
  const json resumed = s.get_json("/api/events?after=" + std::to_string(last), test_token);
  REQUIRE(resumed["events"].size() == 1);
  CHECK(resumed["events"][0]["ticket"] == next);
  CHECK(resumed["events"][0]["seq"].get<std::uint64_t>() == last + 1);
  CHECK(resumed["missed"] == false);
}

TEST_CASE("event WebSockets: no token 401, another site's page 403, per-token cap 429",
          "[server][session][events]") {
  json patch = session_patch();
  patch["sessions"]["event_connections_per_credential"] = 2;
  live_server s(patch, 100);
  const auto refused = [&](event_connect c) {
    try {
      event_client e(c);
      return 0;
    } catch (const mm::client::event_client_error& e) {
      return e.http_status;
    }
  };
  CHECK(refused(as(s, "")) == 401);
  event_connect foreign = as(s, test_token);
  foreign.origin = "http://evil.example";
  CHECK(refused(foreign) == 403);
  event_connect bad_queues = as(s, test_token);
  bad_queues.queues = ",";
  CHECK(refused(bad_queues) == 400);
  event_client one(as(s, test_token));
  event_client two(as(s, test_token));
  CHECK(refused(as(s, test_token)) == 429);
  CHECK(refused(as(s, other_test_token)) == 0);  // another token has its own share
  // The server serves on, and counts its followers.
  CHECK(s.get_json("/api/queues", view_token)["queues"].size() == 2);
  // (The other token's connection closes on the server a moment after its client.)
  std::string metrics;
  for (int i = 0; i < 100; ++i) {
    const auto r = s.get("/metrics", view_token);
    REQUIRE(r);
    metrics = r->body;
    if (metrics.find("mm_session_event_followers 2") != std::string::npos) break;
    std::this_thread::sleep_for(50ms);  // polling a process
  }
  CHECK(metrics.find("mm_http_websockets_open 2") != std::string::npos);
  CHECK(metrics.find("mm_session_event_followers 2") != std::string::npos);
}

TEST_CASE("mmctl ticket watch follows a ticket to its match", "[server][mmctl][events]") {
  live_server s(session_patch(), 100);
  const auto a = create(s, solo("duel", 1, 1500));
  auto watch = std::async(std::launch::async, [&] {
    return run_binary({MMCTL_BINARY, "--url", s.url(), "--token", test_token, "ticket", "watch", a,
                       "--after", "0"});
  });
  create(s, solo("duel", 2, 1505), other_test_token);
  const auto [status, out] = watch.get();
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("\"state\":\"waiting\"") != std::string::npos);
  CHECK(out.find("\"state\":\"matched\"") != std::string::npos);
}
