// Session queue configuration: the rules' thresholds over time, and the
// checks that refuse a queue that cannot run, each naming its key.
#include <catch2/catch.hpp>

#include "mm/engine/options.hpp"
#include "mm/session/queue_config.hpp"

using namespace mm::session;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

rule mmr_rule() {
  rule r;
  r.name = "skill";
  r.kind = rule_kind::difference;
  r.max_difference = 100;
  r.expand = {50, 5s, 400};
  return r;
}

// Two teams of three, parties up to three, MMR and latency rules.
queue_config three_vs_three() {
  queue_config c;
  c.name = "ranked_3v3";
  c.min_players = 6;
  c.max_players = 6;
  c.teams = 2;
  c.team_size = 3;
  c.max_party_size = 3;
  c.latency = latency_stages{};
  rule balance;
  balance.name = "balance";
  balance.kind = rule_kind::team_balance;
  balance.max_difference = 50;
  rule ping;
  ping.name = "ping";
  ping.kind = rule_kind::latency;
  c.rules = {mmr_rule(), balance, ping};
  return c;
}

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  for (const auto& p : problems)
    if (p.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("a difference rule's threshold grows by its steps up to its limit", "[session][rules]") {
  const rule r = mmr_rule();  // 100, +50 every 5 s, up to 400
  CHECK(threshold_after(r, 0ms) == 100);
  CHECK(threshold_after(r, 4999ms) == 100);
  CHECK(threshold_after(r, 5s) == 150);
  CHECK(threshold_after(r, 9999ms) == 150);
  CHECK(threshold_after(r, 10s) == 200);
  CHECK(threshold_after(r, 29999ms) == 350);
  CHECK(threshold_after(r, 30s) == 400);
  CHECK(threshold_after(r, 1h) == 400);
  CHECK(threshold_after(r, -5s) == 100);  // a clock step back is no wait

  rule fixed = mmr_rule();
  fixed.expand = {};
  CHECK(threshold_after(fixed, 1h) == 100);
}

TEST_CASE("a rule stops filtering after seconds_until_optional", "[session][rules]") {
  rule r = mmr_rule();
  CHECK(filters_after(r, 1h));
  r.optional_after = 15s;
  CHECK(filters_after(r, 14999ms));
  CHECK_FALSE(filters_after(r, 15s));
}

TEST_CASE("rule kinds by name", "[session][rules]") {
  for (auto k : {rule_kind::difference, rule_kind::equality, rule_kind::intersection,
                 rule_kind::latency, rule_kind::team_balance})
    CHECK(rule_kind_named(to_string(k)) == k);
  CHECK_FALSE(rule_kind_named("nearest"));
}

TEST_CASE("a rule that cannot work is refused, naming its key", "[session][rules]") {
  CHECK(check(mmr_rule(), "r.").empty());
  rule r = mmr_rule();
  r.max_difference = 0;
  r.weight = -1;
  r.expand = {10, 0ms, 50};
  const auto e = check(r, "queues.ranked.rules[0].");
  CHECK(mentions(e, "queues.ranked.rules[0].max_difference"));
  CHECK(mentions(e, "queues.ranked.rules[0].weight"));
  CHECK(mentions(e, "queues.ranked.rules[0].expansion.every"));

  rule low_limit = mmr_rule();
  low_limit.expand.limit = 80;
  CHECK(mentions(check(low_limit, ""), "expansion.limit"));
  rule nan_diff = mmr_rule();
  nan_diff.max_difference = std::nan("");
  CHECK(mentions(check(nan_diff, ""), "max_difference"));
  rule overlap;
  overlap.kind = rule_kind::intersection;
  overlap.attribute = "languages";
  overlap.min_overlap = 0;
  CHECK(mentions(check(overlap, "x."), "x.min_overlap"));
  overlap.min_overlap = 1;
  CHECK(check(overlap, "x.").empty());
  rule no_attribute;
  no_attribute.kind = rule_kind::equality;
  no_attribute.attribute = "";
  CHECK(mentions(check(no_attribute, "x."), "x.attribute"));
}

TEST_CASE("a queue that can run passes its checks", "[session][config]") {
  CHECK(candidates_per_seed(three_vs_three()) == 24);  // four per seat
  queue_config duel;
  CHECK(candidates_per_seed(duel) == 8);
  duel.candidates = 5;
  CHECK(candidates_per_seed(duel) == 5);
  CHECK(check(three_vs_three(), "queues.ranked_3v3.").empty());
  CHECK_NOTHROW(validate(three_vs_three(), "queues.ranked_3v3."));

  queue_config coop;  // four players, no teams, full parties allowed
  coop.name = "coop";
  coop.min_players = 4;
  coop.max_players = 4;
  coop.teams = 0;
  coop.max_party_size = 4;
  coop.latency = latency_stages{};
  CHECK(check(coop, "queues.coop.").empty());

  queue_config split = three_vs_three();  // a premade six split across the teams
  split.max_party_size = 6;
  split.split_parties = true;
  CHECK(check(split, "").empty());
}

TEST_CASE("a queue that cannot run is refused with every problem named", "[session][config]") {
  queue_config c = three_vs_three();
  c.max_players = 5;     // not 2 x 3
  c.max_party_size = 4;  // more than a team without split_parties
  c.tick = 0ms;
  c.give_up_after = -1s;
  c.latency->ideal_ms = 0;
  c.rules.push_back(mmr_rule());  // "skill" twice
  const auto e = check(c, "queues.ranked_3v3.");
  CHECK(mentions(e, "queues.ranked_3v3.max_players must be teams x team_size (6)"));
  CHECK(mentions(e, "queues.ranked_3v3.max_party_size (4) must not exceed team_size (3)"));
  CHECK(mentions(e, "queues.ranked_3v3.tick"));
  CHECK(mentions(e, "queues.ranked_3v3.give_up_after"));
  CHECK(mentions(e, "queues.ranked_3v3.latency.ideal_ms"));
  CHECK(mentions(e, "queues.ranked_3v3.rules[3].name 'skill' is used twice"));

  queue_config no_policy = three_vs_three();
  no_policy.latency.reset();
  CHECK(mentions(check(no_policy, "q."), "q.rules[2].kind latency needs"));
  queue_config one_team = three_vs_three();
  one_team.teams = 1;
  one_team.team_size = 6;
  CHECK(mentions(check(one_team, "q."), "q.rules[1].kind team_balance needs at least two teams"));
  queue_config sizes;
  sizes.min_players = 4;
  sizes.max_players = 2;
  sizes.teams = 0;
  CHECK(mentions(check(sizes, "q."), "q.max_players must be at least min_players (4)"));
  sizes.min_players = 0;
  CHECK(mentions(check(sizes, "q."), "q.min_players"));

  try {
    validate(c, "queues.ranked_3v3.");
    FAIL("validate accepted a queue that cannot run");
  } catch (const mm::config_error& err) {
    CHECK_THAT(err.what(), Contains("ranked_3v3") && Contains("tick") && Contains("give_up_after"));
    CHECK(err.code() == mm::errc::invalid_config);
  }
}
