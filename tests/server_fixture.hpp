// The real matchmakerd on a free loopback port, with a config file in a temp
// dir, for the integration tests. HTTP helpers send the token of a role.
#pragma once

#include <httplib.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "answer_recorder.hpp"
#include "mm/testing/child_process.hpp"
#include "mm/testing/temp_dir.hpp"

namespace mm::test {

using json = nlohmann::json;

inline const std::string view_token = "view-token-0123456789";
inline const std::string test_token = "test-token-0123456789";
inline const std::string admin_token = "admin-token-0123456789";
inline const std::string other_test_token = "test-token-abcdefghij";  // another client

// Runs a binary to its end: (exit status, stdout and stderr).
inline std::pair<int, std::string> run_binary(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env = {}) {
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  child_process p(argv, /*with_stderr=*/true);
  for (const auto& [k, v] : env) unsetenv(k.c_str());
  std::string out;
  const int status = p.finish(&out);
  return {status, out};
}

class live_server {
 public:
  // `patch` is merged into the base configuration (JSON merge patch).
  // `with_log`: the server's log (stderr) comes with its output (read_line),
  // for tests that look for a logged refusal.
  explicit live_server(const json& patch = json::object(), std::uint32_t demo_players = 4000,
                       bool with_log = false)
      : with_stderr_(with_log) {
    config_ = {{"database", {{"path", dir_.file("mm.db")}}},
               {"demo", {{"players", demo_players}, {"queries_per_second", 0}}},
               {"instances", 2},
               {"http", {{"port", 0}, {"max_body_bytes", 65536}, {"max_batch", 100}}},
               {"actor", {{"port", -1}}},
               {"tokens",
                {{{"token", view_token}, {"name", "viewer"}, {"role", "view"}},
                 {{"token", test_token}, {"name", "game-a"}, {"role", "test"}},
                 {{"token", other_test_token}, {"name", "game-b"}, {"role", "test"}},
                 {{"token", admin_token}, {"name", "ops"}, {"role", "admin"}}}},
               {"matchmaker",
                {{"player_cache_size", 5000},
                 {"database_cache_size", 1000},
                 {"database_scan_first_delay", "0s"},
                 {"database_scan_tick", "200ms"},
                 {"database_scan_max_fetch", 4096},
                 {"max_excluded_ids", 1000},
                 {"random_seed", 1},
                 {"player_remove_after_candidate_offer", "never"}}}};
    config_.merge_patch(patch);
    start();
  }

  void start() {
    std::ofstream(dir_.file("matchmakerd.json")) << config_.dump(2);
    proc_ = std::make_unique<child_process>(
        std::vector<std::string>{MATCHMAKERD_BINARY, "--config", dir_.file("matchmakerd.json")},
        with_stderr_);
    // The actor port's line (when published) comes before the HTTP line. An
    // empty line is not the end: only the end of the output or the deadline is.
    port_ = actor_port_ = 0;
    std::string said;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (port_ == 0 && !proc_->output_ended() && std::chrono::steady_clock::now() < deadline) {
      const std::string line = proc_->read_line(std::chrono::seconds(1));
      if (said.size() < 4096) said += line + "\n";
      if (line.find("actor port listening on 127.0.0.1:") != std::string::npos)
        actor_port_ = port_of(line);
      if (line.find("http listening on http://127.0.0.1:") != std::string::npos)
        port_ = port_of(line);
    }
    // The RESP port's line, when it is open, comes after the HTTP line.
    resp_port_ = 0;
    const bool resp = config_.contains("resp") && config_["resp"].value("port", -1) >= 0;
    while (resp && resp_port_ == 0 && !proc_->output_ended() &&
           std::chrono::steady_clock::now() < deadline) {
      const std::string line = proc_->read_line(std::chrono::seconds(1));
      if (said.size() < 4096) said += line + "\n";
      if (line.find("resp listening on 127.0.0.1:") != std::string::npos)
        resp_port_ = port_of(line);
    }
    INFO("matchmakerd said before it stopped or the deadline passed:\n" << said);
    if (port_ == 0) dump_stuck();
    REQUIRE(port_ != 0);
    REQUIRE((!resp || resp_port_ != 0));
  }

