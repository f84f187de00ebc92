// matchmakerd's configuration, JSON codec and access checks, in process: the
// integration tests start the real binary for the same behaviour end to end;
// these pin each rule down without a process, a port or a wait.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "access.hpp"
#include "json_codec.hpp"
#include "mm/engine/stable_hash.hpp"
#include "mm/session/public_id.hpp"
#include "mm/testing/temp_dir.hpp"
#include "server_config.hpp"
#include "session_config.hpp"

using namespace mm;
using namespace mm::server;

namespace {
command_line parse(std::vector<std::string> args) {
  args.insert(args.begin(), "matchmakerd");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

// The message of the config_error `f` throws ("" when it throws none).
template <class F>
std::string config_problem(F&& f) {
  try {
    f();
  } catch (const config_error& e) {
    CHECK(e.code() == errc::invalid_config);
    return e.what();
  }
  return "";
}

template <class F>
std::string bad_request_problem(F&& f) {
  try {
    f();
  } catch (const bad_request& e) {
    return e.what();
  }
  return "";
}

http_request request_with(std::vector<std::pair<std::string, std::string>> headers) {
  http_request r;
  r.method = "GET";
  r.path = "/api/matchmakers";
  r.headers = std::move(headers);
  return r;
}
}  // namespace

TEST_CASE("config: flags set keys, and a bad key or value names itself", "[server][config]") {
  const auto c = parse({"--database.path", "x.db", "--instances=3", "--http.port", "0"});
  CHECK(c.config.database_path == "x.db");
  CHECK(c.config.instances == 3);
  CHECK(c.config.http_port == 0);
  CHECK(config_problem([] { parse({"--no.such.key=1"}); }).find("no.such.key") !=
        std::string::npos);
  CHECK(config_problem([] { parse({"--instances=lots"}); }).find("instances") != std::string::npos);
  CHECK(config_problem([] { parse({"--instances=1000"}); }).find("instances") != std::string::npos);
  CHECK(config_problem([] { parse({"--instances"}); }).find("needs a value") != std::string::npos);
  CHECK(config_problem([] { parse({"stray"}); }).find("stray") != std::string::npos);
  CHECK(parse({"--help"}).help);
}

TEST_CASE("config: no token means loopback only and off loopback the actor port needs TLS",
          "[server][config]") {
  CHECK(config_problem([] { parse({"--http.host=0.0.0.0"}); }).find("token") != std::string::npos);
  CHECK(config_problem([] { parse({"--actor.host=0.0.0.0"}); }).find("TLS") != std::string::npos);
  CHECK(config_problem([] { parse({"--actor.tls.certificate=a.pem"}); }).find("all three") !=
        std::string::npos);
  // The RESP port: the same rule as HTTP's, when it is open.
  CHECK(config_problem([] {
          parse({"--resp.host=0.0.0.0", "--resp.port=6380"});
        }).find("refusing to serve the RESP port on '0.0.0.0'") != std::string::npos);
  CHECK(parse({"--resp.host=0.0.0.0", "--resp.port=-1"}).config.effective_resp_port() == -1);
  CHECK(parse({"--database.path=x.db"}).config.effective_resp_port() == -1);  // auto: off
  CHECK(parse({}).config.effective_resp_port() == 6380);                      // auto: the demo's
  CHECK(config_problem([] { parse({"--resp.idle_timeout=0s"}); }).find("resp.idle_timeout") !=
        std::string::npos);
}

TEST_CASE("config: the plain actor port's limits, with their floors", "[server][config]") {
  const auto c = parse({"--actor.max_frame_bytes=65536", "--actor.max_connections=3",
                        "--actor.handshake_timeout=1500ms"});
  CHECK(c.config.actor_limits.max_frame_bytes == 65536);
  CHECK(c.config.actor_limits.max_connections == 3);
  CHECK(c.config.actor_limits.handshake_timeout == std::chrono::milliseconds(1500));
  const auto d = parse({});
  CHECK(d.config.actor_limits.max_frame_bytes == 16u << 20);
  CHECK(d.config.actor_limits.max_connections == 64);
  CHECK(d.config.actor_limits.handshake_timeout == std::chrono::seconds(10));
  // A frame limit under 4 KiB would refuse legitimate handshakes.
  CHECK(config_problem([] {
          parse({"--actor.max_frame_bytes=100"});
        }).find("actor.max_frame_bytes") != std::string::npos);
  CHECK(config_problem([] {
          parse({"--actor.max_connections=0"});
        }).find("actor.max_connections") != std::string::npos);
  CHECK(config_problem([] {
          parse({"--actor.handshake_timeout=0"});
        }).find("actor.handshake_timeout") != std::string::npos);
}

TEST_CASE("config: how idle worker threads wait", "[server][config]") {
  CHECK(parse({}).config.worker_idle == actors::worker_idle::sleep);
  CHECK(parse({"--actor.worker_idle=poll"}).config.worker_idle == actors::worker_idle::poll);
  CHECK(config_problem([] { parse({"--actor.worker_idle=spin"}); }).find("actor.worker_idle") !=
        std::string::npos);
}

TEST_CASE("config: a file's keys, flags over them, tokens never printed", "[server][config]") {
  mm::test::temp_dir dir;
  const std::string path = dir.file("c.json");
  std::ofstream(path) << R"({"instances": 4, "http": {"host": "0.0.0.0", "port": 9100},
                           "tokens": [{"token": "s3cret-admin-token", "role": "admin"}]})";
  const auto c = parse({"--config", path, "--http.port=9200"});
  CHECK(c.config.instances == 4);
  CHECK(c.config.http_port == 9200);  // the flag wins over the file
  REQUIRE(c.config.tokens.size() == 1);
  CHECK(c.config.tokens[0].granted == role::admin);
  CHECK(describe(c.config).find("s3cret") == std::string::npos);

  std::ofstream(path) << R"({"instances": 2, "htp": {"port": 1}})";
  CHECK(config_problem([&] { parse({"--config", path}); }).find("htp") != std::string::npos);
  std::ofstream(path) << "{not json";
  CHECK(config_problem([&] {
          parse({"--config", path});
        }).find("not valid JSON") != std::string::npos);
}

