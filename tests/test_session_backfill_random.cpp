// Backfill over thousands of random queues on a virtual clock: running
// matches registered, updated, stopped; reservations confirmed, released
// and left to expire; tickets of clustered skill and of parties. After every
// tick the invariants are checked against a model kept by the test, and on
// small queues an oracle checks that no ticket left unplaced could have
// taken a seat that is still open. A twin queue without the candidates'
// index, ranking every match's whole list of candidates at once, is given
// the same requests: every tick places the same tickets in the same seats.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "mm/engine/error.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/session_queue_impl.hpp"
#include "session_test_support.hpp"
#include "whole_ranking.hpp"

using namespace mm::session;
using namespace mm::session::testing;
using namespace std::chrono_literals;
using mm::player_id;

namespace {

struct scenario {
  queue_config config;
  std::size_t datacenters = 1;
  bool balance = false;  // a team_balance rule: the oracle does not apply
};

scenario pick(mm::rng& r, int kind) {
  scenario s;
  queue_config& c = s.config;
  c.rules = {skill(80 + static_cast<double>(r() % 80), {40, 5s, 400})};
  switch (kind) {
    case 0:  // co-op with latency, parties
      c = coop(4 + static_cast<std::uint32_t>(r() % 3));
      c.max_party_size = 3;
      c.rules = {skill(120, {60, 5s, 500})};
      s.datacenters = 3;
      break;
    case 1: {  // two teams of 3, parties of up to 3, a mode
      c.teams = 2;
      c.team_size = 3;
      c.min_players = c.max_players = 6;
      c.max_party_size = 3;
      rule mode;
      mode.name = "mode";
      mode.kind = rule_kind::equality;
      mode.attribute = "mode";
      c.rules.push_back(mode);
      break;
    }
    case 2:  // parties split across teams, with latency
      c.teams = 2;
      c.team_size = 2;
      c.min_players = c.max_players = 4;
      c.max_party_size = 2;
      c.split_parties = true;
      c.latency = latency_stages{};
      s.datacenters = 2;
      break;
    default: {  // team balance
      c.teams = 3;
      c.team_size = 2;
      c.min_players = c.max_players = 6;
      c.max_party_size = 2;
      rule b;
      b.name = "balance";
      b.kind = rule_kind::team_balance;
      b.max_difference = 60;
      c.rules.push_back(b);
      s.balance = true;
      break;
    }
  }
  c.name = "q";
  c.reservation_timeout = std::chrono::milliseconds(2000 + r() % 6000);
  return s;
}

double cluster(mm::rng& r) {
  static const double centers[] = {1200, 1500, 1800};
  return centers[r() % 3] + static_cast<double>(r() % 200) - 100;
}

ticket_player someone(mm::rng& r, player_id id, double around, std::size_t dcs,
                      const std::string& mode) {
  ticket_player p = player(id, around + static_cast<double>(r() % 60) - 30);
  for (std::size_t d = 0; d < dcs; ++d)
    p.rtt_ms.push_back({"dc" + std::to_string(d), 10 + static_cast<double>(r() % 140)});
  p.strings = {{"mode", mode}};
  return p;
}

// What the test knows of a waiting ticket and of a running match.
struct known_ticket {
  ticket_request request;
  time_ms created;
};
struct known_match {
  double mean = 0;  // of the players listed last
  std::string mode;
  std::size_t datacenter = 0;
  time_ms registered{0};
};

double party_mean(const std::vector<ticket_player>& ps) {
  double s = 0;
  for (const auto& p : ps) s += p.mmr;
  return s / static_cast<double>(ps.size());
}

const std::string* mode_of(const ticket_player& p) {
  for (const auto& [k, v] : p.strings)
    if (k == "mode") return &v;
  return nullptr;
}

// Whether ticket `t` may join match `m` alone (rules, datacenter, players
// not in it) and fits its open seats now: the oracle's question.
bool could_join(const session_queue& q, const scenario& s, const known_ticket& t,
                const running_match& m, const known_match& k, time_ms now) {
  const queue_config& c = s.config;
  const time_ms waited = now - k.registered;
  for (const rule& r : c.rules) {
    if (r.kind == rule_kind::difference &&
        std::abs(party_mean(t.request.players) - k.mean) > threshold_after(r, waited))
      return false;
    if (r.kind == rule_kind::equality && *mode_of(t.request.players[0]) != k.mode) return false;
  }
  if (c.latency) {
    const latency_stage st = stage_after(*c.latency, now - t.created);
    if (st == latency_stage::failed) return false;
    for (const auto& p : t.request.players)
      if (p.rtt_ms[k.datacenter].second > max_rtt_after(*c.latency, now - t.created)) return false;
  }
  for (const auto& p : t.request.players) {
    if (std::find(m.players.players.begin(), m.players.players.end(), p.id) !=
        m.players.players.end())
      return false;
    for (reservation_id id : m.reservations) {
      const auto& held = q.backfills().reservation(id)->players;
      if (std::find(held.begin(), held.end(), p.id) != held.end()) return false;
    }
  }
  const auto party = static_cast<std::uint32_t>(t.request.players.size());
  if (c.split_parties || c.teams == 0) return party <= q.backfills().open(m);
  for (std::uint32_t team = 0; team < q.backfills().teams(); ++team)
    if (party <= q.backfills().open(m, team)) return true;
  return false;
}

// The book's counts are those of its players and reservations, within the
// teams' sizes.
void check_book(const session_queue& q) {
  const backfill_book& b = q.backfills();
  for (const auto& [id, m] : b.matches()) {
    std::vector<std::uint32_t> in(b.teams()), reserved(b.teams());
    for (std::uint32_t t : m.team_of) ++in[t];
    REQUIRE(m.listed <= m.players.players.size());
    std::set<player_id> seen(m.players.players.begin(), m.players.players.end());
    REQUIRE(seen.size() == m.players.players.size());
    for (reservation_id r : m.reservations) {
      const seat_reservation* res = b.reservation(r);
      REQUIRE(res);
      REQUIRE(res->match_id == id);
      REQUIRE_FALSE(res->players.empty());
      for (std::size_t i = 0; i < res->players.size(); ++i) {
        ++reserved[res->team_of[i]];
        REQUIRE(seen.insert(res->players[i]).second);  // a player holds one seat
      }
    }
    std::uint32_t open = 0;
    for (std::uint32_t t = 0; t < b.teams(); ++t) {
      REQUIRE(m.in[t] == in[t]);
      REQUIRE(m.reserved[t] == reserved[t]);
      REQUIRE(in[t] + reserved[t] <= b.team_size());
      open += b.team_size() - in[t] - reserved[t];
    }
    REQUIRE(b.open(m) == open);  // the count the book keeps as they change
  }
}

}  // namespace

