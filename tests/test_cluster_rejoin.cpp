// Nodes that join again together, as after an outage of the database or of
// every node's link to it: each takes its own share at once, and nothing is
// started twice (the first to join used to take everything and hand most of
// it over as the others came). Lease agents stepped by the test on a real
// PostgreSQL server.
#include <catch2/catch.hpp>
#include <memory>
#include <thread>

#include "mm/cluster/lease_agent.hpp"
#include "mm/testing/postgres_server.hpp"
#include "postgres_available.hpp"

using mm::test::have_postgres;
using mm::test::postgres_server;
using namespace std::chrono_literals;

namespace {

// A lease agent whose hooks count what it starts and hands over.
struct counted_node {
  std::shared_ptr<mm::cluster::serving_deadline> deadline =
      std::make_shared<mm::cluster::serving_deadline>();
  std::size_t starts = 0, hand_overs = 0;
  std::unique_ptr<mm::cluster::lease_agent> agent;

  counted_node(const std::string& url, const std::string& name) {
    mm::cluster::agent_config c;
    c.database_url = url;
    c.me = {name, "http://" + name, "", {}};
    c.resources = {"mm-0", "mm-1", "mm-2", "mm-3", "mm-4", "mm-5", "sessions"};
    c.takeover_after = 1000ms;  // lease 600 ms, rounds every 150 ms
    mm::cluster::ownership_hooks hooks{
        [this](const std::string&, const std::string&, std::uint64_t) {
          ++starts;
          return true;
        },
        [this](const std::string&, bool handing_over) { hand_overs += handing_over ? 1 : 0; }};
    agent = std::make_unique<mm::cluster::lease_agent>(c, hooks, deadline);
  }
  std::size_t owned() const { return agent->report().owned.size(); }
};

}  // namespace

TEST_CASE(
    "nodes that join again together after an outage each take their own share and start "
    "nothing twice",
    "[cluster][leases][postgres]") {
  if (!have_postgres()) return;
  postgres_server pg;
  counted_node a(pg.url(), "a"), b(pg.url(), "b"), c(pg.url(), "c");
  const auto settled = [&] {
    return a.owned() + b.owned() + c.owned() == 7 && a.owned() >= 2 && b.owned() >= 2 &&
           c.owned() >= 2;
  };
  const auto step_all_until_settled = [&] {
    for (int i = 0; i < 100 && !settled(); ++i) {
      for (auto* n : {&a, &b, &c}) n->agent->step();
      std::this_thread::sleep_for(50ms);
    }
    return settled();
  };
  REQUIRE(step_all_until_settled());

  // The outage: nobody renews for longer than the lease. Every heartbeat
  // expires; nobody is declared dead (nobody takes anything meanwhile).
  std::this_thread::sleep_for(900ms);
  for (auto* n : {&a, &b, &c}) {
    n->starts = 0;
    n->hand_overs = 0;
  }
  // C comes back first: its renewal is refused (it stops what it held), its
  // next round joins anew. It takes its own share, not everything.
  c.agent->step();
  c.agent->step();
  CHECK(c.agent->report().counters.joins == 2);
  CHECK(c.owned() >= 2);
  CHECK(c.owned() <= 3);
  // A and B come back moments later and take theirs: nothing moves.
  for (auto* n : {&a, &b}) {
    n->agent->step();
    n->agent->step();
  }
  REQUIRE(step_all_until_settled());
  CHECK(a.starts + b.starts + c.starts == 7);  // each resource started once
  CHECK(a.hand_overs + b.hand_overs + c.hand_overs == 0);
}
