// The session queue's plug-in point: a game's initialize() rejects or
// fast-tracks tickets, its build_match() forms no match or its own; the queue
// checks every plan, and a plug-in that proposes anything (random plans,
// broken ones included) never breaks the queue's invariants.
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <set>

#include "mm/engine/error.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/session_queue_impl.hpp"
#include "session_test_support.hpp"

using namespace mm::session;
using namespace mm::session::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using mm::player_id;

namespace {

ticket_request party(std::vector<double> mmr, player_id first, double rtt = 10) {
  ticket_request r;
  for (std::size_t i = 0; i < mmr.size(); ++i) {
    ticket_player p = player(first + i, mmr[i]);
    p.rtt_ms = {{"dc0", rtt}, {"dc1", rtt + 30}};
    r.players.push_back(p);
  }
  return r;
}

// Rejects parties with a player under 0 MMR; fast-tracks full parties, in
// the teams `teams` when set.
struct gatekeeper : standard_plugin {
  std::vector<std::vector<player_id>> teams;
  bool fast_track_any = false;  // even parties that are not full
  ticket_verdict initialize(const ticket_request&, const waiting_ticket& t, const queue_config& c) {
    for (std::size_t i = 0; i < t.players.size(); ++i)
      if (t.player_mmr[i] < 0)
        return ticket_verdict::reject("players[" + std::to_string(i) + "].mmr",
                                      "this mode needs placement matches first");
    if (fast_track_any || t.players.size() == c.max_players)
      return ticket_verdict::fast_track(teams);
    return ticket_verdict::wait();
  }
};

}  // namespace

TEST_CASE("a plug-in's rejection fails the request with its field", "[session][plugin]") {
  basic_session_queue<gatekeeper> q(coop(), equator(2), 1);
  try {
    q.add(party({1000, -5}, 1), 0ms);
    FAIL("accepted");
  } catch (const mm::error& e) {
    REQUIRE_THAT(e.what(), StartsWith("players[1].mmr: this mode needs placement"));
  }
  REQUIRE(q.waiting() == 0);
  REQUIRE(q.ticket_of(1) == 0);
  REQUIRE(q.stats().created == 0);
}

TEST_CASE("a fast-tracked party plays alone at the next tick", "[session][plugin]") {
  basic_session_queue<gatekeeper> q(coop(), equator(2), 1);
  // Its players are 3000 apart, and four solos wait right at its mean: the
  // party plays as it came, and the solos play together.
  const auto full = q.add(party({0, 1000, 2000, 3000}, 1), 0ms).id;
  for (player_id p = 11; p <= 14; ++p) q.add(party({1500}, p), 0ms);
  REQUIRE(q.stats().fast_tracked == 1);
  const tick_result r = q.tick(1s);
  REQUIRE(r.matches.size() == 2);
  const bool first = r.matches[0].tickets.front() == full;
  const formed_match& alone = r.matches[first ? 0 : 1];
  const formed_match& solos = r.matches[first ? 1 : 0];
  REQUIRE(alone.tickets == std::vector<ticket_id>{full});
  REQUIRE(all_players(alone) == std::vector<player_id>{1, 2, 3, 4});
  REQUIRE(all_players(solos) == std::vector<player_id>{11, 12, 13, 14});
}

TEST_CASE("a fast-tracked party in its plug-in's teams", "[session][plugin]") {
  queue_config c = coop();
  c.teams = 2;
  c.team_size = 2;
  c.split_parties = true;
  gatekeeper g;
  g.teams = {{1, 4}, {2, 3}};
  basic_session_queue<gatekeeper> q(c, equator(2), 1, g);
  q.add(party({1000, 1100, 1200, 1300}, 1), 0ms);
  const tick_result r = q.tick(1s);
  REQUIRE(r.matches.size() == 1);
  REQUIRE(r.matches[0].teams == std::vector<std::vector<player_id>>{{1, 4}, {2, 3}});

  SECTION("teams that are not the queue's are refused") {
    for (const auto& bad : std::vector<std::vector<std::vector<player_id>>>{
             {{1, 4}, {2}},          // a team short
             {{1, 4}, {2, 3}, {}},   // three teams
             {{1, 4}, {2, 5}},       // a stranger, and player 3 left out
             {{1, 1}, {2, 3}},       // a player twice
             {{1, 2, 3, 4}, {}}}) {  // sizes off
      gatekeeper b;
      b.teams = bad;
      basic_session_queue<gatekeeper> q2(c, equator(2), 1, b);
      REQUIRE_THROWS_WITH(q2.add(party({1000, 1100, 1200, 1300}, 1), 0ms), StartsWith("teams: "));
      REQUIRE(q2.waiting() == 0);
    }
  }
}

