// Backfill in basic_session_queue (session_queue.hpp), part of its member
// definitions: running matches registered for backfill, and the step of
// the tick that fills their open seats before new matches form.
//
// The step, each tick, after the expiries and before the seeds:
//
// 1. Reservations whose time ran out are released: their seats open.
// 2. The matches with an open seat, highest priority first, then the
//    earliest registered (backfill_book::fill_order), each in turn:
//    - the match's players are the group's anchor, where a seed would be:
//      the rules compare every candidate with their values, with the
//      thresholds after the time since the match registered; the group
//      holds the match's datacenter only, so a candidate joins only when
//      that datacenter is within its own current latency stage;
//    - its candidates are ranked as a seed's are (the same index), and
//      taken nearest first while seats are open, each addition checked
//      against the group as it is, the match's teams (each party whole
//      into one team's open seats, unless the queue splits parties) and
//      its team balance, counting the players in and the seats reserved;
//    - the tickets taken leave the queue matched, with one reservation of
//      their seats.
// 3. New matches form from the tickets left.
//
// So one pass offers every waiting ticket once: a ticket placed into a
// running match is taken before any seed ranks it, and a seat is reserved
// by one placement only (backfill_book's invariant).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "mm/engine/error.hpp"
#include "mm/session/backfill.hpp"
#include "mm/session/refuse.hpp"
#include "mm/session/session_queue.hpp"
#include "mm/session/session_queue_groups.hpp"
#include "mm/session/session_queue_records.hpp"
#include "mm/session/teams.hpp"

