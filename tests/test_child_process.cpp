// The tests' child processes: a stop never hangs the test that asked for it.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "mm/testing/child_process.hpp"

using mm::test::child_process;
using namespace std::chrono_literals;

namespace {

// Whether process `pid` is blocked writing to a pipe (its wait channel).
bool blocked_on_pipe(pid_t pid) {
  std::ifstream wchan("/proc/" + std::to_string(pid) + "/wchan");
  std::string where;
  wchan >> where;
  return where.find("pipe_write") != std::string::npos;
}

}  // namespace

TEST_CASE("a child that ignores SIGTERM is killed once the stop's limit passes",
          "[testing][process]") {
  child_process p({"/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"});
  REQUIRE(p.read_line(10s) == "ready");
  const auto start = std::chrono::steady_clock::now();
  CHECK(p.stop(500ms) == child_process::stop_timed_out);
  CHECK(std::chrono::steady_clock::now() - start < 10s);
  CHECK_FALSE(p.running());
}

TEST_CASE("a child blocked on a full output pipe still stops, and its lines are kept",
          "[testing][process]") {
  // It writes far more than a pipe holds before it looks at SIGTERM: without
  // the stop reading its output it would wait on its write forever.
  child_process p({"/bin/sh", "-c",
                   "trap 'echo bye; exit 0' TERM; echo first; "
                   "i=0; while [ $i -lt 20000 ]; do echo line-$i-padding-padding-padding; "
                   "i=$((i+1)); done; while :; do sleep 1; done"});
  REQUIRE(p.read_line(10s) == "first");
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!blocked_on_pipe(p.pid()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);  // polling a process
  REQUIRE(blocked_on_pipe(p.pid()));
  CHECK(p.stop(60s) == 0);
  // What it wrote while it was stopped can still be read.
  CHECK(p.read_line(1s).rfind("line-", 0) == 0);
}

TEST_CASE("a child that already ended is stopped and killed without a signal to anyone else",
          "[testing][process]") {
  child_process p({"/bin/sh", "-c", "exit 3"});
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (p.running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);  // polling a process
  REQUIRE_FALSE(p.running());
  // Its pid is gone: a kill() of it now would be kill(-1), every process.
  CHECK(p.stop() == 3);
  CHECK(p.kill_hard() == 3);
}
