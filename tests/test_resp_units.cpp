// The RESP port's parts in process: the reader's bounds and its answer for
// every prefix; the server's ordering of replies answered out of order, its
// caps and its time limits, with toy commands; the single query's fast path
// against the JSON tree over random and mutated bodies.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <random>
#include <thread>

#include "loopback_socket.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "query_text.hpp"
#include "resp_commands.hpp"
#include "resp_protocol.hpp"
#include "resp_server.hpp"

using namespace mm;
using namespace mm::server;
using namespace std::chrono_literals;

namespace {

resp_parse parse(std::string_view text, std::vector<std::string>& args,
                 resp_read_limits limits = {}) {
  return read_command(text, limits, args);
}

int connect_to(std::uint16_t port) {
  const int fd = test::loopback_socket(port);
  REQUIRE(fd >= 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

std::string read_exactly(int fd, std::size_t n) {
  std::string got;
  char buf[4096];
  while (got.size() < n) {
    const auto k = ::recv(fd, buf, std::min(sizeof buf, n - got.size()), 0);
    if (k <= 0) break;
    got.append(buf, static_cast<std::size_t>(k));
  }
  return got;
}

// Toy commands: "NOW x" answers x at once; "LATER ms x" answers x from
// another thread after ms.
resp_handlers toy() {
  resp_handlers h;
  h.command = [](resp_client&, std::vector<std::string>& args, const resp_reply& reply) {
    std::string out;
    if (args[0] == "NOW") {
      resp::bulk(out, args[1]);
      return reply(out);
    }
    std::thread([reply, ms = std::stoi(args[1]), x = args[2]] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      std::string o;
      resp::bulk(o, x);
      reply(o);
    }).detach();
  };
  return h;
}

}  // namespace

TEST_CASE("the RESP reader takes commands whole, in either form, and names what it refuses",
          "[resp]") {
  std::vector<std::string> args;
  auto p = parse("*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n*1", args);
  CHECK(p.result == resp_parse::status::complete);
  CHECK(p.bytes == 22);
  CHECK(args == std::vector<std::string>{"PING", "hi"});
  p = parse("ECHO  a\tb \r\n", args);
  CHECK(p.result == resp_parse::status::complete);
  CHECK(p.inline_form);
  CHECK(args == std::vector<std::string>{"ECHO", "a", "b"});
  // A bulk's length is known from its header: the reader says how much it needs.
  p = parse("*1\r\n$10\r\nab", args);
  CHECK(p.result == resp_parse::status::incomplete);
  CHECK(p.bytes == 4 + 5 + 12);
  // Every bound is decided from a header, before anything is kept.
  const resp_read_limits small{4, 16, 32};
  CHECK(parse("*1\r\n$2147483648\r\n", args, small).error.find("invalid bulk length") == 0);
  CHECK(parse("*5\r\n", args, small).error.find("invalid multibulk length") == 0);
  CHECK(parse("*1\r\n*1\r\n", args, small).error == "expected '$', got '*'");
  CHECK(parse("*1\r\n$-1\r\n", args, small).result == resp_parse::status::error);
  CHECK(parse("*1\r\n$3\r\nabcX\n", args, small).error == "bulk not followed by CRLF");
  CHECK(parse(std::string(40, 'a'), args, small).error == "too big inline request");
  CHECK(parse("*99999999999999999999999\r\n", args, small).result == resp_parse::status::error);
  CHECK(parse("*1\r\n$1x\r\n", args, small).error == "invalid bulk length");
}

TEST_CASE("every prefix of a command is incomplete, never an error nor another command", "[resp]") {
  std::mt19937_64 r(7);
  std::vector<std::string> args, again;
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> sent(1 + r() % 5);
    for (auto& a : sent) {
      a.resize(r() % 40);
      for (auto& c : a) c = static_cast<char>(r() % 256);  // binary-safe, CRLF included
    }
    std::string text;
    resp::array(text, sent.size());
    for (const auto& a : sent) resp::bulk(text, a);
    for (std::size_t cut = 0; cut < text.size(); ++cut)
      REQUIRE(parse(std::string_view(text).substr(0, cut), again).result ==
              resp_parse::status::incomplete);
    const auto p = parse(text + "*1\r\n", args);
    REQUIRE(p.result == resp_parse::status::complete);
    REQUIRE(p.bytes == text.size());
    REQUIRE(args == sent);
  }
}

