// A lease agent cut off from the database (a proxy between it and a real
// PostgreSQL server that goes silent): the node stops serving what it held
// by its deadline, before the other nodes take it over.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <pqxx/pqxx>
#include <set>
#include <thread>

#include "lease_referee.hpp"
#include "mm/cluster/lease_agent.hpp"
#include "mm/cluster/ownership.hpp"
#include "mm/engine/random.hpp"
#include "mm/storage/pg_store.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"

using mm::cluster::planned_node;
using mm::test::have_postgres;
using mm::test::postgres_server;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

// A TCP relay on loopback to the database for one node, which the test can
// cut: every connection through it is reset (RST), and every new one is
// reset as soon as it is accepted, as a firewall or a failed link does.
// (A silent partition, where packets are dropped, ends the same way through
// the lease connection's tcp_user_timeout and keepalives; loopback cannot
// drop packets without root's firewall.)
class cuttable_link {
 public:
  explicit cuttable_link(std::uint16_t to) : to_(to) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(0);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener_, 64) == 0);
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { relay(); });
  }
  ~cuttable_link() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
    ::close(listener_);
  }
  std::uint16_t port() const { return port_; }
  void cut() { cut_ = true; }

 private:
  static sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
  }
  static void reset(int fd) {
    const linger abort{1, 0};  // close with RST, not FIN
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    ::close(fd);
  }

  void relay() {
    char buf[16384];
    while (!stop_) {
      if (cut_ && !fds_.empty()) {
        for (int fd : fds_)
          if (fd >= 0) reset(fd);
        fds_.clear();
      }
      std::vector<pollfd> p{{listener_, POLLIN, 0}};
      for (int fd : fds_) p.push_back({fd, POLLIN, 0});
      if (::poll(p.data(), p.size(), 20) <= 0) continue;
      if (p[0].revents & POLLIN) {
        const int client = ::accept(listener_, nullptr, nullptr);
        if (client < 0) continue;
        if (cut_) {
          reset(client);
          continue;
        }
        const int server = ::socket(AF_INET, SOCK_STREAM, 0);
        const sockaddr_in a = loopback(to_);
        if (::connect(server, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) {
          fds_.push_back(client);
          fds_.push_back(server);  // pairs: fds_[2i] <-> fds_[2i + 1]
        } else {
          ::close(client);
          ::close(server);
        }
        continue;  // the poll set changed
      }
      for (std::size_t i = 1; i < p.size(); ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const std::size_t k = i - 1, peer = k ^ 1;
        const auto n = ::read(fds_[k], buf, sizeof buf);
        if (n > 0) {
          (void)!::write(fds_[peer], buf, static_cast<std::size_t>(n));
        } else {  // one side ended: the pair ends (poll skips a negative fd)
          ::close(fds_[k]);
          ::close(fds_[peer]);
          fds_[k] = fds_[peer] = -1;
        }
      }
    }
  }

  std::uint16_t to_, port_ = 0;
  int listener_ = -1;
  std::vector<int> fds_;
  std::atomic<bool> stop_{false}, cut_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("a node cut off from the database stops serving before the others take over what it held",
          "[cluster][leases][postgres]") {
  if (!have_postgres()) return;
  postgres_server pg;
  cuttable_link link(pg.port());
  referee ref;
  const std::string through_link = "postgresql://" + std::string(postgres_server::user) +
                                   "@127.0.0.1:" + std::to_string(link.port()) + "/postgres";
  stepped_agent a(pg.url(), "a", ref), b(through_link, "b", ref);
  // Each agent runs its own loop: a cut node's statements block for their
  // time limit, which must not hold the other's heartbeat back.
  std::atomic<bool> stop_a{false}, stop_b{false};
  std::thread ta([&] { a.agent->run(stop_a); });
  std::thread tb([&] { b.agent->run(stop_b); });
  // A failed REQUIRE leaves through here: the agents stop and their threads
  // are joined, so that the test fails with its message instead of aborting
  // on a joinable thread's destructor.
  struct stop_at_exit {
    std::atomic<bool>& a;
    std::atomic<bool>& b;
    std::thread& ta;
    std::thread& tb;
    ~stop_at_exit() {
      a = true;
      b = true;
      if (ta.joinable()) ta.join();
      if (tb.joinable()) tb.join();
    }
  } stopper{stop_a, stop_b, ta, tb};
  auto wait_until = [&](std::chrono::milliseconds limit, auto done) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(20ms);  // polling the agents' threads
    return done();
  };
  // A limit, not a wait: the agents on a loaded machine (ctest -j2, ASan)
  // may take seconds for their first rounds.
  REQUIRE(wait_until(20s, [&] {
    return all_served_once(ref) && serving_count(ref, "a") >= 2 && serving_count(ref, "b") >= 2;
  }));
  // B's link is cut: B stops serving at its deadline, and A serves all of
  // it within the takeover time (1 s), never while B still could.
  link.cut();
  const auto cut_at = std::chrono::steady_clock::now();
  REQUIRE(wait_until(20s, [&] { return all_served_once(ref) && serving_count(ref, "b") == 0; }));
  CHECK(std::chrono::steady_clock::now() - cut_at < 2s);
  CHECK(a.agent->report().counters.takeovers >= 2);
  CHECK(ref.overlaps().empty());
  for (const auto& o : ref.overlaps()) INFO(o);
  CHECK(ref.epochs_grow());
  stop_a = true;
  stop_b = true;
  ta.join();
  tb.join();  // its leave fails (cut off): the others already took over
}
