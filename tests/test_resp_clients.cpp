// The RESP port through the Redis clients a game backend already has, each
// with its own pipelining and blocking reads: redis-cli (Debian's
// redis-tools) and Python's redis (Debian's python3-redis). Each does a
// find, two tickets to their match and an event read resumed from the last
// id it saw. (Node's client: tests/api/resp.test.mjs; hiredis:
// test_server_resp.cpp.)
#include <future>
#include <sstream>

#include "resp_test_support.hpp"

using namespace mm::test;
using namespace std::chrono_literals;

namespace {

// A program's path, from PATH (the tests start programs with execv).
std::string on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0)
      return dir + "/" + program;
  FAIL(program << " is not installed (./run test installs it)");
  return {};
}

std::vector<std::string> cli(const live_server& s, const std::vector<std::string>& args) {
  std::vector<std::string> argv{
      on_path("redis-cli"), "-p", std::to_string(s.resp_port()), "-a", test_token,
      "--no-auth-warning"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("redis-cli: a find, its own pipe, tickets to their match, a resumed blocking read",
          "[server][resp][clients]") {
  live_server s(resp_patch());
  s.wait_until_filled();
  const std::string query = R"({"attacker_id":91,"mmr":1500,"attributes":{"region":1}})";
  auto [status, out] = run_binary(cli(s, {"MM.FIND", query}));
  REQUIRE(status == 0);
  CHECK(json::parse(out).contains("players_tested"));

  // redis-cli --pipe: 100 inline commands in one stream, every reply counted.
  std::string stream = "AUTH " + test_token + "\r\n";
  for (int i = 0; i < 100; ++i) stream += "MM.FIND " + query + "\r\n";
  const std::string pipe_file = s.dir().file("commands.txt");
  std::ofstream(pipe_file) << stream;
  auto [pipe_status, pipe_out] = run_binary(
      {"/bin/sh", "-c",
       on_path("redis-cli") + " -p " + std::to_string(s.resp_port()) + " --pipe < " + pipe_file});
  INFO(pipe_out);
  CHECK(pipe_status == 0);
  CHECK(pipe_out.find("errors: 0, replies: 101") != std::string::npos);

  // Two tickets, followed to their match.
  const json a =
      json::parse(run_binary(cli(s, {"MM.TICKET.CREATE", solo("duel", 1, 1500).dump()})).second);
  run_binary(cli(s, {"MM.TICKET.CREATE", solo("duel", 2, 1510).dump()}));
  json state = json::object();
  for (int i = 0; i < 10 && state.value("state", "") != "matched"; ++i)
    state = json::parse(
        run_binary(cli(s, {"MM.TICKET.GET", a["ticket"].get<std::string>(), "WAIT", "2"})).second);
  CHECK(state["state"] == "matched");

  // The events from the start: redis-cli prints each value on a line; the
  // ids are the lines ending in "-0".
  const auto first =
      lines_of(run_binary(cli(s, {"MM.XREAD", "COUNT", "100", "STREAMS", "tickets", "0"})).second);
  std::vector<std::string> ids;
  for (const auto& l : first)
    if (l.size() > 2 && l.compare(l.size() - 2, 2, "-0") == 0) ids.push_back(l);
  REQUIRE(ids.size() == 4);
  // Resumed after the last one: redis-cli blocks until a ticket made meanwhile.
  auto resumed = std::async(std::launch::async, [&] {
    return run_binary(cli(s, {"MM.XREAD", "BLOCK", "5000", "STREAMS", "tickets", ids.back()}))
        .second;
  });
  std::this_thread::sleep_for(300ms);  // let the read start waiting (it waits 5 s at most)
  const std::string later = create(s, solo("duel", 3, 1800));
  const std::string got = resumed.get();
  INFO(got);
  CHECK(got.find(later) != std::string::npos);
  CHECK(got.find(ids.back()) == std::string::npos);  // only what came after
}

TEST_CASE("Python's redis client: a find, its pipeline, tickets to their match, a resumed read",
          "[server][resp][clients]") {
  live_server s(resp_patch());
  s.wait_until_filled();
  // Debian's python3 (with python3-redis), whatever python3 is first on PATH.
  const std::string python =
      ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  auto [status, out] =
      run_binary({python, std::string(MM_SOURCE_DIR) + "/tests/resp_clients/python_client.py",
                  std::to_string(s.resp_port()), test_token, std::to_string(s.port())});
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("ok") != std::string::npos);
}