namespace mm::session {

template <session_plugin Plugin>
running_match basic_session_queue<Plugin>::compile_match(const backfill_request& r, time_ms now) {
  if (r.match_id.empty() || r.match_id.size() > 128)
    refuse("match_id", "must be 1 to 128 characters");
  if (r.server.size() > 1024) refuse("server", "must be at most 1024 characters");
  running_match m;
  m.match_id = r.match_id;
  m.server = r.server;
  m.priority = r.priority;
  m.registered = now;
  m.datacenter = latency_.datacenters().size();  // none
  if (!latency_.datacenters().empty()) {
    if (r.datacenter.empty())
      refuse("datacenter", "required: the queue's matches run in its datacenters (such as '" +
                               latency_.datacenters().front().name + "')");
    const auto dc = latency_.find(r.datacenter);
    if (!dc) refuse("datacenter", "no datacenter '" + r.datacenter + "'");
    m.datacenter = *dc;
  } else if (!r.datacenter.empty()) {
    refuse("datacenter", "the queue has no datacenters");
  }
  const std::uint32_t teams = backfills_.teams();
  if (r.teams.size() != teams)
    refuse("teams", config_.teams == 0
                        ? "one list: the players in the match (the queue has no teams)"
                        : "a list per team: " + std::to_string(teams) + " lists");
  std::vector<ticket_player> flat;
  std::vector<std::pair<std::uint32_t, std::size_t>> where;  // per player: team, place
  for (std::uint32_t t = 0; t < teams; ++t) {
    if (r.teams[t].size() > backfills_.team_size())
      refuse("teams[" + std::to_string(t) + "]",
             std::to_string(r.teams[t].size()) + " players is more than the " +
                 std::to_string(backfills_.team_size()) + " seats of the team");
    for (std::size_t j = 0; j < r.teams[t].size(); ++j) {
      flat.push_back(r.teams[t][j]);
      where.emplace_back(t, j);
      m.team_of.push_back(t);
    }
  }
  if (flat.empty()) refuse("teams", "a running match needs at least one player in it");
  const auto field = [&where](std::size_t i, const std::string& rest) {
    return "teams[" + std::to_string(where[i].first) + "][" + std::to_string(where[i].second) +
           "]" + rest;
  };
  compile_party(flat, field, false, m.players);
  m.players.created = now;
  m.tiebreak = rng_();
  return m;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::add_backfill(const backfill_request& request, time_ms now) {
  if (backfills_.find(request.match_id))
    throw error(errc::conflict, "match_id: match '" + request.match_id +
                                    "' backfills already: update it, or stop it first");
  if (backfills_.size() >= config_.max_backfills)
    throw error(errc::limit_reached, "match_id: the queue holds its max_backfills of " +
                                         std::to_string(config_.max_backfills) +
                                         " running matches");
  backfills_.add(compile_match(request, now));
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::update_backfill(const backfill_request& request, time_ms now) {
  running_match* m = backfills_.find(request.match_id);
  if (!m)
    throw error(errc::not_found,
                "match_id: match '" + request.match_id + "' does not backfill in this queue");
  (void)now;  // its rules keep relaxing from its registration
  running_match fresh = compile_match(request, m->registered);
  backfills_.set_players(*m, std::move(fresh.players), std::move(fresh.team_of));
  m->datacenter = fresh.datacenter;
  m->priority = fresh.priority;
  m->server = std::move(fresh.server);
}

template <session_plugin Plugin>
std::optional<std::vector<seat_reservation>> basic_session_queue<Plugin>::stop_backfill(
    const std::string& match_id) {
  if (!backfills_.find(match_id)) return std::nullopt;
  return backfills_.stop(match_id);
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::confirm_reservation(reservation_id id,
                                                      const std::vector<player_id>& players) {
  backfills_.confirm(id, players);
  ++stats_.reservations_confirmed;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::release_reservation(reservation_id id,
                                                      const std::vector<player_id>& players) {
  backfills_.release(id, players);
  ++stats_.reservations_released;
}

template <session_plugin Plugin>
std::vector<seat_reservation> basic_session_queue<Plugin>::restore_backfill(
    const backfill_request& request, time_ms registered, std::vector<seat_reservation> reservations,
    const seat_reservation& joined) {
  add_backfill(request, registered);
  running_match& m = *backfills_.find(request.match_id);
  backfills_.rejoin(m, joined.players, joined.team_of, joined.mmr);
  std::vector<seat_reservation> dropped;
  for (seat_reservation& r : reservations) {
    // Kept when its seats are still open (a config that shrank the teams
    // since, or players listed in the match twice, may close them).
    std::vector<std::uint32_t> wanted(backfills_.teams(), 0);
    bool fits = r.team_of.size() == r.players.size() && r.mmr.size() == r.players.size();
    for (std::size_t i = 0; fits && i < r.players.size(); ++i) {
      fits = r.team_of[i] < backfills_.teams() &&
             ++wanted[r.team_of[i]] <= backfills_.open(m, r.team_of[i]);
      fits = fits && std::find(m.players.players.begin(), m.players.players.end(), r.players[i]) ==
                         m.players.players.end();
    }
    if (fits && !r.players.empty() && !backfills_.reservation(r.id))
      backfills_.restore_reservation(m, std::move(r));
    else
      dropped.push_back(std::move(r));
  }
  return dropped;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::start_anchor(group& g, const running_match& m,
                                               time_ms now) const {
  relax(g, m.registered, now);
  g.seed = no_ticket;
  g.anchor = &m.players;
  g.anchor_slot = value_lane::npos;
  g.count = 1;
  // The seats held count against the match's size in admits().
  g.players = config_.max_players - backfills_.open(m);
  g.sums = m.players.numbers;
  const std::size_t words = rows_.mask_words();
  g.dcs.assign(words, 0);
  if (m.datacenter < latency_.datacenters().size() && words > 0)
    g.dcs[m.datacenter / 64] |= std::uint64_t{1} << (m.datacenter % 64);
  g.finite = g.dcs;
  g.ideal = g.dcs;
  if (latency_rule_) {
    g.worst_rtt.assign(latency_.datacenters().size(), 0);
    if (m.datacenter < g.worst_rtt.size()) g.worst_rtt[m.datacenter] = m.players.rtt[m.datacenter];
  }
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::already_in(const running_match& m, std::size_t c) const {
  const auto& in = m.players.players;
  for (std::size_t p = 0; p < rows_[c].party; ++p) {
    const player_id id = rows_.player(c, p);
    if (std::find(in.begin(), in.end(), id) != in.end()) return true;
    for (reservation_id r : m.reservations) {
      const auto& held = backfills_.reservation(r)->players;
      if (std::find(held.begin(), held.end(), id) != held.end()) return true;
    }
  }
  return false;
}

template <session_plugin Plugin>
std::optional<std::vector<std::uint32_t>> basic_session_queue<Plugin>::seat_parties(
    const running_match& m, const std::vector<std::size_t>& members, time_ms now) const {
  const std::uint32_t teams = backfills_.teams();
  if (teams == 1) {
    // No teams: one team of the match's seats, and no balance to keep.
    std::size_t players = 0;
    for (std::size_t c : members) players += rows_[c].party;
    if (players > backfills_.open(m)) return std::nullopt;
    return std::vector<std::uint32_t>(players, 0);
  }
  std::vector<std::uint32_t> held(teams);
  std::vector<double> sums(teams);
  for (std::uint32_t t = 0; t < teams; ++t) {
    held[t] = std::min(m.in[t] + m.reserved[t], backfills_.team_size());
    sums[t] = m.in_mmr[t] + m.reserved_mmr[t];
  }
  std::vector<party_seat> parties;
  std::vector<double> mmr;  // per player, in member order
  for (std::size_t c : members) {
    party_seat s{rows_[c].party, 0};
    for (std::size_t p = 0; p < s.size; ++p) {
      mmr.push_back(rows_.mmr(c, p));
      s.mmr_sum += mmr.back();
    }
    parties.push_back(s);
  }
  std::vector<std::uint32_t> team_of;  // per player
  if (config_.split_parties || config_.teams == 0) {
    std::vector<party_seat> solos;
    for (double x : mmr) solos.push_back({1, x});
    const auto placed = assign_parties_into(solos, held, sums, backfills_.team_size());
    if (!placed) return std::nullopt;
    team_of = *placed;
  } else {
    const auto placed = assign_parties_into(parties, held, sums, backfills_.team_size());
    if (!placed) return std::nullopt;
    for (std::size_t i = 0; i < parties.size(); ++i)
      team_of.insert(team_of.end(), parties[i].size, (*placed)[i]);
  }
  // The team balance of the whole match: its players, its reserved seats
  // and the new ones.
  const time_ms waited = now - m.registered;
  for (const rule& r : config_.rules) {
    if (r.kind != rule_kind::team_balance || !filters_after(r, waited)) continue;
    std::vector<double> sum = sums;
    std::vector<std::uint32_t> n(teams);
    for (std::uint32_t t = 0; t < teams; ++t) n[t] = m.in[t] + m.reserved[t];
    for (std::size_t i = 0; i < mmr.size(); ++i) {
      sum[team_of[i]] += mmr[i];
      ++n[team_of[i]];
    }
    if (team_mean_gap(sum, n) > threshold_after(r, waited)) return std::nullopt;
  }
  return team_of;
}

template <session_plugin Plugin>
std::size_t basic_session_queue<Plugin>::seat_candidates(const running_match& m,
                                                         const std::vector<candidate>& candidates,
                                                         std::uint32_t open, time_ms now) {
  group& g = build_group_;
  start_anchor(g, m, now);
  std::vector<std::size_t>& members = fill_members_;
  members.clear();
  // Without teams the seats are one count: a party fits while it is open
  // (what seat_parties() would answer, without building the seating).
  const bool one_team = backfills_.teams() == 1;
  std::size_t seated = 0;
  for (const candidate& c : candidates) {
    if (g.players >= config_.max_players) break;
    const std::size_t i = c.ticket;
    if (taken_[i] || rows_[i].fast_track || rows_[i].new_matches_only || already_in(m, i) ||
        !admits(g, i, now, nullptr))
      continue;
    members.push_back(i);
    const bool fits =
        one_team ? seated + rows_[i].party <= open : seat_parties(m, members, now).has_value();
    if (!fits) {
      members.pop_back();
      continue;
    }
    seated += rows_[i].party;
    join(g, i, now);
  }
  return seated;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::rank_fill(const running_match& m, std::size_t slot, time_ms now,
                                            std::size_t want) {
  start_anchor(rank_group_, m, now);
  rank_group_.anchor_slot = slot;
  const double v = primary_ >= 0 ? m.players.numbers[static_cast<std::size_t>(primary_)] : 0;
  rank_around(rank_group_, v, now, want, candidates_);
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::fill(running_match& m, std::size_t slot, time_ms now,
                                       tick_result& out) {
  const std::uint32_t open = backfills_.open(m);
  if (open == 0) return false;
  // The standard build ranks the nearest candidate per open seat first.
  // When they fill every seat, the greedy pass over the whole ranking would
  // take them and stop there (its first decisions are theirs); otherwise
  // it ranks them all. A plug-in's queue ranks them all at once.
  const std::size_t want = std::max<std::size_t>(8, std::size_t{4} * open);
  rank_fill(m, slot, now, custom_build ? want : open);
  std::size_t seated = seat_candidates(m, candidates_, open, now);
  if (!custom_build && seated < open && candidates_.size() == open) {
    rank_fill(m, slot, now, want);
    seated = seat_candidates(m, candidates_, open, now);
  }
  const std::vector<std::size_t>& members = fill_members_;
  const bool one_team = backfills_.teams() == 1;
  if (members.empty() || !claim(members, out)) return false;
  // Without teams every seat is team 0's (seat_candidates counted them).
  std::optional<std::vector<std::uint32_t>> seating;
  if (!one_team) seating = seat_parties(m, members, now);
  seat_reservation r;
  r.id = reservation_ids_ ? reservation_ids_() : 0;
  r.placed_at = now;
  r.expires_at = now + config_.reservation_timeout;
  r.tickets.reserve(members.size());
  r.created.reserve(members.size());
  r.players.reserve(seated);
  r.mmr.reserve(seated);
  if (one_team)
    r.team_of.assign(seated, 0);
  else
    r.team_of = std::move(*seating);
  for (std::size_t i : members) {
    const ticket_rows::head t = rows_[i];
    r.tickets.push_back(t.id);
    r.created.push_back(t.created);
    for (std::size_t p = 0; p < t.party; ++p) {
      r.players.push_back(rows_.player(i, p));
      r.mmr.push_back(rows_.mmr(i, p));
    }
    take(i);
  }
  backfills_.reserve(m, r);
  out.placed.push_back({std::move(r), m.datacenter, m.server});
  stats_.backfilled += members.size();
  stats_.matched += members.size();
  ++stats_.placements;
  return true;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::fill_backfills(time_ms now, tick_result& out) {
  for (seat_reservation& r : backfills_.expire(now)) {
    ++stats_.reservations_expired;
    out.reservations_expired.push_back(std::move(r));
  }
  if (backfills_.size() == 0) return;
  const std::vector<running_match*> order = backfills_.fill_order();
  out.placed.reserve(out.placed.size() + order.size());
  // Where each match's walks start, found for all of them in one pass over
  // the index instead of a search each.
  const bool anchored = lanes_.active() && primary_ >= 0;
  if (anchored) {
    anchor_values_.clear();
    for (const running_match* m : order)
      anchor_values_.push_back(m->players.numbers[static_cast<std::size_t>(primary_)]);
    lanes_.place_anchors(anchor_values_);
  }
  // What a match's fill reads first is asked of the memory ahead: the
  // match itself four matches ahead, its counts, values and walks' starts
  // two ahead (measured: about a tenth of the step's time).
  constexpr std::size_t ahead = 2;
  for (std::size_t j = 0; j < order.size(); ++j) {
    if (j + 2 * ahead < order.size()) {
      const char* match = reinterpret_cast<const char*>(order[j + 2 * ahead]);
      for (std::size_t b = 0; b < sizeof(running_match); b += 64) __builtin_prefetch(match + b);
    }
    if (j + ahead < order.size()) {
      const running_match& next = *order[j + ahead];
      __builtin_prefetch(next.in.data());
      __builtin_prefetch(next.reserved.data());
      if (anchored) lanes_.prefetch_anchor(j + ahead, next.datacenter);
    }
    fill(*order[j], anchored ? j : value_lane::npos, now, out);
  }
}

}  // namespace mm::session
