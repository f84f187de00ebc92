// The cluster under network faults as they happen: three matchmakerd nodes
// in the test's namespace, PostgreSQL in a namespace of its own behind a
// router (fault_network.hpp), each node on a path of its own to it, under
// ticket and query load.
// - A node silently cut off from the database (packets dropped, no reset),
//   still reached by its clients: it stops serving by its deadline, the
//   others serve what it held within the takeover time, and once healed it
//   joins again with a share.
// - PostgreSQL paused (SIGSTOP) past the lease, then resumed; then
//   restarted: every node stops serving by its deadline, and the cluster
//   serves everything again.
// - A fifth of the packets to and from the database dropped, then a slow
//   link: the cluster goes on or heals, never with two servers of one
//   resource.
// - SIGKILL of a random node 30 times (then started again), under ticket
//   load over two queues and tickets for both (no namespaces needed).
// In each: a referee polls every node's claims and counts the proofs that
// two nodes served one resource at once (0), the ledger counts acknowledged tickets
// lost (0) and players in two matches (0), and the times to stop and to
// serve again are printed.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "cluster_fixture.hpp"
#include "mm/testing/fault_network.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// How soon the cluster serves everything again after a fault: within T, and
// a second more for a loaded test machine (as in the SIGKILL test). Built
// with AddressSanitizer the same code runs two to three times slower (a
// start, the stop of the instance a retake waits for, a restarted
// PostgreSQL's first answers): 3 T and a second. (At 2 T + 1 s the slow
// link's case, alone on the machine, failed once in CI at 6.2 s after the
// heal; the same build served again in 3.0-3.7 s on a quiet day: the CI
// machine ran it about 1.8 times slower.) The counts (overlaps, losses,
// double matches) are the same in every build.
double serve_again_bound_s() {
  const double t = std::chrono::duration<double>(takeover_after).count();
#if defined(__SANITIZE_ADDRESS__)
  return 3 * t + 1.0;
#else
  return t + 1.0;
#endif
}

// PostgreSQL's server, and what the fault network needs.
bool can_run() {
  if (!have_postgres()) return false;
  if (fault_network::available()) return true;
  WARN("skipped: network namespaces need root, iproute2 and iptables");
  return false;
}

// Polls every node's claims (GET /api/cluster: serving, and each resource
// with its epoch) all the time. A node's polls are a few milliseconds apart
// from another's, so two claims of one resource in one round prove nothing
// (a hand-over may fall between them). What proves two servers at once: a
// claim at an epoch older than one already seen served, asked after that
// newer claim was answered: the old owner still served after the new one
// had started.
class referee {
 public:
  explicit referee(std::map<std::string, live_server*> nodes) : nodes_(std::move(nodes)) {
    thread_ = std::thread([this] {
      while (!stop_) {
        for (const auto& [name, s] : nodes_) observe(name, *s);
        std::this_thread::sleep_for(10ms);  // polling processes
      }
    });
  }
  ~referee() {
    stop_ = true;
    thread_.join();
  }
  std::vector<std::string> overlaps() {
    std::lock_guard lock(m_);
    return overlaps_;
  }
  // True when `node` claimed nothing in its last answer.
  bool serves_nothing(const std::string& node) {
    std::lock_guard lock(m_);
    const auto it = claims_.find(node);
    return it != claims_.end() && it->second == 0;
  }

 private:
  struct newest {
    std::uint64_t epoch = 0;
    std::string node;
    clock_type::time_point answered;  // when its first claim was answered
  };

  void observe(const std::string& name, live_server& s) {
    const auto sent = clock_type::now();
    auto r = s.get("/api/cluster", view_token);
    const auto answered = clock_type::now();
    if (!r || r->status != 200) return;
    const json c = json::parse(r->body);
    std::lock_guard lock(m_);
    std::size_t claimed = 0;
    if (c.value("serving", false))
      for (const auto& o : c["owned"]) {
        ++claimed;
        const std::string resource = o["resource"];
        const auto epoch = o["epoch"].get<std::uint64_t>();
        auto& n = newest_[resource];
        if (epoch > n.epoch)
          n = {epoch, name, answered};
        else if (epoch < n.epoch && sent > n.answered && overlaps_.size() < 20)
          overlaps_.push_back(resource + ": " + name + " served epoch " + std::to_string(epoch) +
                              " after " + n.node + " had served epoch " + std::to_string(n.epoch));
      }
    claims_[name] = claimed;
  }

