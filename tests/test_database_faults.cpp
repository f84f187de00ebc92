// A live matchmakerd against a database that fights back: locked by another
// writer (writes wait, then 503; reads go on; a snapshot it cannot write is
// counted and written again once it can), damaged, or impossible to make
// (refused at start, naming why).
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "server_fixture.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

// The sum of a metric's samples over the matchmakers ("name{matchmaker=...}").
double summed(const std::string& metrics, const std::string& name) {
  std::istringstream in(metrics);
  double sum = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + "{", 0) == 0) sum += std::stod(line.substr(line.rfind(' ') + 1));
  return sum;
}

// The smallest of a metric's samples over the matchmakers, or -1 for none.
double lowest(const std::string& metrics, const std::string& name) {
  std::istringstream in(metrics);
  double low = -1;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + "{", 0) == 0) {
      const double v = std::stod(line.substr(line.rfind(' ') + 1));
      low = low < 0 ? v : std::min(low, v);
    }
  return low;
}

double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST_CASE("a locked database holds back writes with a 503 and never reads",
          "[reliability][database]") {
  live_server s(json{{"http", {{"max_batch", 100}}}});
  s.wait_until_filled();
  // The blocker waits for the lock like any writer: the server writes too
  // (snapshots, the ticket journal), and a BEGIN IMMEDIATE that met one of
  // its writes without a busy timeout failed at once (the test's old flake).
  SQLite::Database blocker(s.config()["database"]["path"].get<std::string>(),
                           SQLite::OPEN_READWRITE, 10'000);
  auto hold =
      std::make_unique<SQLite::Transaction>(blocker, SQLite::TransactionBehavior::IMMEDIATE);
  blocker.exec("UPDATE players SET mmr = mmr WHERE id = 1");
  // A write waits for the lock (the busy timeout), then is refused, named.
  std::thread write([&] {
    auto r = s.post("/api/players", R"({"players": [{"id": 4242424, "mmr": 1500}]})", admin_token);
    REQUIRE(r);
    CHECK(r->status == 503);
    CHECK(r->body.find("database") != std::string::npos);
  });
  // Meanwhile reads are answered at once.
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    s.get_json("/api/players/12", view_token);
    CHECK(std::chrono::steady_clock::now() - start < 1s);
  }
  write.join();
  hold.reset();  // rolls back: the lock is free
  s.post_json("/api/players", json::parse(R"({"players": [{"id": 4242424, "mmr": 1500}]})"),
              admin_token);
}

TEST_CASE("a database that is damaged or cannot be made is refused at start",
          "[reliability][database]") {
  temp_dir dir;
  const auto start = [&](const std::string& path) {
    child_process p({MATCHMAKERD_BINARY, "--database.path", path, "--http.port", "0",
                     "--actor.port", "-1", "--demo.players", "100"},
                    true);
    std::string out;
    const int status = p.finish(&out);
    return std::make_pair(status, out);
  };
  SECTION("a file cut in the middle") {
    {
      live_server s({{"database", {{"path", dir.file("cut.db")}}}}, 3000);
      CHECK(s.stop() == 0);
    }
    const auto size = std::filesystem::file_size(dir.file("cut.db"));
    std::filesystem::resize_file(dir.file("cut.db"), size / 2);
    const auto [status, out] = start(dir.file("cut.db"));
    INFO(out);
    CHECK(status == 1);
    CHECK((out.find("damaged") != std::string::npos || out.find("malformed") != std::string::npos ||
           out.find("disk image") != std::string::npos));
  }
  SECTION("a directory that cannot be made (a file is in the way)") {
    std::ofstream(dir.file("a-file")) << "x";
    const auto [status, out] = start(dir.file("a-file/mm.db"));
    INFO(out);
    CHECK(status == 1);
    CHECK(out.find("a-file") != std::string::npos);
  }
  SECTION("a file this user may not write") {
    {
      live_server s(json{{"database", {{"path", dir.file("ro.db")}}}}, 500);
      CHECK(s.stop() == 0);
    }
    namespace fs = std::filesystem;
    fs::permissions(dir.file("ro.db"),
                    fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::permissions(fs::path(dir.file("ro.db")).parent_path(),
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec);
    // root writes whatever the permissions say: run the server as nobody then.
    std::vector<std::string> argv;
    if (::geteuid() == 0)
      argv = {"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
    argv.insert(argv.end(), {MATCHMAKERD_BINARY, "--database.path", dir.file("ro.db"),
                             "--http.port", "0", "--actor.port", "-1"});
    child_process p(argv, true);
    std::string out;
    const int status = p.finish(&out);
    INFO(out);
    CHECK(status == 1);
    CHECK(out.find("readonly") != std::string::npos);
  }
  SECTION("a path that is a directory") {
    std::filesystem::create_directories(dir.file("adir"));
    const auto [status, out] = start(dir.file("adir"));
    INFO(out);
    CHECK(status == 1);
  }
}

TEST_CASE("a snapshot the locked database refuses is counted, and written again once it can be",
          "[reliability][database]") {
  live_server s(json{{"matchmaker", {{"state_snapshot_interval", "200ms"}}}});
  s.wait_until_filled();
  const auto metrics = [&] {
    auto r = s.get("/metrics", view_token);
    REQUIRE(r);
    REQUIRE(r->status == 200);
    return r->body;
  };
  // Polling a live server: every matchmaker has written one.
  const auto until = [&](auto&& done, const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    std::string m = metrics();
    while (!done(m) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(50ms);
      m = metrics();
    }
    INFO(what << "\n" << m);
    REQUIRE(done(m));
  };
  until([](const std::string& m) { return lowest(m, "mm_snapshot_last_timestamp_seconds") > 0; },
        "a first snapshot");
  CHECK(summed(metrics(), "mm_snapshot_failures_total") == 0);

  // Another writer holds the lock past the server's busy timeout (5 s).
  SQLite::Database blocker(s.config()["database"]["path"].get<std::string>(),
                           SQLite::OPEN_READWRITE, 10'000);
  auto hold =
      std::make_unique<SQLite::Transaction>(blocker, SQLite::TransactionBehavior::IMMEDIATE);
  blocker.exec("UPDATE players SET mmr = mmr WHERE id = 1");
  until([](const std::string& m) { return summed(m, "mm_snapshot_failures_total") >= 1; },
        "a snapshot failure counted");
  hold.reset();  // rolls back: the lock is free

  // Snapshots taken after the lock went are written: the age the alert
  // watches comes back down.
  const double freed = unix_seconds_now();
  until(
      [&](const std::string& m) {
        return lowest(m, "mm_snapshot_last_timestamp_seconds") >= freed;
      },
      "a snapshot written after the lock was freed");
  CHECK(s.stop() == 0);
}