TEST_CASE("json codec: request bodies are read strictly, naming the field", "[server][json]") {
  const auto profile = demo_profile_config();
  const auto q = read_query(json::parse(R"({"attacker_id": 7, "mmr": 1500, "retries": 2,
                                           "excluded_ids": [8, 9]})"),
                            profile, false);
  CHECK(q.request.query.attacker == 7);
  CHECK(q.request.query.mmr == 1500);
  CHECK(q.request.num_retries == 2);
  CHECK(q.request.excluded_player_ids == std::vector<player_id>{8, 9});

  const auto problem = [&](const char* body) {
    return bad_request_problem([&] { read_query(json::parse(body), profile, false); });
  };
  CHECK(problem(R"({"mmr": 1500})").find("attacker_id") != std::string::npos);
  CHECK(problem(R"({"attacker_id": "seven", "mmr": 1})").find("attacker_id") != std::string::npos);
  CHECK(problem(R"({"attacker_id": 7, "mmr": 1, "colour": 3})").find("colour") !=
        std::string::npos);
  CHECK(problem(R"({"attacker_id": 7, "mmr": 1, "excluded_ids": [1, -2]})").find("excluded_ids") !=
        std::string::npos);
  CHECK(problem(R"({"attacker_id": 7, "mmr": 1, "max_retries": 3})").find("max_retries") !=
        std::string::npos);  // only where the route allows it

  const player_row row =
      read_row(json::parse(R"({"id": 5, "mmr": 1200.5, "is_bot": true})"), profile, "players[0]");
  CHECK(row.id == 5);
  CHECK(row.mmr == 1200.5);
  CHECK(row.is_bot);
  CHECK(bad_request_problem([&] {
          read_row(json::parse(R"({"id": 5})"), profile, "players[3]");
        }).find("players[3]") != std::string::npos);
}

