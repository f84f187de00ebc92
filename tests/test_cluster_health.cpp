// GET /readyz of a node of a cluster on a real PostgreSQL that the test stops
// and starts again: not ready while the database is away (the store cannot
// be read, the heartbeat is not renewed: the node is fenced and serves
// nothing), ready again once it is back (docs/operations.md, "Health probes").
#include "postgres_available.hpp"
#include "server_fixture.hpp"

using mm::test::have_postgres;
using mm::test::json;
using mm::test::live_server;
using mm::test::postgres_server;

namespace {

// Until GET /readyz answers `status`; its last body (polling a process).
json readiness_within(const live_server& s, int status, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  json last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = s.get("/readyz");
    if (r) {
      last = json::parse(r->body, nullptr, false);
      if (r->status == status) return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO("the last answer: " << last.dump());
  FAIL("GET /readyz did not answer " << status << " within " << limit.count() << " s");
  return last;
}

bool names(const json& report, const std::string& check) {
  for (const auto& n : report.value("not_ready", json::array()))
    if (n == check) return true;
  return false;
}

}  // namespace

TEST_CASE(
    "health: a node's /readyz is false while its PostgreSQL is stopped, and true again "
    "once it is back",
    "[cluster][health][postgres]") {
  if (!have_postgres()) return;
  postgres_server pg;
  live_server node({{"database", {{"url", pg.url()}}},
                    {"cluster", {{"total", 2}, {"takeover_after", "2s"}}},
                    {"matchmaker", {{"state_snapshot_interval", "1s"}}}},
                   0);
  const json ready = readiness_within(node, 200, std::chrono::seconds(60));
  CHECK(ready["checks"]["cluster"] == "ok");
  CHECK(ready["checks"]["store"] == "ok");
  CHECK(node.get_json("/healthz", "") == json({{"alive", true}}));

  pg.stop();
  // The store cannot be read at once; the heartbeat lapses within
  // takeover_after, and the node is fenced.
  json away = readiness_within(node, 503, std::chrono::seconds(30));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!names(away, "cluster") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    away = readiness_within(node, 503, std::chrono::seconds(5));
  }
  INFO(away.dump());
  CHECK(names(away, "store"));
  CHECK(names(away, "cluster"));
  CHECK(node.get_json("/healthz", "") == json({{"alive", true}}));  // alive all along

  pg.start();
  const json back = readiness_within(node, 200, std::chrono::seconds(90));
  CHECK(back["not_ready"].empty());
  CHECK(node.running());
}
