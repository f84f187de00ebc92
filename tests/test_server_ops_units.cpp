// What a platform runs the server with, in process: the readiness report,
// the log's lines (text and JSON), a request's id, and the tokens a reload
// reads again. The integration tests (test_server_ops.cpp) check the same
// through the real binary.
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "http_server.hpp"
#include "mm/engine/log.hpp"
#include "mm/testing/temp_dir.hpp"
#include "readiness.hpp"
#include "server_config.hpp"

using namespace mm;
using namespace mm::server;

TEST_CASE("readiness: every check named, ok or why not, and a throwing check is not ready",
          "[server][health]") {
  readiness_probe probe(std::chrono::milliseconds(0));
  int store_calls = 0;
  bool shards_ready = false;
  probe.add("store", [&]() -> std::optional<std::string> {
    ++store_calls;
    return std::nullopt;
  });
  probe.add("shards", [&]() -> std::optional<std::string> {
    if (shards_ready) return std::nullopt;
    return "mm-1 before its first scan";
  });
  probe.add("sessions",
            []() -> std::optional<std::string> { throw std::runtime_error("database is down"); });
  auto r = probe.report();
  CHECK_FALSE(r.ready());
  const json j = r.to_json();
  CHECK(j["ready"] == false);
  CHECK(j["checks"]["store"] == "ok");
  CHECK(j["checks"]["shards"] == "mm-1 before its first scan");
  CHECK(j["checks"]["sessions"] == "database is down");
  CHECK(j["not_ready"] == json::array({"shards", "sessions"}));
  CHECK(j["error"] == "not ready: shards, sessions");

  readiness_probe fine(std::chrono::milliseconds(0));
  fine.add("store", [] { return std::optional<std::string>(); });
  CHECK(fine.report().ready());
  CHECK(fine.report().to_json() ==
        json({{"ready", true}, {"checks", {{"store", "ok"}}}, {"not_ready", json::array()}}));
  CHECK(readiness_report{}.ready());  // no checks: nothing is missing
}

TEST_CASE("readiness: a report is reused for its second, so a flood of probes costs one check",
          "[server][health]") {
  readiness_probe probe(std::chrono::hours(1));
  std::atomic<int> calls{0};
  probe.add("store", [&] {
    ++calls;
    return std::optional<std::string>();
  });
  CHECK(probe.report().ready());
  std::vector<std::thread> probes;
  std::atomic<int> ready{0};  // Catch's CHECK is not for other threads
  for (int i = 0; i < 8; ++i)
    probes.emplace_back([&] {
      for (int k = 0; k < 100; ++k) ready += probe.report().ready();
    });
  for (auto& t : probes) t.join();
  CHECK(ready == 800);
  CHECK(calls == 1);
}

TEST_CASE("readiness: while a check blocks, every probe answers within its limit, naming it",
          "[server][health]") {
  readiness_probe probe(std::chrono::milliseconds(0), std::chrono::milliseconds(50));
  std::mutex gate;
  std::atomic<bool> blocked{false};
  probe.add("cluster", [] { return std::optional<std::string>(); });
  probe.add("store", [&] {
    if (blocked) std::lock_guard<std::mutex> wait(gate);  // the database does not answer
    return std::optional<std::string>();
  });
  CHECK(probe.report().ready());
  std::unique_lock<std::mutex> held(gate);
  blocked = true;
  // Several callers, each answered by its limit, while the one run waits.
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = probe.report();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    CHECK_FALSE(r.ready());
    const json j = r.to_json();
    CHECK(j["checks"]["cluster"] == "ok");  // as the last report had it
    CHECK(j["checks"]["store"].get<std::string>().rfind("no answer within 50 ms", 0) == 0);
    CHECK(j["not_ready"] == json::array({"store"}));
  }
  blocked = false;
  held.unlock();
  // The run finishes; the next report is made again and is ready.
  bool ready = false;
  for (int i = 0; i < 100 && !ready; ++i) ready = probe.report().ready();
  CHECK(ready);
  probe.stop();
  CHECK_FALSE(probe.report().ready());
}