TEST_CASE("backfill keeps its invariants, and leaves no open seat a waiting ticket could take",
          "[session][backfill]") {
  mm::rng r(20261127);
  int oracle_checks = 0, placements = 0, twin_placements = 0;
  for (int round = 0; round < 1500; ++round) {
    const scenario s = pick(r, round % 4);
    const std::uint64_t seed = r();
    session_queue q(s.config, equator(s.datacenters), seed);
    basic_session_queue<whole_ranking> twin(s.config, equator(s.datacenters), seed);
    twin.use_candidate_index(false);
    const std::uint32_t teams = q.backfills().teams(), size = q.backfills().team_size();
    std::map<ticket_id, known_ticket> waiting;
    std::map<std::string, known_match> matches;
    player_id next_player = 1;
    time_ms now{0};
    const bool small = r() % 2 == 0;  // few tickets: the oracle applies
    for (int step = 0; step < 8; ++step) {
      // New running matches, of players near one cluster.
      for (int i = 0, n = static_cast<int>(r() % 2); i < n; ++i) {
        const double around = cluster(r);
        const std::string mode = r() % 2 ? "a" : "b";
        backfill_request b;
        b.match_id = "m" + std::to_string(next_player);
        b.datacenter = "dc" + std::to_string(r() % s.datacenters);
        b.priority = static_cast<std::int32_t>(r() % 2);
        b.teams.resize(teams);
        std::vector<ticket_player> listed;
        for (std::uint32_t t = 0; t < teams; ++t)
          for (std::uint32_t k = 0, fill = static_cast<std::uint32_t>(r() % size); k < fill; ++k) {
            b.teams[t].push_back(someone(r, next_player++, around, 0, mode));
            listed.push_back(b.teams[t].back());
          }
        if (listed.empty()) {
          b.teams[0].push_back(someone(r, next_player++, around, 0, mode));
          listed.push_back(b.teams[0].back());
        }
        q.add_backfill(b, now);
        twin.add_backfill(b, now);
        matches[b.match_id] = {party_mean(listed), mode,
                               static_cast<std::size_t>(b.datacenter[2] - '0'), now};
      }
      // New tickets: parties of one cluster.
      for (int i = 0, n = static_cast<int>(r() % (small ? 3 : 12)); i < n; ++i) {
        const double around = cluster(r);
        ticket_request t;
        const std::string mode = r() % 2 ? "a" : "b";
        for (std::uint32_t k = 0,
                           party = 1 + static_cast<std::uint32_t>(r() % s.config.max_party_size);
             k < party; ++k)
          t.players.push_back(someone(r, next_player++, around, s.datacenters, mode));
        // Now and then a player who is in a running match, or holds a seat
        // in one, queues again: never placed into that match twice.
        if (!q.backfills().matches().empty() && r() % 3 == 0) {
          auto it = q.backfills().matches().begin();
          std::advance(it, static_cast<long>(r() % q.backfills().matches().size()));
          std::vector<player_id> there = it->second.players.players;
          for (reservation_id id : it->second.reservations) {
            const auto& held = q.backfills().reservation(id)->players;
            there.insert(there.end(), held.begin(), held.end());
          }
          const player_id again = there[r() % there.size()];
          if (q.ticket_of(again) == 0) t.players[0].id = again;
        }
        waiting[q.add(t, now).id] = {t, now};
        twin.add(t, now);
      }
      // The game servers' answers to the reservations: confirm, release, or
      // nothing (they expire).
      std::vector<reservation_id> held;
      for (const auto& [id, m] : q.backfills().matches())
        held.insert(held.end(), m.reservations.begin(), m.reservations.end());
      for (reservation_id id : held) {
        const auto& players = q.backfills().reservation(id)->players;
        std::vector<player_id> some;
        if (r() % 2) some.push_back(players[r() % players.size()]);
        switch (r() % 3) {
          case 0:
            q.confirm_reservation(id, some);
            twin.confirm_reservation(id, some);
            break;
          case 1:
            q.release_reservation(id, some);
            twin.release_reservation(id, some);
            break;
          default:
            break;
        }
      }
      if (!matches.empty() && r() % 4 == 0) {
        auto it = matches.begin();
        std::advance(it, static_cast<long>(r() % matches.size()));
        REQUIRE(q.stop_backfill(it->first));
        REQUIRE(twin.stop_backfill(it->first));
        matches.erase(it);
      }
      check_book(q);
      std::map<std::string, std::set<player_id>> occupied;  // in or reserved, before the tick
      for (const auto& [id, m] : q.backfills().matches()) {
        occupied[id].insert(m.players.players.begin(), m.players.players.end());
        for (reservation_id res : m.reservations) {
          const auto& seated = q.backfills().reservation(res)->players;
          occupied[id].insert(seated.begin(), seated.end());
        }
      }
      now += std::chrono::milliseconds(500 + r() % 3000);
      // The tick, and what it says against the model.
      const std::size_t before = waiting.size();
      const tick_result out = q.tick(now);
      check_book(q);
      const tick_result reference = twin.tick(now);
      REQUIRE(reference.placed.size() == out.placed.size());
      for (std::size_t i = 0; i < out.placed.size(); ++i) {
        const seat_reservation &a = out.placed[i].reservation, &b = reference.placed[i].reservation;
        CHECK(a.id == b.id);
        CHECK(a.match_id == b.match_id);
        CHECK(a.tickets == b.tickets);
        CHECK(a.players == b.players);
        CHECK(a.team_of == b.team_of);
        ++twin_placements;
      }
      REQUIRE(reference.matches.size() == out.matches.size());
      for (std::size_t i = 0; i < out.matches.size(); ++i)
        CHECK(reference.matches[i].tickets == out.matches[i].tickets);
      for (const seat_reservation& gone : out.reservations_expired)  // open again first
        for (player_id p : gone.players) occupied[gone.match_id].erase(p);
      std::set<ticket_id> outcome;
      const auto once = [&](ticket_id t) { REQUIRE(outcome.insert(t).second); };
      for (const auto& m : out.matches)
        for (ticket_id t : m.tickets) once(t);
      for (ticket_id t : out.expired) once(t);
      for (ticket_id t : out.failed) once(t);
      std::set<ticket_id> unplaced;
      for (const auto& [id, t] : waiting) unplaced.insert(id);
      for (ticket_id t : out.expired) unplaced.erase(t);
      for (ticket_id t : out.failed) unplaced.erase(t);
      for (const backfill_placement& p : out.placed) {
        ++placements;
        const seat_reservation& res = p.reservation;
        const known_match& k = matches.at(res.match_id);
        const running_match& m = *q.backfills().find(res.match_id);
        REQUIRE(p.datacenter == k.datacenter);
        std::size_t player = 0;
        for (ticket_id t : res.tickets) {
          once(t);
          unplaced.erase(t);
          const known_ticket& kt = waiting.at(t);
          // Every rule against the players in, at the match's datacenter.
          for (const rule& ru : s.config.rules) {
            if (ru.kind == rule_kind::difference)
              REQUIRE(std::abs(party_mean(kt.request.players) - k.mean) <=
                      threshold_after(ru, now - k.registered));
            if (ru.kind == rule_kind::equality) REQUIRE(*mode_of(kt.request.players[0]) == k.mode);
          }
          if (s.config.latency)
            for (const auto& pl : kt.request.players)
              REQUIRE(pl.rtt_ms[k.datacenter].second <=
                      max_rtt_after(*s.config.latency, now - kt.created));
          // The party whole in one team, unless the queue splits parties.
          for (std::size_t i = 0; i < kt.request.players.size(); ++i, ++player) {
            REQUIRE(res.players[player] == kt.request.players[i].id);
            REQUIRE(occupied[res.match_id].count(res.players[player]) == 0);
            if (!s.config.split_parties) REQUIRE(res.team_of[player] == res.team_of[player - i]);
          }
        }
        if (s.balance) {
          // The teams' means over the players in and every seat reserved.
          std::vector<double> sum(teams);
          std::vector<std::uint32_t> n(teams);
          for (std::uint32_t t = 0; t < teams; ++t) {
            sum[t] = m.in_mmr[t] + m.reserved_mmr[t];
            n[t] = m.in[t] + m.reserved[t];
          }
          double lo = 1e18, hi = -1e18;
          for (std::uint32_t t = 0; t < teams; ++t)
            if (n[t] > 0) lo = std::min(lo, sum[t] / n[t]), hi = std::max(hi, sum[t] / n[t]);
          REQUIRE(hi - lo <= 60 + 1e-9);
        }
      }
      // The oracle: no ticket the tick offered (not placed, not expired,
      // not failed) could take a seat still open.
      if (small && !s.balance && before <= 8)
        for (const auto& [id, m] : q.backfills().matches())
          for (ticket_id t : unplaced) {
            ++oracle_checks;
            INFO("ticket " << t << " and match " << id);
            REQUIRE_FALSE(could_join(q, s, waiting.at(t), m, matches.at(id), now));
          }
      for (ticket_id t : outcome) waiting.erase(t);
      REQUIRE(q.waiting() == waiting.size());
    }
  }
  CHECK(placements > 1000);
  CHECK(twin_placements == placements);
  CHECK(oracle_checks > 1000);
}