TEST_CASE("json codec: bodies are bounded in depth and refused with the parser's words",
          "[server][json]") {
  std::string deep;
  for (std::size_t i = 0; i <= max_json_depth; ++i) deep += "[";
  for (std::size_t i = 0; i <= max_json_depth; ++i) deep += "]";
  CHECK_FALSE(bad_request_problem([&] { parse_body(deep); }).empty());
  std::string fine;
  for (std::size_t i = 0; i < max_json_depth; ++i) fine += "[";
  for (std::size_t i = 0; i < max_json_depth; ++i) fine += "]";
  CHECK(bad_request_problem([&] { parse_body(fine); }).empty());
  CHECK_FALSE(bad_request_problem([] { parse_body("{\"a\": "); }).empty());
  CHECK(describe(json(std::string(10'000, 'x'))).size() < 200);  // never the whole value
}

TEST_CASE("access: roles from bearer tokens, compared whole", "[server][auth]") {
  server_config open_config;
  const actors::identity_book no_tokens({}, {}, role::test);
  const access_rules open{open_config, no_tokens};
  CHECK(caller_role(open, request_with({})) == role::admin);  // no token: loopback only

  server_config config;
  config.tokens = {{"view-token-0123", "viewer", role::view},
                   {"test-token-4567", "game-a", role::test},
                   {"admin-token-89ab", "ops", role::admin}};
  actors::identity_book identities(config.tokens, {}, role::test);
  const access_rules c{config, identities};
  CHECK(caller_role(c, request_with({})) == role::none);
  CHECK(caller_role(c, request_with({{"Authorization", "Bearer view-token-0123"}})) == role::view);
  CHECK(caller_role(c, request_with({{"authorization", "Bearer test-token-4567"}})) == role::test);
  CHECK(caller_role(c, request_with({{"Authorization", "Bearer admin-token-89ab"}})) ==
        role::admin);
  CHECK(caller_role(c, request_with({{"Authorization", "Bearer admin-token-89a"}})) ==
        role::none);  // a prefix of a token is not the token
  CHECK(caller_role(c, request_with({{"Authorization", "Bearer admin-token-89abc"}})) ==
        role::none);
  CHECK(caller_role(c, request_with({{"Authorization", "admin-token-89ab"}})) == role::none);
  // What a caller owns is its token's name: nothing derived from the secret.
  CHECK(caller_credential(c, request_with({{"Authorization", "Bearer test-token-4567"}})) ==
        "game-a");
  CHECK(caller_credential(open, request_with({})) == "open");
  // A reload's tokens are in force at once; the old secret grants nothing.
  identities.replace_tokens({{"test-token-rotated", "game-a", role::test}});
  CHECK(caller_role(c, request_with({{"Authorization", "Bearer test-token-4567"}})) == role::none);
  CHECK(caller_credential(c, request_with({{"Authorization", "Bearer test-token-rotated"}})) ==
        "game-a");
}

TEST_CASE("access: an upgraded server keeps the owners an earlier version stored as token hashes",
          "[server][auth]") {
  server_config c;
  c.tokens = {{"test-token-4567abcd", "game-a", role::test}};
  const std::string earlier =
      "token:" + session::format_public_id(mix64(fnv1a64(std::string("test-token-4567abcd"))));
  actors::session_journal_contents restored;
  restored.waiting.resize(2);
  restored.waiting[0].ticket.credential = earlier;
  restored.waiting[1].ticket.credential = "anonymous";
  restored.retained.resize(1);
  restored.retained[0].credential = earlier;
  restored.events = restored.retained;
  restored.backfills.resize(1);
  restored.backfills[0].registration.credential = earlier;
  adopt_token_names(c, restored);
  CHECK(restored.waiting[0].ticket.credential == "game-a");
  CHECK(restored.waiting[1].ticket.credential == "anonymous");  // not a token's: as it was
  CHECK(restored.retained[0].credential == "game-a");
  CHECK(restored.events[0].credential == "game-a");
  CHECK(restored.backfills[0].registration.credential == "game-a");
}

TEST_CASE("access: another site's page cannot use a browser against the API", "[server][auth]") {
  server_config c;  // no tokens: Host must be a name of this server
  CHECK_FALSE(foreign_request(c, request_with({{"Host", "127.0.0.1:8080"}})));
  CHECK_FALSE(foreign_request(c, request_with({{"Host", "localhost:8080"}})));
  CHECK_FALSE(foreign_request(c, request_with({{"Host", "[::1]:8080"}})));
  CHECK(foreign_request(c, request_with({{"Host", "evil.example:8080"}})));  // DNS rebinding
  CHECK_FALSE(foreign_request(
      c, request_with({{"Host", "127.0.0.1:8080"}, {"Origin", "http://127.0.0.1:8080"}})));
  CHECK(foreign_request(
      c, request_with({{"Host", "127.0.0.1:8080"}, {"Origin", "http://evil.example"}})));
  CHECK(foreign_request(c, request_with({{"Host", "127.0.0.1:8080"},
                                         {"Origin", "http://127.0.0.1:9999"}})));  // other port
  CHECK(foreign_request(
      c, request_with({{"Host", "127.0.0.1:8080"}, {"Sec-Fetch-Site", "cross-site"}})));

  server_config proxied;
  proxied.tokens = {{"t0123456789abcdef", "ops", role::admin}};
  proxied.http_allowed_hosts = {"mm.internal"};
  CHECK_FALSE(foreign_request(proxied, request_with({{"Host", "mm.internal"}})));
  CHECK_FALSE(foreign_request(
      proxied, request_with({{"Host", "mm.internal"}, {"Origin", "https://mm.internal"}})));
  CHECK(foreign_request(proxied, request_with({{"Host", "other.internal"}})));
}

TEST_CASE("config: session datacenters and queues, every bad value named to the rule",
          "[server][config][session]") {
  mm::test::temp_dir dir;
  const std::string path = dir.file("c.json");
  // No configuration: the demo's co-op queue over 30 datacenters.
  const auto demo = parse({});
  REQUIRE(demo.config.sessions.queues.size() == 1);
  CHECK(demo.config.sessions.queues[0].name == "coop");
  CHECK(demo.config.sessions.queues[0].latency.has_value());
  CHECK(demo.config.sessions.datacenters.size() == 30);

  std::ofstream(path) << R"({"sessions": {
      "datacenters": [{"name": "paris", "latitude": 48.9, "longitude": 2.4, "region": "eu"},
                      {"name": "tokyo", "latitude": 35.7, "longitude": 139.7}],
      "queues": [{"name": "ranked_3v3", "min_players": 6, "max_players": 6, "teams": 2,
                  "team_size": 3, "max_party_size": 3, "tick": "500ms",
                  "rules": [{"name": "skill", "max_difference": 100,
                             "expand": {"step": 50, "every": "5s", "limit": 400}},
                            {"kind": "team_balance", "max_difference": 50,
                             "optional_after": "20s"}]},
                 {"name": "coop", "min_players": 4, "max_players": 4, "teams": 0,
                  "max_party_size": 4, "latency": {"ideal_ms": 60}, "shard_by": "platform"}],
      "queue_template": "coop", "max_queues": 10}})";
  const auto c = parse({"--config", path});
  const auto& s = c.config.sessions;
  REQUIRE(s.datacenters.size() == 2);
  CHECK(s.datacenters[1].region == "tokyo");  // no region: its own
  REQUIRE(s.queues.size() == 2);
  CHECK(s.queues[0].tick == std::chrono::milliseconds(500));
  REQUIRE(s.queues[0].rules.size() == 2);
  CHECK(s.queues[0].rules[0].expand.every == std::chrono::seconds(5));
  CHECK(s.queues[0].rules[1].kind == session::rule_kind::team_balance);
  CHECK(s.queues[0].rules[1].name == "team_balance");
  CHECK(s.queues[0].rules[1].optional_after == std::chrono::milliseconds(20'000));
  CHECK(s.queues[1].latency->ideal_ms == 60);
  CHECK(s.queues[1].latency->expand_ms == 100);  // the rest of the policy: defaults
  CHECK(s.queue_template == "coop");
  // What --print-config shows reads back the same.
  const auto shown = json::parse(describe(c.config));
  CHECK(read_queues("q", shown["sessions"]["queues"]).size() == 2);
  CHECK(s.queues[1].shard_by == "platform");
  CHECK(read_queues("q", shown["sessions"]["queues"])[1].shard_by == "platform");

  const auto problem = [&](const std::string& sessions) {
    std::ofstream(path) << R"({"sessions": )" + sessions + "}";
    return config_problem([&] { parse({"--config", path}); });
  };
  CHECK_THAT(problem(R"({"queues": [{"name": "x", "rules": [{"kind": "fuzzy"}]}]})"),
             Catch::Contains("sessions.queues[0].rules[0].kind"));
  CHECK_THAT(
      problem(R"({"queues": [{"name": "x", "rules": [{"expand": {"step": 1, "evry": 2}}]}]})"),
      Catch::Contains("sessions.queues[0].rules[0].expand.evry"));
  CHECK_THAT(problem(R"({"queues": [{"min_players": 2}]})"),
             Catch::Contains("sessions.queues[0].name"));
  CHECK_THAT(problem(R"({"queues": [{"name": "Ranked!"}]})"),
             Catch::Contains("sessions.queues[0].name: 1 to 64"));
  CHECK_THAT(problem(R"({"queues": [{"name": "a"}, {"name": "a"}]})"),
             Catch::Contains("'a' twice"));
  CHECK_THAT(
      problem(R"({"queues": [{"name": "a", "teams": 2, "team_size": 2, "max_players": 3}]})"),
      Catch::Contains("sessions.queues[0].max_players"));
  CHECK_THAT(problem(R"({"queues": [{"name": "a", "tick": "soon"}]})"),
             Catch::Contains("sessions.queues[0].tick"));
  CHECK_THAT(problem(R"({"queue_template": "nope"})"),
             Catch::Contains("sessions.queue_template: no queue 'nope'"));
  CHECK_THAT(problem(R"({"datacenters": [{"name": "x", "latitude": 95, "longitude": 0}]})"),
             Catch::Contains("sessions.datacenters[0].latitude"));
  CHECK_THAT(problem(R"({"datacenters": [], "queues": [{"name": "a", "latency": {}}]})"),
             Catch::Contains("needs sessions.datacenters"));
}

TEST_CASE("config: a datacenter's latency map is read at start, a bad file named by its key",
          "[server][config][session]") {
  mm::test::temp_dir dir;
  const std::string path = dir.file("c.json");
  // A map that knows one cell: 33 ms around Paris.
  std::vector<float> cells(session::latency_map::columns * session::latency_map::rows, 0.0f);
  const auto [x, y] = session::latency_map::cell_of({48.9, 2.4});
  cells[y * session::latency_map::columns + x] = 33.0f;
  std::ofstream(dir.file("paris.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(cells.data()),
             static_cast<std::streamsize>(cells.size() * sizeof(float)));
  std::ofstream(dir.file("short.bin"), std::ios::binary) << "not a map";
  const auto with_map = [&](const std::string& file) {
    std::ofstream(path) << R"({"sessions": {"datacenters": [
        {"name": "paris", "latitude": 48.9, "longitude": 2.4, "latency_map": ")" +
                               file + R"("},
        {"name": "tokyo", "latitude": 35.7, "longitude": 139.7}]}})";
  };
  with_map(dir.file("paris.bin"));
  const auto c = parse({"--config", path});
  const auto model = latency_model_of(c.config.sessions);
  CHECK(model.estimate_ms({48.9, 2.4}, 0) == 33.0);     // from the map
  CHECK(model.estimate_ms({48.9, 2.4}, 1) > 100.0);     // tokyo: distance
  CHECK(model.estimate_ms({-33.9, 151.2}, 0) > 100.0);  // unknown cell: distance
  const auto shown = json::parse(describe(c.config));
  CHECK(shown["sessions"]["datacenters"][0]["latency_map"] == dir.file("paris.bin"));
  with_map(dir.file("missing.bin"));
  CHECK_THAT(config_problem([&] {
               parse({"--config", path});
             }),
             Catch::Contains("sessions.datacenters[0].latency_map") &&
                 Catch::Contains("cannot open the latency map"));
  with_map(dir.file("short.bin"));
  CHECK_THAT(config_problem([&] {
               parse({"--config", path});
             }),
             Catch::Contains("sessions.datacenters[0].latency_map") &&
                 Catch::Contains("is not 360 x 180"));
}