TEST_CASE("logs: a JSON record is one object a line, whatever the message holds",
          "[server][logs]") {
  const std::string nasty = "quote \" backslash \\ newline \n tab \t bell \x07 end";
  const std::string line =
      format_record({log_level::warning, "cluster", nasty, "trace-42"}, log_format::json);
  CHECK(line.find('\n') == std::string::npos);
  const json j = json::parse(line);
  CHECK(j["level"] == "warning");
  CHECK(j["component"] == "cluster");
  CHECK(j["message"] == nasty);
  CHECK(j["request_id"] == "trace-42");
  const std::string time = j["time"];
  CHECK(time.size() == 24);  // 2026-11-28T20:25:49.123Z
  CHECK(time.back() == 'Z');
  // Without a request: no request_id key.
  CHECK_FALSE(json::parse(format_record({log_level::info, "server", "hello", ""}, log_format::json))
                  .contains("request_id"));
  const std::string text =
      format_record({log_level::error, "journal", "write failed", "abc"}, log_format::text);
  CHECK(text.find(" error journal: write failed (request abc)") != std::string::npos);
}

TEST_CASE("logs: what a thread logs inside a request's scope carries its id", "[server][logs]") {
  std::vector<std::string> ids;
  set_log_sink([&](const log_record& r) { ids.emplace_back(r.request_id); });
  log(log_level::info, "test", "before");
  {
    const request_scope outer("outer-1");
    log(log_level::info, "test", "in");
    {
      const request_scope inner("inner-2");
      log(log_level::info, "test", "nested");
    }
    log(log_level::info, "test", "back");
  }
  log(log_level::info, "test", "after");
  set_log_sink({});
  CHECK(ids == std::vector<std::string>{"", "outer-1", "inner-2", "outer-1", ""});
}

TEST_CASE("request ids: a client's usable id is kept, anything else is replaced by a fresh one",
          "[server][logs]") {
  const auto with = [](std::string id) {
    http_request r;
    r.headers = {{"X-Request-Id", std::move(id)}};
    return request_id_of(r);
  };
  CHECK(with("edge-7f3a:12.b_c-d") == "edge-7f3a:12.b_c-d");
  const auto fresh = [](const std::string& id) {
    return id.size() == 16 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
  };
  CHECK(fresh(with("")));
  CHECK(fresh(with(std::string(65, 'a'))));  // too long
  CHECK(fresh(with("has space")));
  CHECK(fresh(with("line\nbreak")));
  CHECK(fresh(with("{\"json\":1}")));
  CHECK(fresh(request_id_of(http_request{})));
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(request_id_of(http_request{}));
  CHECK(seen.size() == 1000);
}

TEST_CASE("tokens: a reload reads the file's tokens again, or names what keeps it from it",
          "[server][auth]") {
  mm::test::temp_dir dir;
  const std::string path = dir.file("matchmakerd.json");
  const auto write = [&](const json& j) { std::ofstream(path) << j.dump(); };
  const json one = {
      {"tokens", {{{"token", "first-token-0123456789"}, {"name", "game-a"}, {"role", "test"}}}}};
  write(one);
  const char* argv[] = {"matchmakerd", "--config", path.c_str()};
  const server_config running = parse_command_line(3, argv).config;
  CHECK(running.config_file == path);

  write({{"tokens",
          {{{"token", "second-token-0123456789"}, {"name", "game-a"}, {"role", "test"}},
           {{"token", "ops-token-0123456789"}, {"name", "ops"}, {"role", "admin"}}}}});
  const auto tokens = reread_tokens(running);
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[0].token == "second-token-0123456789");
  CHECK(tokens[1].granted == role::admin);

  const auto problem = [&](const json& j) {
    write(j);
    try {
      reread_tokens(running);
    } catch (const config_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // Turning tokens off would leave a server bound off loopback open to all.
  CHECK(problem({{"tokens", json::array()}}).find("'tokens'") != std::string::npos);
  CHECK(problem(json::object()).find("'tokens'") != std::string::npos);
  // The file's own errors name their key.
  CHECK(problem({{"tokens", {{{"token", "short"}, {"role", "test"}}}}}).find("tokens[0]") !=
        std::string::npos);
  CHECK(problem({{"tokens", one["tokens"]}, {"http", {{"port", "x"}}}}).find("http.port") !=
        std::string::npos);
  std::ofstream(path) << "{ not json";
  CHECK_THROWS_AS(reread_tokens(running), config_error);

  server_config no_file;
  CHECK_THROWS_AS(reread_tokens(no_file), config_error);
}
