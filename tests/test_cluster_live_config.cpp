// The session queues' configuration changed on one node of a cluster on a
// real PostgreSQL (docs/operations.md, "Changing the configuration while it
// runs"): both nodes apply the same version within a second, the node that
// runs the queues runs it (explain shows the new rule), and a node started
// afterwards starts from it.
#include "postgres_available.hpp"
#include "server_fixture.hpp"
#include "ticket_ledger.hpp"

using mm::test::admin_token;
using mm::test::have_postgres;
using mm::test::json;
using mm::test::live_server;
using mm::test::postgres_server;
using mm::test::test_token;
using mm::test::view_token;

namespace {

json node(const std::string& url, const std::string& owned) {
  json c = {{"database", {{"url", url}}},
            {"cluster", {{"total", 2}, {"owned", owned}, {"takeover_after", "2s"}}}};
  c.merge_patch(mm::test::ticket_queues_patch());
  c["sessions"]["queues"][0]["rules"] = {{{"name", "skill"}, {"max_difference", 100}}};
  return c;
}

// The document in force with the duel's skill rule at `max_difference`.
json with_skill(const live_server& s, double max_difference) {
  json doc = s.get_json("/api/admin/config/sessions", view_token)["document"];
  doc["queues"][0]["rules"][0]["max_difference"] = max_difference;
  return doc;
}

bool applies_within(const live_server& s, std::int64_t version, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (s.get_json("/api/admin/config/sessions", view_token)["applied_version"] == version)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a process
  }
  return false;
}

bool runs_sessions(const live_server& s) {
  const json view = s.get_json("/api/cluster", view_token);
  for (const auto& o : view.value("owned", json::array()))
    if (o["resource"] == "sessions") return view.value("serving", false);
  return false;
}

}  // namespace

TEST_CASE("live config: two nodes on one PostgreSQL apply the same version",
          "[cluster][postgres][live_config]") {
  if (!have_postgres()) return;
  postgres_server pg;
  live_server a(node(pg.url(), "0"), 0);
  live_server b(node(pg.url(), "1"), 0);
  // The file seeded version 1 once, whichever node came first.
  CHECK(applies_within(a, 1, std::chrono::seconds(10)));
  CHECK(applies_within(b, 1, std::chrono::seconds(10)));
  // Settled: both nodes live, every lease with the owner the plan gives it,
  // the queues running on one node.
  const auto settled = [&] {
    const json view = a.get_json("/api/cluster", view_token);
    if (view["nodes"].size() != 2) return false;
    for (const auto& l : view["leases"])
      if (l["owner"] != l["planned_owner"]) return false;
    return runs_sessions(a) != runs_sessions(b);
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!settled() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling processes
  REQUIRE(runs_sessions(a) != runs_sessions(b));
  live_server& holder = runs_sessions(a) ? a : b;
  live_server& other = runs_sessions(a) ? b : a;

  const json ticket = {{"queue", "duel"},
                       {"players", {{{"id", 1}, {"mmr", 5000}, {"rtt_ms", {{"paris", 20}}}}}}};
  const std::string id =
      holder.post_json("/api/tickets", ticket, test_token, 201)["ticket"].get<std::string>();
  const auto threshold = [&] {
    const json why = holder.get_json("/api/tickets/" + id + "/explain", test_token);
    return why["queues"][0]["rules"][0]["threshold"].get<double>();
  };
  CHECK(threshold() == 100);

  // Applied through the node that does not run the queues.
  const json applied = other.post_json(
      "/api/admin/config/sessions",
      {{"document", with_skill(other, 450)}, {"comment", "from the other node"}}, admin_token);
  CHECK(applied["version"] == 2);
  CHECK(applied["queues_changed"] == 0);  // not its queues
  CHECK(applies_within(holder, 2, std::chrono::seconds(5)));
  CHECK(applies_within(other, 2, std::chrono::seconds(5)));
  CHECK(threshold() == 450);
  for (const auto* s : {&a, &b}) {
    const json now = s->get_json("/api/admin/config/sessions", view_token);
    CHECK(now["version"] == 2);
    CHECK(now["author"] == "ops");
    CHECK(now["document"]["queues"][0]["rules"][0]["max_difference"] == 450);
  }
  // Two changes from the same base: the second is refused.
  other.post_json("/api/admin/config/sessions",
                  {{"document", with_skill(other, 300)}, {"base_version", 2}}, admin_token);
  other.post_json("/api/admin/config/sessions",
                  {{"document", with_skill(other, 200)}, {"base_version", 2}}, admin_token, 409);
  CHECK(applies_within(holder, 3, std::chrono::seconds(5)));
  CHECK(threshold() == 300);
}
