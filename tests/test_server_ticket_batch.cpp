// POST /api/tickets with {"tickets": [...]} on the real matchmakerd: each
// ticket created as it would be alone, the results in the order sent; a
// malformed ticket refuses the whole request naming it; the bounds; the
// same identity rules as a single create (the RESP port's case is in
// test_server_resp.cpp).
#include "server_fixture.hpp"
#include "session_http.hpp"

using namespace mm;
using namespace mm::test;
using Catch::Matchers::Contains;

namespace {

json batch(const std::vector<json>& tickets) {
  json list = json::array();
  for (const json& t : tickets) list.push_back(t);
  return {{"tickets", list}};
}

}  // namespace

TEST_CASE("a batch of tickets: each created as alone, results in the order sent",
          "[server][session]") {
  live_server s(session_patch(), 100);
  // Four tickets: two created, a second ticket for player 1 (409, as alone),
  // and one for a queue that does not exist (400 naming it); nothing of one
  // stops the others.
  json party = solo("coop", 20, 1500);
  party["players"].push_back(json{{"id", 21}, {"mmr", 1490}, {"rtt_ms", {{"paris", 25}}}});
  const json answer = s.post_json(
      "/api/tickets",
      batch({solo("duel", 1, 4000), party, solo("duel", 1, 4010), solo("ranked", 3, 1500)}),
      test_token, 200);
  const json& results = answer["results"];
  REQUIRE(results.size() == 4);
  CHECK(results[0]["state"] == "waiting");
  CHECK(results[0]["queue"] == "duel");
  CHECK_FALSE(results[0].contains("status"));
  CHECK(results[1]["state"] == "waiting");
  CHECK(results[1]["queue"] == "coop");
  CHECK(results[2]["status"] == 409);
  CHECK_THAT(results[2]["error"].get<std::string>(), Contains("player 1 already waits"));
  CHECK(results[3]["status"] == 400);
  CHECK_THAT(results[3]["error"].get<std::string>(), Contains("queue: no queue 'ranked'"));
  // The created ones are the caller's, as single creates are.
  const std::string first = results[0]["ticket"].get<std::string>();
  CHECK(s.get_json("/api/tickets/" + first, test_token)["state"] == "waiting");
  CHECK(s.get_json("/api/tickets/" + first, other_test_token, 404).contains("error"));
  CHECK(results[1]["ticket"] != results[0]["ticket"]);

  // A later ticket of the batch replaces an earlier one when it asks to.
  json again = solo("duel", 1, 4020);
  again["replace_existing"] = true;
  const json replaced = s.post_json("/api/tickets", batch({again}), test_token, 200)["results"][0];
  CHECK(replaced["state"] == "waiting");
  CHECK(s.get_json("/api/tickets/" + first, test_token)["state"] == "cancelled");

  // Two that match each other, sent together, are matched.
  const json pair =
      s.post_json("/api/tickets", batch({solo("duel", 5, 1500), solo("duel", 6, 1520)}), test_token,
                  200)["results"];
  const json matched =
      s.get_json("/api/tickets/" + pair[0]["ticket"].get<std::string>() + "?wait=10", test_token);
  CHECK(matched["state"] == "matched");
  CHECK(matched["match"]["tickets"].size() == 2);
}

TEST_CASE("a malformed batch is refused whole, naming the ticket and field", "[server][session]") {
  json patch = session_patch();
  patch["http"] = {{"max_body_bytes", 1 << 20}};  // room for the largest batch
  live_server s(patch, 100);
  const auto refused = [&](const json& body, int status = 400) {
    return s.post_json("/api/tickets", body, test_token, status)["error"].get<std::string>();
  };
  json nan = solo("duel", 2, 0);
  nan["players"][0]["mmr"] = "NaN";
  CHECK_THAT(refused(batch({solo("duel", 1, 1500), nan})),
             Contains("tickets[1]: players[0].mmr must be a number"));
  CHECK_THAT(refused({{"tickets", json::array()}}), Contains("tickets must hold at least one"));
  CHECK_THAT(refused({{"tickets", "all"}}), Contains("tickets must be a list"));
  CHECK_THAT(refused({{"tickets", json::array({solo("duel", 1, 1500)})}, {"queue", "duel"}}),
             Contains("unknown field 'queue'"));
  json many = {{"tickets", json::array()}};
  for (std::uint64_t id = 1; id <= 1001; ++id) many["tickets"].push_back(solo("duel", id, 1500));
  CHECK_THAT(refused(many), Contains("tickets: at most 1000 tickets per request, got 1001"));
  // Nothing of a refused batch was created: player 1 may wait now.
  create(s, solo("duel", 1, 9000));
  // The role of a single create.
  CHECK(s.post("/api/tickets", batch({solo("duel", 3, 1500)}).dump(), view_token)->status == 403);
  // The largest batch is taken.
  json most = {{"tickets", json::array()}};
  for (std::uint64_t id = 100; id < 1100; ++id)
    most["tickets"].push_back(solo("duel", id, 5000 + 1000.0 * static_cast<double>(id)));
  const json results = s.post_json("/api/tickets", most, test_token, 200)["results"];
  REQUIRE(results.size() == 1000);
  std::size_t waiting = 0;
  for (const auto& r : results) waiting += r["state"] == "waiting" ? 1 : 0;
  CHECK(waiting == 1000);
}
