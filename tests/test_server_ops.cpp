// The real matchmakerd as a platform runs it: health probes without a token,
// JSON log lines with a request's id, and tokens rotated without a restart
// (docs/operations.md, "Health probes" and "Logs"; docs/security.md,
// "Rotating tokens").
#include <signal.h>

#include <fstream>

#include "server_fixture.hpp"

using namespace mm::test;

namespace {

httplib::Result get_with(const live_server& s, const std::string& path,
                         const httplib::Headers& headers) {
  httplib::Client c("127.0.0.1", s.port());
  c.set_read_timeout(std::chrono::seconds(30));
  return c.Get(path, headers);
}

// Until GET `path` with `token` answers `status` (polling a process).
bool answers_within(const live_server& s, const std::string& path, const std::string& token,
                    int status, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = s.get(path, token);
    if (r && r->status == status) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

TEST_CASE(
    "health: /healthz and /readyz need no token, refuse another site's page, and /readyz "
    "waits for the first scan",
    "[server][health]") {
  // A first scan 8 s after the start: not ready until then (no snapshot to
  // restore on a new database).
  live_server s(json{{"matchmaker", {{"database_scan_first_delay", "8s"}}}});
  const json alive = s.get_json("/healthz", "");
  CHECK(alive == json({{"alive", true}}));

  const json early = s.get_json("/readyz", "", 503);
  CHECK(early["ready"] == false);
  CHECK(early["checks"]["store"] == "ok");
  CHECK(early["checks"]["sessions"] == "ok");
  CHECK(early["checks"]["shards"].get<std::string>().find("mm-0") != std::string::npos);
  CHECK(early["not_ready"] == json::array({"shards"}));

  // Not behind a token, but still refused to another site's page.
  auto foreign = get_with(s, "/readyz", {{"Origin", "http://evil.example"}});
  REQUIRE(foreign);
  CHECK(foreign->status == 403);
  foreign = get_with(s, "/healthz", {{"Origin", "http://evil.example"}});
  REQUIRE(foreign);
  CHECK(foreign->status == 403);

  REQUIRE(answers_within(s, "/readyz", "", 200, std::chrono::seconds(60)));
  const json ready = s.get_json("/readyz", "");
  CHECK(ready["ready"] == true);
  CHECK(ready["not_ready"].empty());
  for (const auto& [name, state] : ready["checks"].items()) CHECK(state == "ok");
  // A restart restores the snapshot the stop wrote: ready before any scan.
  CHECK(s.stop() == 0);
  s.restart({{"matchmaker", {{"database_scan_first_delay", "1h"}}}});
  REQUIRE(answers_within(s, "/readyz", "", 200, std::chrono::seconds(30)));
}

TEST_CASE(
    "logs: log.format json writes one JSON object a line, and a request's id goes from its "
    "answer's header to its log line",
    "[server][logs]") {
  live_server s({{"log", {{"format", "json"}, {"requests", true}}}}, 4000, /*with_log=*/true);
  auto given = get_with(s, "/api/matchmakers",
                        {{"Authorization", "Bearer " + view_token}, {"X-Request-Id", "edge-7f3a"}});
  REQUIRE(given);
  CHECK(given->status == 200);
  CHECK(given->get_header_value("X-Request-Id") == "edge-7f3a");
  auto made = get_with(s, "/api/config", {{"Authorization", "Bearer " + view_token}});
  REQUIRE(made);
  const std::string made_id = made->get_header_value("X-Request-Id");
  CHECK(made_id.size() == 16);
  // An error answer carries one too.
  auto refused = get_with(s, "/api/config", {});
  REQUIRE(refused);
  CHECK(refused->status == 401);
  CHECK(refused->get_header_value("X-Request-Id").size() == 16);

  // Every line the server writes parses; both requests' lines are there.
  bool saw_given = false, saw_made = false;
  std::size_t lines = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!(saw_given && saw_made) && std::chrono::steady_clock::now() < deadline) {
    const std::string line = s.read_line();
    if (line.empty()) continue;
    ++lines;
    INFO(line);
    const json j = json::parse(line, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    REQUIRE(j.is_object());
    CHECK(j.contains("time"));
    CHECK(j.contains("level"));
    CHECK(j.contains("component"));
    CHECK(j.contains("message"));
    const std::string id = j.value("request_id", "");
    if (id == "edge-7f3a") {
      saw_given = true;
      CHECK(j["component"] == "http");
      CHECK(j["message"].get<std::string>().find("GET /api/matchmakers 200") != std::string::npos);
    }
    if (id == made_id) saw_made = true;
  }
  CHECK(lines > 0);
  CHECK(saw_given);
  CHECK(saw_made);
}

TEST_CASE(
    "tokens: a reload puts the config file's new tokens in force without a restart, by "
    "route and by SIGHUP, and a bad file keeps the old ones",
    "[server][auth]") {
  live_server s;
  const std::string path = s.dir().file("matchmakerd.json");
  json config = s.config();
  const auto write = [&](const json& tokens) {
    config["tokens"] = tokens;
    std::ofstream(path) << config.dump(2);
  };
  const std::string rotated = "test-token-rotated-000001";
  json tokens = config["tokens"];
  for (auto& t : tokens)
    if (t["name"] == "game-a") t["token"] = rotated;
  write(tokens);

  // Only an admin may ask.
  s.post_json("/api/admin/tokens/reload", json::object(), test_token, 403);
  const json answer = s.post_json("/api/admin/tokens/reload", json::object(), admin_token);
  CHECK(answer["tokens"].size() == 4);
  CHECK(answer.dump().find("token-") == std::string::npos);  // names and roles, no secret
  CHECK(s.get("/api/config", test_token)->status == 401);    // the old secret grants nothing
  CHECK(s.get("/api/config", rotated)->status == 200);
  CHECK(s.get("/api/config", other_test_token)->status == 200);  // the others unchanged

  // SIGHUP reads the file again.
  tokens.push_back({{"token", test_token}, {"name", "game-c"}, {"role", "view"}});
  write(tokens);
  REQUIRE(::kill(s.pid(), SIGHUP) == 0);
  CHECK(answers_within(s, "/api/config", test_token, 200, std::chrono::seconds(30)));
  s.post_json("/api/query", json::object(), test_token, 403);  // now a viewer's
  // mmctl asks the same.
  const auto [status, said] =
      run_binary({MMCTL_BINARY, "--url", s.url(), "--token", admin_token, "tokens", "reload"});
  CHECK(status == 0);
  CHECK(said.find("game-c") != std::string::npos);

  // A file the server cannot use: 400 naming the key, the old tokens stay.
  write(json::array());
  const json off = s.post_json("/api/admin/tokens/reload", json::object(), admin_token, 400);
  CHECK(off["error"].get<std::string>().find("'tokens'") != std::string::npos);
  std::ofstream(path) << "{ not json";
  s.post_json("/api/admin/tokens/reload", json::object(), admin_token, 400);
  REQUIRE(::kill(s.pid(), SIGHUP) == 0);  // logged, nothing changes
  CHECK(s.get("/api/config", rotated)->status == 200);
  CHECK(s.get("/api/config", test_token)->status == 200);
  CHECK(s.running());
}