TEST_CASE("a plug-in cannot fast-track a party that is not a match", "[session][plugin]") {
  gatekeeper g;
  g.fast_track_any = true;
  basic_session_queue<gatekeeper> q(coop(), equator(2), 1, g);
  REQUIRE_THROWS_WITH(q.add(party({1000, 1100}, 1), 0ms),
                      StartsWith("players: ") && Contains("a party of 2"));
  REQUIRE(q.waiting() == 0);
}

TEST_CASE("a fast-tracked party still waits for a datacenter within its threshold",
          "[session][plugin]") {
  basic_session_queue<gatekeeper> q(coop(), equator(2), 1);
  // 70 ms to the nearest: over the ideal 50 ms until the policy expands at 10 s.
  q.add(party({1000, 1000, 1000, 1000}, 1, 70), 0ms);
  REQUIRE(q.tick(1s).matches.empty());
  REQUIRE(q.tick(9s).matches.empty());
  const tick_result r = q.tick(10s);
  REQUIRE(r.matches.size() == 1);
  REQUIRE(r.matches[0].datacenter == 0);
  REQUIRE(r.matches[0].worst_rtt_ms == 70);
}

namespace {

// Forms what `choose` says for every seed.
struct scripted : standard_plugin {
  std::function<build_decision(const waiting_ticket&, std::span<const plugin_candidate>)> choose;
  build_decision build_match(const waiting_ticket& seed, std::span<const plugin_candidate> cs,
                             const match_context&) {
    return choose(seed, cs);
  }
};

}  // namespace

TEST_CASE("build_match replaces the comparison, within the queue's checks", "[session][plugin]") {
  scripted s;
  SECTION("none: nothing forms") {
    s.choose = [](auto&, auto) { return build_decision::none(); };
    basic_session_queue<scripted> q(one_vs_one(), latency_model{}, 1, s);
    q.add(solo(1, 1000), 0ms);
    q.add(solo(2, 1000), 0ms);
    REQUIRE(q.tick(1s).matches.empty());
    REQUIRE(q.waiting() == 2);
  }
  SECTION("a plan: the farthest admitted candidate, not the nearest") {
    s.choose = [](auto&, std::span<const plugin_candidate> cs) {
      return cs.empty() ? build_decision::none() : build_decision::plan({cs.size() - 1});
    };
    basic_session_queue<scripted> q(one_vs_one(), latency_model{}, 1, s);
    q.add(solo(1, 1000), 0ms);
    q.add(solo(2, 1010), 1ms);
    q.add(solo(3, 1090), 2ms);
    const tick_result r = q.tick(1s);
    REQUIRE(r.matches.size() == 1);
    REQUIRE(all_players(r.matches[0]) == std::vector<player_id>{1, 3});
    REQUIRE(r.matches[0].teams.size() == 2);
  }
  SECTION("plans that fail the check form nothing and are counted") {
    int call = 0;
    s.choose = [&call](auto&, std::span<const plugin_candidate>) {
      switch (call++ % 4) {
        case 0:
          return build_decision::plan({7});  // no such candidate
        case 1:
          return build_decision::plan({0, 0});  // the same one twice
        case 2:
          return build_decision::plan({});  // one player: under min_players
        default:
          return build_decision::plan({0}, {{1, 2}, {}});  // teams of the wrong sizes
      }
    };
    basic_session_queue<scripted> q(one_vs_one(), latency_model{}, 1, s);
    q.add(solo(1, 1000), 0ms);
    q.add(solo(2, 1000), 0ms);
    for (int i = 0; i < 3; ++i) REQUIRE(q.tick(1s).matches.empty());
    REQUIRE(q.stats().rejected_plans == 6);  // two seeds a tick
    REQUIRE(q.waiting() == 2);
  }
  SECTION("a plan whose tickets share no datacenter within their thresholds") {
    // Ticket 1 is near both datacenters, 2 only near dc0, 3 only near dc1:
    // both are candidates of 1, but the three together have no datacenter.
    std::size_t first_candidates = 0;
    s.choose = [&](const waiting_ticket& seed, std::span<const plugin_candidate> cs) {
      if (seed.players.front() == 1) first_candidates = cs.size();
      return build_decision::plan({0, 1}, {{1, 2, 3}});
    };
    queue_config c = coop(3);
    basic_session_queue<scripted> q(c, equator(2), 1, s);
    q.add(with_rtt(1, 1000, {20, 20}), 0ms);
    q.add(with_rtt(2, 1000, {20, 300}), 1ms);
    q.add(with_rtt(3, 1000, {300, 20}), 1ms);
    REQUIRE(q.tick(1s).matches.empty());
    REQUIRE(first_candidates == 2);
    REQUIRE(q.stats().rejected_plans == 3);
    REQUIRE(q.waiting() == 3);
  }
}

