// Two game modes that change a session queue at compile time, through its
// plug-in point (mm/session/session_plugin.hpp, docs/session.md):
//
//  - Ranked 3v3. A premade party of six is a match by itself: it is split
//    into the two trios of nearest total MMR and plays at once. Smaller
//    parties are never split: the mode builds its matches nearest MMR first
//    and puts each party on one team.
//  - Co-op for four. A full party of four skips the queue (fast-tracked to a
//    datacenter within its latency threshold); others wait for the loop.
//
// The program runs both on a virtual clock, prints the matches and exits with
// 1 when one is not what the mode promises (it runs in the test suite).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <span>
#include <vector>

#include "mm/session/session_queue_impl.hpp"

namespace modes {

using namespace mm::session;
using mm::player_id;
using namespace std::chrono_literals;

// Ranked 3v3: a queue of 2 teams of 3 that takes parties of up to 6.
struct ranked_3v3 : standard_plugin {
  static queue_config config() {
    queue_config c;
    c.name = "ranked_3v3";
    c.min_players = c.max_players = 6;
    c.teams = 2;
    c.team_size = 3;
    c.max_party_size = 6;
    c.split_parties = true;  // needed for the six; the mode keeps smaller parties whole
    rule skill;
    skill.name = "skill";
    skill.max_difference = 150;
    skill.expand = {50, 10s, 400};
    c.rules = {skill};
    return c;
  }

  ticket_verdict initialize(const ticket_request&, const waiting_ticket& t, const queue_config& c) {
    if (t.players.size() != c.max_players) return ticket_verdict::wait();
    // The trio with player 0 whose MMR sum is nearest half the party's: 10
    // ways to choose its two others.
    double total = 0;
    for (double v : t.player_mmr) total += v;
    std::size_t best_i = 1, best_j = 2;
    double best_gap = INFINITY;
    for (std::size_t i = 1; i < 6; ++i)
      for (std::size_t j = i + 1; j < 6; ++j) {
        const double trio = t.player_mmr[0] + t.player_mmr[i] + t.player_mmr[j];
        const double gap = std::abs(2 * trio - total);
        if (gap < best_gap) best_gap = gap, best_i = i, best_j = j;
      }
    std::vector<std::vector<player_id>> teams(2);
    for (std::size_t p = 0; p < 6; ++p)
      teams[p == 0 || p == best_i || p == best_j ? 0 : 1].push_back(t.players[p]);
    return ticket_verdict::fast_track(std::move(teams));
  }

  build_decision build_match(const waiting_ticket& seed,
                             std::span<const plugin_candidate> candidates, const match_context&) {
    // Nearest first, a party joins while every party still fits on a team
    // whole; the teams then balance the parties' MMR.
    std::vector<party_seat> seats{seat(seed)};
    std::uint32_t players = static_cast<std::uint32_t>(seed.players.size());
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < candidates.size() && players < 6; ++i) {
      const waiting_ticket& c = *candidates[i].ticket;
      seats.push_back(seat(c));
      if (players + c.players.size() > 6 || !parties_fit(seats, 2, 3)) {
        seats.pop_back();
        continue;
      }
      players += static_cast<std::uint32_t>(c.players.size());
      members.push_back(i);
    }
    if (players < 6) return build_decision::none();  // wait for more players
    const auto team_of_party = assign_parties(seats, 2, 3);
    if (!team_of_party) return build_decision::none();
    std::vector<std::vector<player_id>> teams(2);
    const auto place = [&](const waiting_ticket& t, std::uint32_t team) {
      teams[team].insert(teams[team].end(), t.players.begin(), t.players.end());
    };
    place(seed, (*team_of_party)[0]);
    for (std::size_t k = 0; k < members.size(); ++k)
      place(*candidates[members[k]].ticket, (*team_of_party)[k + 1]);
    return build_decision::plan(std::move(members), std::move(teams));
  }

  static party_seat seat(const waiting_ticket& t) {
    double sum = 0;
    for (double v : t.player_mmr) sum += v;
    return {static_cast<std::uint32_t>(t.players.size()), sum};
  }
};

// Co-op for four, with the staged latency policy.
struct coop_4 : standard_plugin {
  static queue_config config() {
    queue_config c;
    c.name = "coop_4";
    c.min_players = c.max_players = 4;
    c.teams = 0;
    c.team_size = 0;
    c.max_party_size = 4;
    rule skill;
    skill.name = "skill";
    skill.max_difference = 200;
    rule ping;
    ping.name = "ping";
    ping.kind = rule_kind::latency;
    c.rules = {skill, ping};
    c.latency = latency_stages{};
    return c;
  }