  std::map<std::string, live_server*> nodes_;
  std::atomic<bool> stop_{false};
  std::mutex m_;
  std::map<std::string, newest> newest_;
  std::map<std::string, std::size_t> claims_;  // node -> resources in its last answer
  std::vector<std::string> overlaps_;
  std::thread thread_;
};

// Three nodes, each on its own path to the database; their load of tickets.
struct faulty_cluster {
  fault_network net;
  postgres_server pg{net.database()};
  // The test's own path, never cut.
  std::string observer_url = pg.url(net.path_address(fault_network::max_paths - 1));
  std::unique_ptr<live_server> a, b, c;
  std::map<std::string, live_server*> nodes;
  std::map<std::string, int> path_of{{"a", 0}, {"b", 1}, {"c", 2}};

  faulty_cluster() {
    write_players(observer_url);
    a = std::make_unique<live_server>(node_patch(pg.url(net.path_address(0)), "a"), 0);
    b = std::make_unique<live_server>(node_patch(pg.url(net.path_address(1)), "b"), 0);
    c = std::make_unique<live_server>(node_patch(pg.url(net.path_address(2)), "c"), 0);
    nodes = {{"a", a.get()}, {"b", b.get()}, {"c", c.get()}};
  }

  std::string owner_of(const std::string& resource) {
    std::string found;
    REQUIRE(poll(20s, [&] {
      if (!settled(nodes)) return false;
      const auto s = servers(nodes);
      const auto held = s.find(resource);
      if (held == s.end() || held->second.size() != 1) return false;
      found = *held->second.begin();
      return true;
    }));
    return found;
  }
};

// Ticket clients spread over `ports` (retrying another node on a failure).
struct ticket_load {
  ledger l;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> turn{0};
  std::vector<std::uint16_t> ports;
  std::vector<std::thread> threads;

  explicit ticket_load(std::vector<std::uint16_t> p) : ports(std::move(p)) {
    start({[this] { return ports[turn++ % ports.size()]; }, true});
  }
  // Clients that ask whatever node `to` names at each request.
  explicit ticket_load(const ticket_target& to) { start(to); }
  void start(const ticket_target& to) {
    for (int who = 0; who < 3; ++who)
      threads.emplace_back([this, to, who] { ticket_client(to, who, 0, stop, l); });
  }
  void finish() {
    stop = true;
    for (auto& t : threads) t.join();
    threads.clear();
  }
  ~ticket_load() {
    if (!threads.empty()) finish();
  }
};

// Nothing acknowledged lost, nothing matched twice, no id reused, the event
// feed whole: read from `any` node once the cluster is at rest (a hand-over
// the plan still owes would answer the reads 503 while it runs).
void check_ledger(const std::map<std::string, live_server*>& nodes, live_server& any, ledger& l,
                  const std::string& what) {
  REQUIRE(poll(30s, [&] { return at_rest(nodes); }));
  const auto [waiting, finished] = check_all(reader_of(any), l);
  check_events(reader_of(any), l);
  CHECK(l.ids_reused == 0);
  CHECK(l.acknowledged.size() > 10);
  WARN(what << ": " << l.acknowledged.size() << " acknowledged tickets, 0 lost (" << waiting
            << " waiting, " << finished << " finished), " << l.told.size()
            << " told matches kept, 0 players in two matches");
}

}  // namespace