namespace {

// Proposes anything: random candidates (repeats and positions past the end
// included), random teams, sometimes the queue's own build.
struct chaos : standard_plugin {
  mm::rng* rng;
  build_decision build_match(const waiting_ticket& seed, std::span<const plugin_candidate> cs,
                             const match_context& ctx) {
    mm::rng& r = *rng;
    const auto roll = r() % 8;
    if (roll == 0) return build_decision::standard();
    if (roll == 1) return build_decision::none();
    std::vector<std::size_t> members;
    const std::size_t n = r() % 6;
    for (std::size_t i = 0; i < n; ++i) members.push_back(r() % (cs.size() + 1));
    if (roll < 5) return build_decision::plan(members);
    // Teams: the players of the seed and the named candidates, dealt out.
    std::vector<player_id> players = seed.players;
    for (std::size_t m : members)
      if (m < cs.size())
        players.insert(players.end(), cs[m].ticket->players.begin(), cs[m].ticket->players.end());
    std::vector<std::vector<player_id>> teams(std::max<std::uint32_t>(ctx.config.teams, 1));
    for (player_id p : players) teams[r() % teams.size()].push_back(p);
    return build_decision::plan(members, teams);
  }
};

}  // namespace

TEST_CASE("a plug-in proposing anything never breaks the queue's invariants",
          "[session][plugin][property]") {
  mm::rng r(99);
  std::size_t matches = 0, planned = 0;
  for (int run = 0; run < 300; ++run) {
    queue_config c = coop(4);
    c.teams = 2;
    c.team_size = 2;
    c.max_party_size = 2;
    c.rules = {skill(200, {100, 5s, 1000})};
    chaos plugin;
    plugin.rng = &r;
    basic_session_queue<chaos> q(c, equator(3), static_cast<std::uint64_t>(run) + 1, plugin);
    std::set<ticket_id> done;
    std::map<ticket_id, std::vector<player_id>> party_of;
    std::map<ticket_id, double> rtt_of;  // to dc0; dc1 is 30 ms farther, dc2 unknown
    std::map<ticket_id, time_ms> created;
    player_id next = 1;
    for (int t = 0; t < 20; ++t) {
      const time_ms now = std::chrono::seconds(t);
      for (int k = 0; k < 6; ++k) {
        const std::size_t size = 1 + r() % 2;
        std::vector<double> mmr;
        for (std::size_t i = 0; i < size; ++i) mmr.push_back(1000 + static_cast<double>(r() % 800));
        const double rtt = static_cast<double>(r() % 90);
        const ticket_id id = q.add(party(mmr, next, rtt), now).id;
        rtt_of[id] = rtt;
        created[id] = now;
        for (std::size_t i = 0; i < size; ++i) party_of[id].push_back(next + i);
        next += size;
      }
      const tick_result res = q.tick(now);
      for (const formed_match& m : res.matches) {
        ++matches;
        std::vector<player_id> expected;
        for (ticket_id id : m.tickets) {
          REQUIRE(done.insert(id).second);  // no ticket in two matches
          REQUIRE_FALSE(q.is_waiting(id));
          expected.insert(expected.end(), party_of[id].begin(), party_of[id].end());
        }
        std::sort(expected.begin(), expected.end());
        REQUIRE(all_players(m) == expected);  // exactly the tickets' players
        REQUIRE(m.teams.size() == 2);
        for (const auto& team : m.teams) REQUIRE(team.size() == 2);  // exact team sizes
        // The datacenter within every ticket's threshold at formation.
        REQUIRE(m.datacenter < 2);
        for (ticket_id id : m.tickets) {
          const double rtt = rtt_of[id] + (m.datacenter == 1 ? 30 : 0);
          REQUIRE(rtt <= max_rtt_after(*c.latency, now - created[id]));
        }
      }
      for (ticket_id id : res.expired) REQUIRE(done.insert(id).second);
      for (ticket_id id : res.failed) REQUIRE(done.insert(id).second);
    }
    planned += q.stats().rejected_plans;
  }
  // The run exercised both sides of the check.
  REQUIRE(matches > 500);
  REQUIRE(planned > 500);
}