  // Starts again, with `patch` merged into the configuration.
  void restart(const json& patch) {
    config_.merge_patch(patch);
    start();
  }

  // Until every matchmaker holds players (the first scans ran).
  void wait_until_filled() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = get("/api/matchmakers", view_token);
      if (r && r->status == 200) {
        bool all = true;
        const json list = json::parse(r->body)["matchmakers"];
        for (const auto& m : list)
          all &= m.contains("players") && m["players"].get<std::uint64_t>() > 0;
        if (all) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a process
    }
    FAIL("the matchmakers did not fill within 60 s");
  }

  // A node of a cluster: until it serves every one of `resources` ("mm-0",
  // "sessions"), per GET /api/cluster.
  void wait_until_serving(const std::vector<std::string>& resources,
                          std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::string last;
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = get("/api/cluster", view_token);
      if (r && r->status == 200) {
        const json c = json::parse(r->body);
        last = c.dump();
        std::size_t found = 0;
        for (const auto& want : resources)
          for (const auto& o : c.value("owned", json::array()))
            found += o["resource"] == want && c.value("serving", false);
        if (found == resources.size()) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a process
    }
    INFO(last);
    FAIL("the node did not serve its resources in time");
  }

  // With MM_TEST_STACKS=1, a server that did not start in time leaves its
  // threads' stacks and, on PostgreSQL, the server's sessions on stderr:
  // where it waits.
  void dump_stuck() {
    const char* on = std::getenv("MM_TEST_STACKS");
    if (on == nullptr || *on != '1' || !proc_->running()) return;
    const std::string gdb = "gdb -batch -p " + std::to_string(proc_->pid()) +
                            " -ex 'thread apply all bt' 1>&2 2>/dev/null";
    (void)std::system(gdb.c_str());
    if (config_.contains("database") && config_["database"].contains("url")) {
      const std::string psql =
          "psql '" + config_["database"]["url"].get<std::string>() +
          "' -c \"SELECT pid, state, wait_event_type, wait_event, now() - xact_start AS tx, "
          "left(query, 160) FROM pg_stat_activity WHERE datname = current_database()\" 1>&2";
      (void)std::system(psql.c_str());
    }
  }

  int stop() { return proc_->stop(); }
  int kill_hard() { return proc_->kill_hard(); }
  bool running() { return proc_->running(); }
  pid_t pid() const { return proc_->pid(); }
  std::string read_line() { return proc_->read_line(std::chrono::seconds(30)); }

  // Each answer is recorded for the contract's check (answer_recorder.hpp).
  httplib::Result get(const std::string& path, const std::string& token = "") const {
    auto r = client().Get(path, headers(token));
    record_answer("GET", path, r);
    return r;
  }
  httplib::Result post(const std::string& path, const std::string& body,
                       const std::string& token = "") const {
    auto r = client().Post(path, headers(token), body, "application/json");
    record_answer("POST", path, r);
    return r;
  }
  // The JSON of a request that must answer `status`.
  json get_json(const std::string& path, const std::string& token, int status = 200) const {
    return checked(get(path, token), status, "GET " + path);
  }
  json post_json(const std::string& path, const json& body, const std::string& token,
                 int status = 200) const {
    return checked(post(path, body.dump(), token), status, "POST " + path);
  }

  std::uint16_t port() const { return port_; }
  std::uint16_t actor_port() const { return actor_port_; }  // 0: not published
  std::uint16_t resp_port() const { return resp_port_; }    // 0: not open
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const temp_dir& dir() const { return dir_; }
  const json& config() const { return config_; }

 private:
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(std::chrono::seconds(30));
    return c;
  }
  static httplib::Headers headers(const std::string& token) {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return h;
  }
  static json checked(const httplib::Result& r, int status, const std::string& what) {
    INFO(what);
    REQUIRE(r);
    INFO(r->body);
    CHECK(r->status == status);
    const json j = json::parse(r->body, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    if (status >= 400) CHECK(j.contains("error"));
    return j;
  }

  temp_dir dir_;
  json config_;
  std::unique_ptr<child_process> proc_;
  std::uint16_t port_ = 0;
  std::uint16_t actor_port_ = 0;
  std::uint16_t resp_port_ = 0;
  bool with_stderr_ = false;
};

}  // namespace mm::test