TEST_CASE("replies answered out of order leave in the order asked, many per write", "[resp]") {
  resp_server srv({}, toy());
  const auto port = srv.listen("127.0.0.1", 0);
  const int fd = connect_to(port);
  std::string cmds, want;
  for (int i = 0; i < 50; ++i) {
    const std::string x = std::to_string(i);
    if (i % 3 == 0)
      cmds += "LATER " + std::to_string(30 - i % 30) + " " + x + "\r\n";
    else
      cmds += "NOW " + x + "\r\n";
    resp::bulk(want, x);
  }
  ::send(fd, cmds.data(), cmds.size(), 0);
  CHECK(read_exactly(fd, want.size()) == want);
  ::close(fd);
  CHECK(srv.stats().commands.load() == 50);
}

TEST_CASE("the RESP server's caps: a held pipeline, evictions, idle and slow commands", "[resp]") {
  resp_settings s;
  s.max_pipeline = 4;
  s.max_connections = 3;
  s.idle_timeout = 300ms;
  s.command_timeout = 300ms;
  resp_server srv(s, toy());
  const auto port = srv.listen("127.0.0.1", 0);
  // A pipeline past max_pipeline is read as replies are sent: all answered.
  const int fd = connect_to(port);
  std::string cmds, want;
  for (int i = 0; i < 20; ++i) {
    cmds += "LATER 5 " + std::to_string(i) + "\r\n";
    resp::bulk(want, std::to_string(i));
  }
  ::send(fd, cmds.data(), cmds.size(), 0);
  CHECK(read_exactly(fd, want.size()) == want);
  // At the cap, a new connection takes the place of the quietest one.
  const int b = connect_to(port), c = connect_to(port);
  std::this_thread::sleep_for(50ms);
  const int d = connect_to(port);
  const std::string ping = "NOW x\r\n";
  ::send(d, ping.data(), ping.size(), 0);
  CHECK(read_exactly(d, 7) == "$1\r\nx\r\n");
  CHECK(srv.stats().evicted.load() == 1);
  char byte;
  CHECK(::recv(fd, &byte, 1, 0) == 0);  // `fd` was quiet longest: closed
  // A command begun and never finished, and an idle connection, are closed.
  const std::string half = "*2\r\n$3\r\nNOW\r\n$5\r\nab";
  ::send(b, half.data(), half.size(), 0);
  std::this_thread::sleep_for(900ms);
  CHECK(::recv(b, &byte, 1, 0) == 0);
  CHECK(::recv(c, &byte, 1, 0) == 0);
  CHECK(srv.stats().timed_out.load() >= 2);
  for (int x : {fd, b, c, d}) ::close(x);
}

TEST_CASE("a failed route's HTTP status maps to one RESP error code", "[resp]") {
  http_response res;
  res.status = 403;
  res.body = R"({"error": "this needs the 'admin' role"})";
  CHECK(resp_answer(res) == "-NOPERM this needs the 'admin' role\r\n");
  res.status = 307;
  res.body = R"({"error": "served by node b"})";
  res.headers.emplace_back("Location", "http://b:8080/api/tickets");
  CHECK(resp_answer(res) == "-REDIRECT http://b:8080/api/tickets served by node b\r\n");
  res.status = 400;
  res.body = "{\"error\": \"two\\nlines\"}";
  CHECK(resp_answer(res) == "-ERR two lines\r\n");
  CHECK(std::string(resp_error_code(401)) == "NOAUTH");
  CHECK(std::string(resp_error_code(404)) == "NOTFOUND");
  CHECK(std::string(resp_error_code(503)) == "TRYAGAIN");
  res.status = 200;
  res.body = "{}";
  CHECK(resp_answer(res) == "$2\r\n{}\r\n");
}