namespace {

// Records every seed's candidates, and lets the queue build as usual.
struct recorder : standard_plugin {
  std::vector<std::vector<std::pair<ticket_id, double>>>* seen;
  build_decision build_match(const waiting_ticket& seed, std::span<const plugin_candidate> cs,
                             const match_context&) {
    std::vector<std::pair<ticket_id, double>> row{{seed.id, 0}};
    for (const auto& c : cs) row.push_back({c.ticket->id, c.distance});
    seen->push_back(std::move(row));
    return build_decision::standard();
  }
};

}  // namespace

TEST_CASE("a plug-in sees the same candidates with and without the index",
          "[session][plugin][property]") {
  mm::rng r(7);
  std::size_t seeds = 0;
  for (int run = 0; run < 200; ++run) {
    // Co-op with parties of 1..4 and one MMR rule (the index ranks from its
    // entries alone), or with a second rule (it reads the tickets).
    queue_config c = coop(4);
    c.rules = {skill(50 + static_cast<double>(r.below(200)), {50, 5s, 600})};
    if (run % 2 == 1) {
      rule level = skill(300);
      level.name = "level";
      level.attribute = "level";
      c.rules.push_back(level);
    }
    std::vector<std::vector<std::pair<ticket_id, double>>> indexed, naive;
    recorder a, b;
    a.seen = &indexed;
    b.seen = &naive;
    basic_session_queue<recorder> q(c, equator(3), 1, a), reference(c, equator(3), 1, b);
    reference.use_candidate_index(false);
    player_id next = 1;
    for (int t = 0; t < 15; ++t) {
      const time_ms now = std::chrono::seconds(t);
      for (int k = 0; k < 8; ++k) {
        const std::size_t size = 1 + r.below(4);
        std::vector<double> mmr;
        for (std::size_t i = 0; i < size; ++i)
          mmr.push_back(1000 + static_cast<double>(r.below(600)));
        ticket_request req = party(mmr, next, static_cast<double>(r.below(80)));
        for (auto& p : req.players) p.numbers = {{"level", static_cast<double>(r.below(900))}};
        next += size;
        q.add(req, now);
        reference.add(req, now);
      }
      q.tick(now);
      reference.tick(now);
      REQUIRE(indexed == naive);
    }
    seeds += indexed.size();
  }
  REQUIRE(seeds > 1000);
}