TEST_CASE(
    "a node silently cut off from PostgreSQL stops serving by its deadline, the others take "
    "over, and healed it joins again",
    "[cluster][postgres][server][reliability][netns]") {
  if (!can_run()) return;
  faulty_cluster cl;
  const std::string victim = cl.owner_of("sessions");
  std::map<std::string, live_server*> survivors;
  std::vector<std::uint16_t> ports;
  for (const auto& [name, s] : cl.nodes)
    if (name != victim) {
      survivors[name] = s;
      ports.push_back(s->port());
    }
  referee ref(cl.nodes);
  ticket_load load(ports);
  std::this_thread::sleep_for(1500ms);

  const auto cut = clock_type::now();
  cl.net.cut(cl.path_of.at(victim));
  // The stranded node: it stops serving by its own deadline (its lease is
  // 0.6 of takeover_after from its last renewal), while its clients still
  // reach it.
  REQUIRE(poll(20s, [&] { return ref.serves_nothing(victim); }));
  const double stopped_s = seconds_between(cut, clock_type::now());
  const auto health = cl.nodes.at(victim)->get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  const auto ready = cl.nodes.at(victim)->get("/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 503);
  // The others serve everything within the takeover time.
  REQUIRE(poll(20s, [&] { return each_served_once(survivors); }));
  const double served_s = seconds_between(cut, clock_type::now());
  std::this_thread::sleep_for(1500ms);

  // Healed: the stranded node joins again as a new incarnation with a share.
  const auto healed = clock_type::now();
  cl.net.heal(cl.path_of.at(victim));
  REQUIRE(poll(30s, [&] { return settled(cl.nodes); }));
  const double rejoined_s = seconds_between(healed, clock_type::now());
  std::this_thread::sleep_for(1000ms);
  load.finish();

  const auto overlaps = ref.overlaps();
  INFO((overlaps.empty() ? std::string() : overlaps.front()));
  CHECK(overlaps.empty());
  CHECK(stopped_s < std::chrono::duration<double>(takeover_after).count());
  CHECK(served_s < serve_again_bound_s());
  CHECK(rejoined_s < serve_again_bound_s());
  check_ledger(cl.nodes, *cl.nodes.begin()->second, load.l, "silent cut of node " + victim);
  WARN("silent cut of node " << victim << " (it held the session queues): it stopped serving "
                             << stopped_s << " s after the cut, the others served everything "
                             << served_s << " s after it; healed, it had its share again "
                             << rejoined_s << " s later; 0 overlaps");
}

TEST_CASE(
    "PostgreSQL paused past the lease and then restarted: every node stops by its deadline and "
    "the cluster serves everything again",
    "[cluster][postgres][server][reliability][netns]") {
  if (!can_run()) return;
  faulty_cluster cl;
  REQUIRE(poll(20s, [&] { return settled(cl.nodes); }));
  referee ref(cl.nodes);
  ticket_load load({cl.a->port(), cl.b->port(), cl.c->port()});
  std::this_thread::sleep_for(1500ms);

  // Paused: nobody can renew; each node stops by its own deadline.
  const auto paused = clock_type::now();
  cl.pg.pause();
  REQUIRE(poll(20s, [&] {
    for (const auto& [name, s] : cl.nodes)
      if (!ref.serves_nothing(name)) return false;
    return true;
  }));
  const double stopped_s = seconds_between(paused, clock_type::now());
  std::this_thread::sleep_for(takeover_after);
  const auto resumed = clock_type::now();
  cl.pg.resume();
  REQUIRE(poll(30s, [&] { return settled(cl.nodes); }));
  const double after_pause_s = seconds_between(resumed, clock_type::now());

  // Restarted at once (its connections cut, as in a crash). The fault ends
  // when the restarted server accepts connections again (pg_ctl start -w
  // returns): its crash recovery is the database's time, not the cluster's.
  std::this_thread::sleep_for(1000ms);
  const auto stopping = clock_type::now();
  cl.pg.stop();
  cl.pg.start();
  const auto restarted = clock_type::now();
  const double restart_s = seconds_between(stopping, restarted);
  REQUIRE(poll(30s, [&] { return settled(cl.nodes); }));
  const double after_restart_s = seconds_between(restarted, clock_type::now());
  std::this_thread::sleep_for(1000ms);
  load.finish();

  const auto overlaps = ref.overlaps();
  INFO((overlaps.empty() ? std::string() : overlaps.front()));
  CHECK(overlaps.empty());
  CHECK(stopped_s < std::chrono::duration<double>(takeover_after).count());
  // Served again within the takeover time of the fault's end (a loaded test
  // machine gets one more second, as in the SIGKILL test).
  CHECK(after_pause_s < serve_again_bound_s());
  CHECK(after_restart_s < serve_again_bound_s());
  check_ledger(cl.nodes, *cl.a, load.l, "PostgreSQL paused, then restarted");
  WARN("PostgreSQL paused: every node stopped serving within "
       << stopped_s << " s; resumed, everything was served again " << after_pause_s
       << " s later; restarted (down for " << restart_s << " s), " << after_restart_s
       << " s after it accepted connections again; 0 overlaps");
}

TEST_CASE(
    "a fifth of the database's packets dropped, then a slow link: never two servers of one "
    "resource, and healed the cluster serves everything",
    "[cluster][postgres][server][reliability][netns]") {
  if (!can_run()) return;
  faulty_cluster cl;
  REQUIRE(poll(20s, [&] { return settled(cl.nodes); }));
  referee ref(cl.nodes);
  ticket_load load({cl.a->port(), cl.b->port(), cl.c->port()});
  std::this_thread::sleep_for(1000ms);

  cl.net.drop(0.2);
  std::this_thread::sleep_for(6s);
  cl.net.heal();
  const auto after_loss = clock_type::now();
  REQUIRE(poll(30s, [&] { return settled(cl.nodes); }));
  const double loss_s = seconds_between(after_loss, clock_type::now());

  cl.net.slow(256);
  std::this_thread::sleep_for(6s);
  cl.net.heal();
  const auto after_slow = clock_type::now();
  REQUIRE(poll(30s, [&] { return settled(cl.nodes); }));
  const double slow_s = seconds_between(after_slow, clock_type::now());
  std::this_thread::sleep_for(1000ms);
  load.finish();

  const auto overlaps = ref.overlaps();
  INFO((overlaps.empty() ? std::string() : overlaps.front()));
  CHECK(overlaps.empty());
  CHECK(loss_s < serve_again_bound_s());
  // A slow link's heal drops the packets queued at 256 kbit/s with the
  // queue, and the connections opened meanwhile linger: new connections
  // still failed their 400 ms connect for up to 1.6 s after the heal (the
  // nodes' logs), so this case gets a second more.
  CHECK(slow_s < serve_again_bound_s() + 1.0);
  check_ledger(cl.nodes, *cl.a, load.l, "20% loss, then a 256 kbit/s link");
  WARN("20% of packets dropped for 6 s: everything served once " << loss_s
                                                                 << " s after the heal; a 256 "
                                                                    "kbit/s link for 6 s: "
                                                                 << slow_s << " s after; "
                                                                 << "0 overlaps");
}

TEST_CASE(
    "SIGKILL of a random node, 30 times, under multi-queue ticket load: no acknowledged ticket "
    "lost, no player in two matches, no id reused",
    "[cluster][postgres][server][reliability]") {
  if (!have_postgres()) return;
  postgres_server pg;
  write_players(pg.url());
  std::map<std::string, std::unique_ptr<live_server>> owned;
  std::map<std::string, live_server*> nodes;
  for (const char* name : {"a", "b", "c"}) {
    owned[name] = std::make_unique<live_server>(node_patch(pg.url(), name), 0);
    nodes[name] = owned[name].get();
  }
  REQUIRE(poll(20s, [&] { return settled(nodes); }));
  // The clients ask the nodes that run, each request another one.
  std::mutex m;
  std::vector<std::uint16_t> live;
  for (const auto& [name, s] : nodes) live.push_back(s->port());
  std::atomic<std::uint64_t> turn{0};
  // Paced (a round every 10 ms a client): unpaced, the clients took every
  // bit of the nodes' speed, and under AddressSanitizer the three nodes on
  // two cores then missed their heartbeats until the cluster never settled.
  ticket_load load(ticket_target{[&] {
                                   std::lock_guard lock(m);
                                   return live[turn++ % live.size()];
                                 },
                                 true, std::chrono::milliseconds(10)});
  rng r(55);
  const auto pause = [&](std::uint64_t low_ms, std::uint64_t high_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(low_ms + r.below(high_ms - low_ms)));
  };
  constexpr int kills = 30;
  for (int k = 0; k < kills; ++k) {
    pause(200, 1500);
    const std::string victim = std::string(1, static_cast<char>('a' + r.below(3)));
    live_server& s = *nodes.at(victim);
    {
      std::lock_guard lock(m);
      live.erase(std::remove(live.begin(), live.end(), s.port()), live.end());
    }
    s.kill_hard();
    pause(100, 1200);  // dead for a while: sometimes past the takeover, sometimes not
    s.start();         // a new incarnation under the same name
    std::lock_guard lock(m);
    live.push_back(s.port());
  }
  REQUIRE(poll(30s, [&] { return settled(nodes); }));
  std::this_thread::sleep_for(1000ms);
  load.finish();
  check_ledger(nodes, *nodes.at("a"), load.l, std::to_string(kills) + " kills of random nodes");
  double takeovers = 0;
  for (const auto& [name, s] : nodes)
    takeovers += s->get_json("/api/cluster", view_token)["counters"]["takeovers"].get<double>();
  WARN(kills << " SIGKILLs of random nodes: " << takeovers
             << " takeovers counted by the nodes that run now");
}
