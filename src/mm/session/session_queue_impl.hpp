// The member definitions of basic_session_queue (session_queue.hpp): the
// match loop here, the group building in session_queue_groups.hpp and the
// records in session_queue_records.hpp, both included. The library compiles
// them once for session_queue; a game that plugs its own plug-in into a
// queue includes this header in one of its files.
#pragma once

#include <algorithm>
#include <limits>

#include "mm/engine/error.hpp"
#include "mm/session/radix_sort.hpp"
#include "mm/session/session_queue.hpp"
#include "mm/session/session_queue_backfill.hpp"
#include "mm/session/session_queue_explain.hpp"
#include "mm/session/session_queue_groups.hpp"
#include "mm/session/session_queue_records.hpp"
#include "mm/session/teams.hpp"

namespace mm::session {

template <session_plugin Plugin>
basic_session_queue<Plugin>::basic_session_queue(queue_config config, latency_model latency,
                                                 std::uint64_t seed, Plugin plugin)
    : config_(std::move(config)),
      latency_(std::move(latency)),
      plugin_(std::move(plugin)),
      rng_(seed),
      backfills_(config_.teams, config_.teams == 0 ? config_.max_players : config_.team_size) {
  validate(config_, "queues." + config_.name + ".");
  if (config_.latency && latency_.datacenters().empty())
    throw error(errc::invalid_config,
                "queues." + config_.name + ".latency: the staged latency policy needs datacenters");
  for (std::size_t i = 0; i < config_.rules.size(); ++i)
    if (config_.rules[i].kind == rule_kind::difference) {
      primary_ = static_cast<int>(i);
      break;
    }
  rank_from_lane_ = config_.rules.size() == 1 && primary_ == 0;
  latency_rule_ = std::any_of(config_.rules.begin(), config_.rules.end(),
                              [](const rule& r) { return r.kind == rule_kind::latency; });
  rows_.shape(config_.rules.size(), latency_.datacenters().size(), config_.max_party_size,
              config_.latency);
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::claim(const std::vector<std::size_t>& members, tick_result& out) {
  if (!claim_) return true;
  std::vector<ticket_id> shared;
  for (std::size_t m : members)
    if (tickets_[m].shared) shared.push_back(tickets_[m].id);
  if (shared.empty()) return true;
  const std::vector<ticket_id> refused = claim_(shared);
  if (refused.empty()) return true;
  for (std::size_t m : members)
    if (tickets_[m].shared &&
        std::find(refused.begin(), refused.end(), tickets_[m].id) != refused.end()) {
      take(m);
      out.withdrawn.push_back(tickets_[m].id);
      ++stats_.withdrawn;
    }
  return false;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::take(std::size_t i) {
  taken_[i] = 1;
  lanes_.take(i);
}

template <session_plugin Plugin>
formed_match basic_session_queue<Plugin>::make_match(const group& g,
                                                     const std::vector<std::uint32_t>& team_of,
                                                     placement at, time_ms now) {
  formed_match m;
  m.id = next_match_++;
  m.datacenter = at.datacenter;
  m.formed_at = now;
  m.teams.resize(std::max<std::uint32_t>(config_.teams, 1));
  for (auto& team : m.teams) team.reserve(config_.teams > 0 ? config_.team_size : g.players);
  m.tickets.reserve(g.members.size());
  m.created.reserve(g.members.size());
  double lo = detail::infinity, hi = -detail::infinity;
  std::size_t player = 0;
  for (std::size_t idx : g.members) {
    const ticket_rows::head t = rows_[idx];
    m.tickets.push_back(t.id);
    m.created.push_back(t.created);
    for (std::size_t p = 0; p < t.party; ++p, ++player) {
      m.teams[team_of[player]].push_back(rows_.player(idx, p));
      const double mmr = rows_.mmr(idx, p);
      lo = std::min(lo, mmr);
      hi = std::max(hi, mmr);
    }
  }
  m.mmr_spread = hi - lo;
  m.worst_rtt_ms = at.datacenter < latency_.datacenters().size() ? at.worst_rtt : 0;
  ++stats_.matches;
  stats_.matched += g.members.size();
  return m;
}

template <session_plugin Plugin>
auto basic_session_queue<Plugin>::planned_teams(const std::vector<const waiting_ticket*>& members,
                                                const std::vector<std::vector<player_id>>& teams)
    const -> std::optional<std::vector<std::uint32_t>> {
  const std::size_t n_teams = std::max<std::uint32_t>(config_.teams, 1);
  if (teams.size() != n_teams) return std::nullopt;
  std::unordered_map<player_id, std::uint32_t> team_by_player;
  for (std::size_t k = 0; k < teams.size(); ++k) {
    if (config_.teams > 0 && teams[k].size() != config_.team_size) return std::nullopt;
    for (player_id p : teams[k])
      if (!team_by_player.emplace(p, static_cast<std::uint32_t>(k)).second) return std::nullopt;
  }
  std::vector<std::uint32_t> team_of;
  for (const waiting_ticket* t : members)
    for (player_id p : t->players) {
      const auto it = team_by_player.find(p);
      if (it == team_by_player.end()) return std::nullopt;
      team_of.push_back(it->second);
    }
  // Every player placed is one of the match's, each once.
  if (team_of.size() != team_by_player.size()) return std::nullopt;
  return team_of;
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::form_planned(std::size_t seed,
                                               const std::vector<candidate>& candidates,
                                               const build_decision& plan, time_ms now,
                                               tick_result& out) {
  std::vector<std::size_t> members{seed};
  std::vector<const waiting_ticket*> tickets{&tickets_[seed]};
  for (std::size_t pos : plan.members) {
    if (pos >= candidates.size()) return false;
    const std::size_t c = candidates[pos].ticket;
    if (std::find(members.begin(), members.end(), c) != members.end()) return false;
    members.push_back(c);
    tickets.push_back(&tickets_[c]);
  }
  const group g = make_group(members, now);
  if (g.players > config_.max_players) return false;
  std::optional<std::vector<std::uint32_t>> team_of;
  if (plan.teams.empty()) {
    team_of = assign(g, now);
  } else if (g.players >= config_.min_players && has_datacenter(g)) {
    team_of = planned_teams(tickets, plan.teams);
  }
  if (!team_of || !claim(g.members, out)) return false;
  out.matches.push_back(make_match(g, *team_of, pick_datacenter(g), now));
  for (std::size_t m : g.members) take(m);
  return true;
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::form(std::size_t seed, time_ms now, tick_result& out) {
  if (rows_[seed].fast_track) {
    // A match by itself once a datacenter is within its threshold.
    const waiting_ticket& anchor = tickets_[seed];
    const group g = make_group({seed}, now);
    if (!has_datacenter(g)) return false;
    auto team_of = anchor.team_of.empty() ? assign(g, now) : std::optional(anchor.team_of);
    if (!team_of || !claim(g.members, out)) return false;
    out.matches.push_back(make_match(g, *team_of, pick_datacenter(g), now));
    take(seed);
    return true;
  }
  const std::size_t want = candidates_per_seed(config_);
  if constexpr (custom_build) {
    std::vector<candidate>& candidates = candidates_;
    rank_candidates(seed, now, want, candidates);
    std::vector<plugin_candidate> views;
    views.reserve(candidates.size());
    for (const candidate& c : candidates) views.push_back({&tickets_[c.ticket], c.distance});
    const waiting_ticket& anchor = tickets_[seed];
    const build_decision decision =
        plugin_.build_match(anchor, views, match_context{now, now - anchor.created, config_});
    if (decision.what == build_decision::action::none) return false;
    if (decision.what == build_decision::action::plan) {
      if (form_planned(seed, candidates, decision, now, out)) return true;
      ++stats_.rejected_plans;
      return false;
    }
    return build_greedy(seed, candidates, now, out, false);
  } else {
    // Most seeds fill their match from their nearest few candidates, one
    // per seat the seed's party leaves: those first (the nearest `few` of
    // the ranking are the first `few` of the whole). Only when they fill
    // the match and it is valid is the outcome the one the whole ranking
    // would give; otherwise rank them all.
    const std::size_t few = std::min<std::size_t>(want, config_.max_players - rows_[seed].party);
    std::vector<candidate>& candidates = candidates_;
    candidates.clear();  // a party that fills the match alone needs none
    if (few > 0) rank_candidates(seed, now, few, candidates);
    for (const candidate& c : candidates) rows_.prefetch(c.ticket);
    if (candidates.size() == few && few < want) {
      if (build_greedy(seed, candidates, now, out, true)) return true;
      rank_candidates(seed, now, want, candidates);
    }
    return build_greedy(seed, candidates, now, out, false);
  }
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::build_greedy(std::size_t seed,
                                               const std::vector<candidate>& candidates,
                                               time_ms now, tick_result& out,
                                               bool first_pass_only) {
  std::vector<std::size_t>& chosen =
      chosen_;  // positions in `candidates`, in the order they joined
  chosen.clear();
  group& g = build_group_;
  start_group(g, seed, now);
  std::size_t next = 0;
  for (std::uint32_t steps = 0;; ++steps) {
    // Greedy, nearest first, each addition checked against the group as it is.
    for (std::size_t i = next; i < candidates.size() && g.players < config_.max_players; ++i) {
      const std::size_t c = candidates[i].ticket;
      if (admits(g, c, now, nullptr) && teams_fit(g, c)) {
        join(g, c, now);
        chosen.push_back(i);
      }
    }
    if (first_pass_only && g.players < config_.max_players) return false;
    if (auto team_of = assign(g, now)) {
      if (!claim(g.members, out)) return false;
      out.matches.push_back(make_match(g, *team_of, pick_datacenter(g), now));
      for (std::size_t m : g.members) take(m);
      return true;
    }
    // Backtrack: without the last ticket added, on from the candidate after it.
    if (first_pass_only || chosen.empty() || steps >= config_.backtrack_steps) return false;
    ++stats_.backtracks;
    next = chosen.back() + 1;
    chosen.pop_back();
    start_group(g, seed, now);
    for (std::size_t i : chosen) join(g, candidates[i].ticket, now);
  }
}

template <session_plugin Plugin>
tick_result basic_session_queue<Plugin>::tick(time_ms now) {
  tick_result out;
  // 1. Tickets past their give-up time, and those whose latency stages ran
  //    out (a bot match where the queue has bots).
  std::vector<char>& taken = taken_;
  taken.assign(tickets_.size(), 0);
  lanes_.clear();  // last tick's lanes: take() marks only `taken` until the new ones
  for (std::size_t i = 0; i < tickets_.size(); ++i) {
    const ticket_rows::head t = rows_[i];
    const bool expires = now >= rows_.give_up_at(i);
    if (!expires && !(config_.latency &&
                      stage_after(*config_.latency, now - t.created) == latency_stage::failed))
      continue;
    if (!claim({i}, out)) continue;  // withdrawn: another queue's outcome
    if (expires) {
      out.expired.push_back(t.id);
      ++stats_.expired;
      take(i);
    } else {
      take(i);
      if (config_.bots) {
        const group g = make_group({i}, now);
        formed_match m =
            make_match(g, std::vector<std::uint32_t>(t.party, 0), pick_datacenter(g), now);
        m.bot_match = true;
        ++stats_.bot_matches;
        out.matches.push_back(std::move(m));
      } else {
        out.failed.push_back(t.id);
        ++stats_.failed;
      }
    }
  }
  // The candidates' index for this tick (lane_index.hpp): the tickets by
  // the first difference rule's value, with the datacenters each may play
  // in now.
  if (use_index_ && primary_ >= 0) {
    const auto k = static_cast<std::size_t>(primary_);
    lanes_.reset(tickets_.size(), config_.latency ? rows_.mask_words() : 0);
    for (std::size_t i = 0; i < tickets_.size(); ++i) {
      const ticket_rows::head t = rows_[i];
      if (taken[i] || t.fast_track) continue;  // a fast-tracked party joins no group
      const latency_stage stage = config_.latency ? stage_after(*config_.latency, now - t.created)
                                                  : latency_stage::warm_body;
      lanes_.add(i, rows_.number(i, k), t.tiebreak, t.party, rows_.within(i, stage),
                 stage == latency_stage::ideal);
    }
    lanes_.seal();
    if (!lanes_.disjoint()) seen_.assign(tickets_.size(), 0);
    stamp_ = 0;
  }
  // The open seats of running matches first (session_queue_backfill.hpp).
  fill_backfills(now, out);
  // 2. Seeds oldest first; tickets created at the same time in a seeded
  //    random order (their tiebreak).
  std::vector<seed_key>& order = seeds_;
  order.clear();
  time_ms::rep oldest = std::numeric_limits<time_ms::rep>::max();
  for (std::size_t i = 0; i < tickets_.size(); ++i)
    if (!taken[i]) {
      order.push_back({rows_[i].created.count(), rows_[i].tiebreak, i});
      oldest = std::min(oldest, rows_[i].created.count());
    }
  // By tiebreak, then (stably) by creation: creation, then tiebreak.
  radix_sort(order, seeds_scratch_, [](const seed_key& s) { return s.tiebreak; });
  radix_sort(order, seeds_scratch_, [oldest](const seed_key& s) {
    return static_cast<std::uint64_t>(s.created - oldest);
  });
  // The seeds come in no order of memory: what the next ones read is fetched
  // ahead (their records a few seeds ahead, then their values, RTTs and lane
  // neighbourhoods), so that it is in cache when their turn comes.
  constexpr std::size_t record_ahead = 8, data_ahead = 4;
  for (std::size_t j = 0; j < order.size(); ++j) {
    if (j + record_ahead < order.size()) rows_.prefetch_head(order[j + record_ahead].ticket);
    if (j + data_ahead < order.size()) prefetch_seed(order[j + data_ahead].ticket);
    const std::size_t seed = order[j].ticket;
    if (!taken[seed]) form(seed, now, out);
  }
  // 3. Matched, expired and failed tickets leave the queue. When most of
  //    it leaves, the tickets that stay are moved to the front in their
  //    order and the lookups rebuilt from them (fewer to place than to
  //    remove). Otherwise the ids and players leave the lookups all at once
  //    (in the lookups' order of memory), then the tickets, highest index
  //    first (move_out() moves the last ticket into the hole).
  const auto leaving = static_cast<std::size_t>(std::count(taken.begin(), taken.end(), 1));
  spare_.reserve(peak_waiting_);  // once: the buffers move in without the array moving
  if (2 * leaving > tickets_.size()) {
    const std::size_t staying = tickets_.size() - leaving;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < tickets_.size(); ++i) {
      if (taken[i]) {
        if (staying + spare_.size() < peak_waiting_) keep_buffers(tickets_[i]);
        continue;
      }
      if (kept != i) tickets_[kept] = std::move(tickets_[i]);
      ++kept;
    }
    tickets_.resize(kept);
    rows_.keep(taken);
    index_.clear();
    player_ticket_.clear();
    for (std::size_t i = 0; i < tickets_.size(); ++i) {
      const ticket_rows::head t = rows_[i];
      index_.set(t.id, i);
      for (std::size_t p = 0; p < t.party; ++p) player_ticket_.set(rows_.player(i, p), t.id);
    }
    return out;
  }
  std::vector<std::uint64_t>& ids = gone_ids_;
  std::vector<std::uint64_t>& players = gone_players_;
  ids.clear();
  players.clear();
  for (std::size_t i = 0; i < tickets_.size(); ++i)
    if (taken[i]) {
      ids.push_back(rows_[i].id);
      for (std::size_t p = 0; p < rows_[i].party; ++p) players.push_back(rows_.player(i, p));
    }
  index_.erase_many(ids);
  player_ticket_.erase_many(players);
  for (std::size_t i = tickets_.size(); i-- > 0;)
    if (taken[i]) move_out(i);
  return out;
}

}  // namespace mm::session
