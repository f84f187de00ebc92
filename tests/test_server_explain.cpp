// "Why is my ticket waiting?" through the real matchmakerd over HTTP and
// mmctl: a ticket's explanation names the datacenter that keeps a
// candidate out and the players a match still needs; another client's
// ticket does not exist for it and its candidates come without their ids;
// a running match's open seats are explained the same way.
#include "server_fixture.hpp"
#include "session_http.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

json near_tokyo(const char* queue, std::uint64_t id, double mmr) {
  return {{"queue", queue},
          {"players", {{{"id", id}, {"mmr", mmr}, {"rtt_ms", {{"paris", 240}, {"tokyo", 20}}}}}}};
}

}  // namespace

TEST_CASE("a waiting ticket and a running match explain why they wait over HTTP and mmctl",
          "[server][session][explain]") {
  json patch = session_patch();
  patch["sessions"]["wait_reasons_every"] = "100ms";
  live_server s(patch, 100);
  const auto a = create(s, solo("coop", 1, 1500));
  const auto b = create(s, near_tokyo("coop", 2, 1500), other_test_token);
  const auto c = create(s, solo("coop", 3, 1500));

  const json e = s.get_json("/api/tickets/" + a + "/explain", test_token);
  CHECK(e["ticket"] == a);
  CHECK(e["state"] == "waiting");
  REQUIRE(e["queues"].size() == 1);
  const json& q = e["queues"][0];
  CHECK(q["queue"] == "coop");
  CHECK(q["stage"]["name"] == "ideal");
  CHECK(q["stage"]["max_rtt_ms"] == 50);
  CHECK(q["datacenters"]["names"] == json({"paris"}));
  CHECK(q["players_needed"] == 3);
  CHECK(q["candidates"]["waiting"] == 2);
  CHECK(q["candidates"]["judged"] == 2);
  CHECK(q["candidates"]["compatible"] == 1);
  CHECK(q["candidates"]["refused"]["datacenter"] == 1);
  CHECK(q["best_datacenter"]["name"] == "paris");
  CHECK(q["verdict"] == "too_few_players");
  CHECK_THAT(q["summary"].get<std::string>(),
             Contains("1 player of other tickets could play with it at paris; a match needs 3 "
                      "more players"));
  // The other client's candidate is there, without its id; ours with it.
  std::set<json> ids;
  for (const auto& x : q["candidates"]["nearest"]) ids.insert(x["ticket"]);
  CHECK(ids == std::set<json>{json(nullptr), json(c)});
  for (const auto& x : q["candidates"]["nearest"])
    CHECK(x["refused_by"] == (x["ticket"].is_null() ? "datacenter" : "none"));
  // An admin sees every id; another client does not see the ticket at all.
  std::set<json> all;
  const json as_admin =
      s.get_json("/api/tickets/" + a + "/explain", admin_token);  // named: the loop reads it
  for (const auto& x : as_admin["queues"][0]["candidates"]["nearest"]) all.insert(x["ticket"]);
  CHECK(all == std::set<json>{json(b), json(c)});
  CHECK_THAT(s.get_json("/api/tickets/" + a + "/explain", other_test_token, 404)["error"]
                 .get<std::string>(),
             Contains("no waiting ticket"));
  CHECK(s.get_json("/api/tickets/zz/explain", test_token, 404).contains("error"));
  CHECK_THAT(s.get_json("/api/tickets/" + a + "/explain?limit=0", test_token, 400)["error"]
                 .get<std::string>(),
             Contains("limit"));
  CHECK(
      s.get_json("/api/tickets/" + a + "/explain?limit=10001", test_token, 400).contains("error"));
  CHECK(s.get_json("/api/tickets/" + a + "/explain?limit=1",
                   test_token)["queues"][0]["candidates"]["judged"] == 1);

  // The queue samples why its tickets wait: in its report and on /metrics.
  json reasons;
  for (int i = 0; i < 100 && reasons.empty(); ++i) {
    const json queues = s.get_json("/api/queues", view_token);  // named: the loop reads it
    for (const auto& x : queues["queues"])
      if (x["queue"] == "coop") reasons = x["wait_reasons"];
    if (reasons.empty()) std::this_thread::sleep_for(50ms);  // polls a live server's clock
  }
  REQUIRE_FALSE(reasons.empty());
  for (const auto& [reason, n] : reasons.items()) {
    CHECK((reason == "datacenter" || reason == "too_few_players"));
    CHECK(n.get<std::uint64_t>() > 0);
  }
  const auto metrics = s.get("/metrics", view_token);
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Contains("mm_session_wait_reasons_total{queue=\"coop\",reason=\""));

  // mmctl: the verdict in words, then the JSON.
  auto [status, out] = run_binary({MMCTL_BINARY, "ticket", "explain", a},
                                  {{"MMCTL_URL", s.url()}, {"MMCTL_TOKEN", test_token}});
  CHECK(status == 0);
  CHECK_THAT(out, Contains("coop: 1 player of other tickets could play with it at paris"));
  CHECK_THAT(out, Contains("stage ideal (50 ms)"));
  CHECK_THAT(out, Contains("(another's) MMR 1500"));

  // A running match at tokyo with two open seats takes the tokyo ticket;
  // the paris ones cannot take the seat left.
  s.post_json("/api/backfills",
              {{"queue", "coop"},
               {"match_id", "m-1"},
               {"datacenter", "tokyo"},
               {"teams",
                {{{{"id", 100}, {"mmr", 1500}, {"rtt_ms", {{"tokyo", 20}}}},
                  {{"id", 101}, {"mmr", 1500}, {"rtt_ms", {{"tokyo", 20}}}}}}}},
              test_token, 201);
  REQUIRE(s.get_json("/api/tickets/" + b + "?wait=10", other_test_token)["state"] == "matched");
  const json m = s.get_json("/api/backfills/m-1/explain", test_token);
  CHECK(m["match_id"] == "m-1");
  CHECK(m["open_seats"] == 1);
  CHECK(m["datacenters"]["names"] == json({"tokyo"}));
  CHECK(m["candidates"]["refused"]["datacenter"] == 2);
  CHECK(m["verdict"] == "too_few_players");
  CHECK_THAT(m["summary"].get<std::string>(), Contains("no waiting ticket fits its 1 open seat"));
  CHECK(s.get_json("/api/backfills/m-1/explain", other_test_token, 404).contains("error"));
  auto [bstatus, bout] = run_binary({MMCTL_BINARY, "backfill", "explain", "m-1"},
                                    {{"MMCTL_URL", s.url()}, {"MMCTL_TOKEN", test_token}});
  CHECK(bstatus == 0);
  CHECK_THAT(bout, Contains("coop: no waiting ticket fits its 1 open seat"));
  // A matched ticket waits no more.
  CHECK(s.get_json("/api/tickets/" + b + "/explain", other_test_token, 404).contains("error"));
}
