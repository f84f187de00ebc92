// The RESP port of the real matchmakerd through hiredis (C): the same
// identities, roles, validation and owners as over HTTP; a find, tickets to
// their match and a resumed event read; pipelining in order; subscriptions
// pushed in RESP2 and RESP3; protocol errors close the connection.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loopback_socket.hpp"
#include "resp_test_support.hpp"

using namespace mm::test;
using namespace std::chrono_literals;

namespace {

const std::string find_body = R"({"attacker_id": 77, "mmr": 1500, "attributes": [1, 0, 0, 0]})";

std::string ticket_text(const char* queue, std::uint64_t id, double mmr) {
  return solo(queue, id, mmr).dump();
}

// The stream entries of an MM.XREAD reply: (id, the event's JSON).
std::vector<std::pair<std::string, json>> entries(const redisReply* r) {
  std::vector<std::pair<std::string, json>> out;
  if (r->type != REDIS_REPLY_ARRAY) return out;
  REQUIRE(r->elements == 1);
  const redisReply* stream = r->element[0];
  REQUIRE(stream->elements == 2);
  CHECK(std::string(stream->element[0]->str) == "tickets");
  const redisReply* list = stream->element[1];
  for (std::size_t i = 0; i < list->elements; ++i) {
    const redisReply* e = list->element[i];
    const redisReply* fields = e->element[1];
    json j;
    for (std::size_t f = 0; f + 1 < fields->elements; f += 2)
      if (std::string(fields->element[f]->str) == "json")
        j = json::parse(std::string(fields->element[f + 1]->str, fields->element[f + 1]->len));
    out.emplace_back(e->element[0]->str, j);
  }
  return out;
}

// Bytes from a plain socket until `want` is among them or `wait` passed.
std::string read_until(int fd, const std::string& want, std::chrono::milliseconds wait) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  timeval tv{0, 100'000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  while (got.find(want) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    char buf[4096];
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;
    if (n > 0) got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

int plain_socket(std::uint16_t port) {
  const int fd = loopback_socket(port);
  REQUIRE(fd >= 0);
  return fd;
}

}  // namespace

TEST_CASE("the RESP port through hiredis: a find, tickets to their match, a resumed event read",
          "[server][resp]") {
  live_server s(resp_patch());
  REQUIRE(s.resp_port() != 0);
  s.wait_until_filled();
  resp_connection c(s.resp_port());

  // Nothing but AUTH, HELLO, PING and QUIT before AUTH.
  CHECK(std::string(c.run({"PING"})->str) == "PONG");
  CHECK(c.error_of({"MM.FIND", find_body}).rfind("NOAUTH", 0) == 0);
  CHECK(c.error_of({"AUTH", "not-a-token"}).rfind("WRONGPASS", 0) == 0);
  CHECK(std::string(c.run({"AUTH", test_token})->str) == "OK");

  // A find, answered as HTTP answers it.
  const json found = c.json_of({"MM.FIND", find_body});
  CHECK((found["result"] == "Success" || found["result"] == "NoneFound" ||
         found["result"] == "FakeOpponent"));
  CHECK(found.contains("players_tested"));
  // The same validation and words as HTTP: the field is named.
  const std::string bad =
      R"({"queries": [{"attacker_id": 1, "mmr": 1500}, {"attacker_id": 2, "mmr": "x"}]})";
  const json http_error = s.post_json("/api/query", json::parse(bad), test_token, 400);
  const std::string resp_error = c.error_of({"MM.FIND", bad});
  CHECK(resp_error == "ERR " + http_error["error"].get<std::string>());
  CHECK(resp_error.find("queries[1]: mmr must be a number") != std::string::npos);
  CHECK(c.error_of({"MM.FIND"}).rfind("ERR wrong number of arguments", 0) == 0);
  CHECK(c.error_of({"MM.NOSUCH"}).rfind("ERR unknown command", 0) == 0);

  // Pipelined: many commands in one write, the replies in the order asked.
  for (int i = 0; i < 200; ++i) {
    c.append({"MM.FIND", find_body});
    c.append({"PING", std::to_string(i)});
  }
  for (int i = 0; i < 200; ++i) {
    CHECK(c.next()->type == REDIS_REPLY_STRING);
    auto pong = c.next();
    REQUIRE(pong->type == REDIS_REPLY_STRING);
    CHECK(std::string(pong->str) == std::to_string(i));
  }

  // Two tickets of the duel queue, matched; the caller follows one to its match.
  const json a = c.json_of({"MM.TICKET.CREATE", ticket_text("duel", 1, 1500)});
  CHECK(a["state"] == "waiting");
  const json b = c.json_of({"MM.TICKET.CREATE", ticket_text("duel", 2, 1520)});
  CHECK(b["state"] == "waiting");
  json state = json::object();
  for (int i = 0; i < 10 && state.value("state", "") != "matched"; ++i)
    state = c.json_of({"MM.TICKET.GET", a["ticket"], "WAIT", "2"});
  CHECK(state["state"] == "matched");
  CHECK(state["match"]["tickets"].size() == 2);

  // The events from the start, then resumed after the last id seen: only
  // what came later, with a blocking read that waits for it.
  const auto first = entries(c.run({"MM.XREAD", "COUNT", "100", "STREAMS", "tickets", "0"}).get());
  REQUIRE(first.size() == 4);  // two waiting, two matched
  CHECK(first.front().second["state"] == "waiting");
  const std::string last = first.back().first;
  CHECK(last == std::to_string(first.back().second["seq"].get<std::uint64_t>()) + "-0");
  auto nothing = c.run({"MM.XREAD", "STREAMS", "tickets", last});
  CHECK(nothing->type == REDIS_REPLY_NIL);
  const json d = c.json_of({"MM.TICKET.CREATE", ticket_text("duel", 3, 1700)});
  const auto later =
      entries(c.run({"MM.XREAD", "BLOCK", "3000", "STREAMS", "tickets", last}).get());
  REQUIRE(later.size() == 1);
  CHECK(later[0].second["ticket"] == d["ticket"]);
  CHECK(later[0].second["seq"].get<std::uint64_t>() ==
        first.back().second["seq"].get<std::uint64_t>() + 1);
  CHECK(c.error_of({"MM.XREAD", "STREAMS", "other", "0"}).rfind("ERR", 0) == 0);
  CHECK(c.error_of({"MM.XREAD", "STREAMS", "tickets", "x-y"}).rfind("ERR Invalid stream ID", 0) ==
        0);

  // Owners and roles as over HTTP: another token's ticket does not exist
  // for it; a view token may not create tickets.
  resp_connection other(s.resp_port());
  other.run({"AUTH", other_test_token});
  CHECK(other.error_of({"MM.TICKET.GET", a["ticket"]}).rfind("NOTFOUND", 0) == 0);
  CHECK(other.error_of({"MM.TICKET.CANCEL", d["ticket"]}).rfind("NOTFOUND", 0) == 0);
  resp_connection viewer(s.resp_port());
  viewer.run({"AUTH", "viewer", view_token});  // AUTH username token
  CHECK(viewer.error_of({"MM.TICKET.CREATE", ticket_text("duel", 9, 1500)}).rfind("NOPERM", 0) ==
        0);
  CHECK(viewer.json_of({"MM.MATCHMAKERS"})["matchmakers"].size() == 2);
  // The admin's generic door to any route.
  resp_connection admin(s.resp_port());
  admin.run({"AUTH", admin_token});
  CHECK(admin.json_of({"MM.CALL", "GET", "/api/queues"})["queues"].size() == 2);
  CHECK(admin.json_of({"MM.TICKET.CANCEL", d["ticket"]})["cancelled"] == true);
  CHECK(admin.error_of({"MM.CALL", "GET", "/api/nothing"}).rfind("NOTFOUND", 0) == 0);
  // Its target is read as HTTP reads one: the query percent-decoded.
  CHECK(admin.json_of({"MM.CALL", "GET", "/api/players?after=0&limit=%33"})["players"].size() == 3);
  CHECK(admin.error_of({"MM.CALL", "GET", "/api/players?limit=x%20y"}).find("'limit'") !=
        std::string::npos);

  // The command table.
  auto docs = c.run({"COMMAND", "DOCS", "mm.find"});
  REQUIRE(docs->type == REDIS_REPLY_ARRAY);
  REQUIRE(docs->elements == 2);
  CHECK(std::string(docs->element[0]->str) == "mm.find");
  CHECK(c.run({"COMMAND", "COUNT"})->integer >= 25);

  // The metrics count the port.
  const std::string metrics = s.get("/metrics", view_token)->body;
  CHECK(metrics.find("mm_resp_commands_total") != std::string::npos);
}

TEST_CASE("RESP subscriptions push each event: RESP2 arrays, RESP3 push frames",
          "[server][resp][events]") {
  live_server s(resp_patch());
  // RESP2 through hiredis: the subscribed connection reads messages as
  // Redis's own subscribers do.
  resp_connection sub(s.resp_port());
  sub.run({"AUTH", admin_token});
  auto confirmed = sub.run({"MM.SUBSCRIBE", "QUEUES", "duel"});
  REQUIRE(confirmed->type == REDIS_REPLY_ARRAY);
  CHECK(std::string(confirmed->element[0]->str) == "subscribe");
  auto hello_message = sub.next();  // {"type": "hello", ...} first, at once
  REQUIRE(hello_message->type == REDIS_REPLY_ARRAY);
  CHECK(std::string(hello_message->element[2]->str).find("\"hello\"") != std::string::npos);
  CHECK(sub.error_of({"MM.FIND", find_body}).find("only MM.UNSUBSCRIBE") != std::string::npos);
  // RESP3 on a plain socket: HELLO 3, then push frames ('>').
  const int fd = plain_socket(s.resp_port());
  const std::string hello = "HELLO 3 AUTH default " + admin_token + "\r\nMM.SUBSCRIBE\r\n";
  ::send(fd, hello.data(), hello.size(), 0);
  CHECK(read_until(fd, "\"type\":\"hello\"", 5s).find(">3\r\n$7\r\nmessage") != std::string::npos);

  create(s, solo("duel", 1, 1500));
  create(s, solo("duel", 2, 1510));
  std::vector<json> seen;
  while (seen.size() < 4) {  // two waiting, two matched
    auto m = sub.next();
    REQUIRE(m->type == REDIS_REPLY_ARRAY);
    REQUIRE(m->elements == 3);
    CHECK(std::string(m->element[0]->str) == "message");
    seen.push_back(json::parse(std::string(m->element[2]->str, m->element[2]->len)));
  }
  CHECK(seen[0]["state"] == "waiting");
  CHECK(seen[3]["state"] == "matched");
  const std::string pushed = read_until(fd, "\"state\":\"matched\"", 5s);
  CHECK(pushed.find("\"state\":\"matched\"") != std::string::npos);
  CHECK(pushed.find(">3\r\n") != std::string::npos);
  ::close(fd);
  auto gone = sub.run({"MM.UNSUBSCRIBE"});
  CHECK(std::string(gone->element[0]->str) == "unsubscribe");
  CHECK(std::string(sub.run({"PING"})->str) == "PONG");
}

TEST_CASE("a RESP protocol error is answered once and closes that connection only",
          "[server][resp]") {
  live_server s(resp_patch());
  resp_connection ok(s.resp_port());
  ok.run({"AUTH", test_token});
  for (const std::string& bad :
       {std::string("*1\r\n$abc\r\n"), std::string("*1\r\n*1\r\n"),
        std::string("*1\r\n$2147483648\r\n"), std::string("POST / HTTP/1.1\r\nHost: x\r\n\r\n")}) {
    const int fd = plain_socket(s.resp_port());
    ::send(fd, bad.data(), bad.size(), MSG_NOSIGNAL);
    const std::string got = read_until(fd, "\r\n", 5s);
    INFO(bad);
    CHECK(got.rfind("-ERR Protocol error", 0) == 0);
    char byte;
    CHECK(::recv(fd, &byte, 1, 0) == 0);  // closed
    ::close(fd);
  }
  // Before AUTH a client sends no large argument (its sender is not known).
  const int fd = plain_socket(s.resp_port());
  const std::string big = "*2\r\n$4\r\nAUTH\r\n$5000\r\n";
  ::send(fd, big.data(), big.size(), MSG_NOSIGNAL);
  CHECK(read_until(fd, "\r\n", 5s).rfind("-ERR Protocol error: invalid bulk length", 0) == 0);
  ::close(fd);
  CHECK(std::string(ok.run({"PING"})->str) == "PONG");
}

TEST_CASE("a batch of tickets through the RESP port", "[server][session][resp]") {
  live_server s(resp_patch(), 100);
  REQUIRE(s.resp_port() != 0);
  resp_connection c(s.resp_port());
  CHECK(std::string(c.run({"AUTH", test_token})->str) == "OK");
  const json answer = c.json_of(
      {"MM.TICKET.CREATE",
       json{{"tickets", json::array({solo("duel", 1, 1500), solo("duel", 1, 1510)})}}.dump()});
  REQUIRE(answer["results"].size() == 2);
  CHECK(answer["results"][0]["state"] == "waiting");
  CHECK(answer["results"][1]["status"] == 409);
}