  ticket_verdict initialize(const ticket_request&, const waiting_ticket& t, const queue_config& c) {
    return t.players.size() == c.max_players ? ticket_verdict::fast_track()
                                             : ticket_verdict::wait();
  }
};

ticket_request party(std::vector<double> mmr, player_id first, geo_point where = {48.9, 2.3}) {
  ticket_request r;
  for (std::size_t i = 0; i < mmr.size(); ++i)
    r.players.push_back({first + i, mmr[i], {}, {}, {}, {}, where});
  return r;
}

int failures = 0;
void expect(bool ok, const char* what) {
  std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what);
  failures += ok ? 0 : 1;
}

void print(const formed_match& m) {
  std::printf("  match %llu:", static_cast<unsigned long long>(m.id));
  for (const auto& team : m.teams) {
    std::printf(" [");
    for (player_id p : team) std::printf(" %llu", static_cast<unsigned long long>(p));
    std::printf(" ]");
  }
  std::printf(" spread %.0f\n", m.mmr_spread);
}

bool same_team(const formed_match& m, std::vector<player_id> players) {
  for (const auto& team : m.teams) {
    std::size_t in = 0;
    for (player_id p : players) in += std::count(team.begin(), team.end(), p);
    if (in == players.size()) return true;
  }
  return false;
}

void ranked() {
  std::printf("ranked 3v3\n");
  basic_session_queue<ranked_3v3> q(ranked_3v3::config(), latency_model{}, 1);
  const time_ms t0{0};
  q.add(party({1000, 1100, 1200, 1300, 1400, 1500}, 1), t0);  // the premade six: 1..6
  q.add(party({1250, 1260, 1240}, 11), t0);                   // a trio: 11..13
  q.add(party({1230, 1270}, 21), t0);                         // a duo: 21, 22
  q.add(party({1245}, 31), t0);                               // a solo: 31
  const tick_result r = q.tick(t0 + 1s);
  for (const auto& m : r.matches) print(m);
  expect(r.matches.size() == 2, "two matches: the six alone, and trio v duo + solo");
  if (r.matches.size() != 2) return;
  const formed_match& six = r.matches[0].tickets.size() == 1 ? r.matches[0] : r.matches[1];
  const formed_match& mixed = &six == &r.matches[0] ? r.matches[1] : r.matches[0];
  const auto sum = [](const std::vector<player_id>& team) {
    double s = 0;
    for (player_id p : team) s += 900 + 100 * static_cast<double>(p);  // 1..6 -> 1000..1500
    return s;
  };
  expect(six.teams[0].size() == 3 && six.teams[1].size() == 3, "the six split 3 and 3");
  expect(std::abs(sum(six.teams[0]) - sum(six.teams[1])) == 100,
         "the split with the nearest MMR totals (3700 v 3800; no split is even)");
  expect(same_team(mixed, {11, 12, 13}), "the trio on one team");
  expect(same_team(mixed, {21, 22}), "the duo on one team");
  expect(q.stats().fast_tracked == 1 && q.stats().rejected_plans == 0,
         "one fast-track, no bad plan");
}

void coop() {
  std::printf("co-op for four\n");
  std::vector<datacenter> dcs = {{"paris", {48.9, 2.4}, "eu"}, {"virginia", {38.9, -77.4}, "na"}};
  basic_session_queue<coop_4> q(coop_4::config(), latency_model(dcs), 1);
  const time_ms t0{0};
  // A party whose MMR is far apart: the skill rule would refuse it, but it is
  // a full party and plays together.
  q.add(party({500, 1500, 2500, 3500}, 1), t0);
  q.add(party({1200}, 11), t0);
  q.add(party({1250, 1210}, 12), t0);
  q.add(party({1900}, 14), t0);  // too far from the others: waits
  const tick_result r = q.tick(t0 + 1s);
  for (const auto& m : r.matches) print(m);
  expect(r.matches.size() == 1 && r.matches[0].tickets.size() == 1 &&
             r.matches[0].teams[0].size() == 4,
         "the full party played at once, alone");
  expect(r.matches.size() == 1 && dcs[r.matches[0].datacenter].name == "paris",
         "in the datacenter near it");
  expect(q.waiting() == 3, "the solos and the duo wait for a fourth");
}

}  // namespace modes

int main() {
  modes::ranked();
  modes::coop();
  if (modes::failures == 0)
    std::printf("all modes as promised\n");
  else
    std::printf("%d failures\n", modes::failures);
  return modes::failures == 0 ? 0 : 1;
}