TEST_CASE("the plain query path answers only what the JSON tree answers, value for value",
          "[resp][query]") {
  const generic_profile_config profile = demo_profile_config();
  std::mt19937_64 r(11);
  const char* pieces[] = {"{",
                          "}",
                          "[",
                          "]",
                          ",",
                          ":",
                          " ",
                          "\"attacker_id\"",
                          "\"mmr\"",
                          "\"attributes\"",
                          "\"retries\"",
                          "\"excluded_ids\"",
                          "\"region\"",
                          "\"guild\"",
                          "0",
                          "1",
                          "42",
                          "-3",
                          "-0",
                          "-0.0",
                          "-0e0",
                          "-9223372036854775809",
                          "1.5",
                          "1e3",
                          "1e400",
                          "01",
                          "18446744073709551616",
                          "4294967296",
                          "\"x\"",
                          "null",
                          "true",
                          "\"max_retries\"",
                          "\\u0041"};
  int plain = 0;
  // The signs of zero: an integer literal is the tree's integer 0 (+0), a
  // fraction or an exponent its double (-0).
  const char* zeros[] = {"-0", "0", "-0.0", "-0e0", "-0E+0", "0.0"};
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    if (round < static_cast<int>(std::size(zeros))) {
      text = std::string("{\"attacker_id\": 7, \"mmr\": ") + zeros[round] + "}";
    } else if (round % 2 == 0) {
      // A well-formed query, each field present or not, in a random order.
      std::vector<std::string> fields{
          "\"attacker_id\": " + std::to_string(1 + r() % 1000),
          "\"mmr\": " + std::to_string(r() % 3000) + "." + std::to_string(r() % 100)};
      if (r() % 2) fields.push_back("\"attributes\": [" + std::to_string(r() % 9) + ", 2]");
      if (r() % 2)
        fields.push_back("\"attributes\": {\"region\": " + std::to_string(r() % 9) + "}");
      if (r() % 2) fields.push_back("\"retries\": " + std::to_string(r() % 9));
      if (r() % 2) fields.push_back("\"excluded_ids\": [1, " + std::to_string(1 + r() % 9) + "]");
      std::shuffle(fields.begin(), fields.end(), r);
      text = "{";
      for (std::size_t i = 0; i < fields.size(); ++i) text += (i ? ", " : "") + fields[i];
      text += "}";
      // ...then mutated: a piece replaced, inserted or cut.
      if (r() % 2 && !text.empty()) {
        const std::size_t at = r() % text.size();
        const std::string piece = pieces[r() % std::size(pieces)];
        switch (r() % 3) {
          case 0:
            text.replace(at, 1 + r() % 4, piece);
            break;
          case 1:
            text.insert(at, piece);
            break;
          default:
            text.erase(at, 1 + r() % 6);
        }
      }
    } else {
      for (int k = 0, n = 1 + static_cast<int>(r() % 12); k < n; ++k)
        text += pieces[r() % std::size(pieces)];
    }
    const auto fast = read_plain_query(text, profile);
    if (round < static_cast<int>(std::size(zeros))) REQUIRE(fast);
    if (!fast) continue;
    ++plain;
    INFO(text);
    query_body tree;
    REQUIRE_NOTHROW(tree = read_query(parse_body(text), profile, false));
    CHECK(fast->request.query.attacker == tree.request.query.attacker);
    CHECK(std::memcmp(&fast->request.query.mmr, &tree.request.query.mmr, sizeof(float)) == 0);
    CHECK(fast->request.query.attributes == tree.request.query.attributes);
    CHECK(fast->request.num_retries == tree.request.num_retries);
    CHECK(fast->request.excluded_player_ids == tree.request.excluded_player_ids);
  }
  CHECK(plain > 3000);  // the fast path is taken by what clients send
}

TEST_CASE("the plain reply text is the JSON tree's text, byte for byte", "[resp][query]") {
  const generic_profile_config profile = demo_profile_config();
  std::mt19937_64 r(5);
  for (int round = 0; round < 5000; ++round) {
    match_reply<generic_model> m;
    m.type = static_cast<match_type>(r() % 3);
    m.best_candidate_id = r() % 2 ? r() : r() % 1000;
    m.has_model = r() % 2;
    if (m.has_model) {
      m.model = generic_model(r() % 100000, std::uniform_real_distribution<float>(-5000, 5000)(r));
      for (std::size_t i = 0; i < profile.attributes.size(); ++i)
        m.model.attributes[i] = static_cast<std::uint32_t>(r());
    }
    m.quality = round % 7 == 0 ? 0.0f : std::uniform_real_distribution<float>(-1e6, 1e6)(r);
    m.players_tested = static_cast<std::uint32_t>(r());
    const auto text = reply_text(m, profile);
    REQUIRE(text);
    REQUIRE(*text == reply_json(m, profile).dump(-1, ' ', false, json::error_handler_t::replace));
  }
  match_reply<generic_model> failed;
  failed.error = "bad";
  CHECK_FALSE(reply_text(failed, profile));
}
