// The member definitions of basic_session_queue (session_queue.hpp). The
// library compiles them once for session_queue; a game that plugs its own
// plug-in into a queue includes this header in one of its files.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "mm/engine/error.hpp"
#include "mm/session/radix_sort.hpp"
#include "mm/session/refuse.hpp"
#include "mm/session/session_queue.hpp"
#include "mm/session/session_queue_groups.hpp"
#include "mm/session/teams.hpp"

namespace mm::session {

template <session_plugin Plugin>
basic_session_queue<Plugin>::basic_session_queue(queue_config config, latency_model latency,
                                                 std::uint64_t seed, Plugin plugin)
    : config_(std::move(config)),
      latency_(std::move(latency)),
      plugin_(std::move(plugin)),
      rng_(seed) {
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
std::uint32_t basic_session_queue<Plugin>::intern(const std::string& s) {
  const auto [it, added] = interned_.emplace(s, static_cast<std::uint32_t>(interned_.size()));
  return it->second;
}

template <session_plugin Plugin>
ticket_id basic_session_queue<Plugin>::ticket_of(player_id p) const {
  const std::uint64_t* t = player_ticket_.find(p);
  return t ? *t : 0;
}

template <session_plugin Plugin>
double basic_session_queue<Plugin>::max_rtt(time_ms created, time_ms now) const {
  return config_.latency ? max_rtt_after(*config_.latency, now - created) : detail::infinity;
}

template <session_plugin Plugin>
waiting_ticket basic_session_queue<Plugin>::compile(const ticket_request& r, time_ms now) {
  if (r.players.empty()) refuse("players", "a ticket needs at least one player");
  if (r.players.size() > config_.max_party_size)
    refuse("players", "a party of " + std::to_string(r.players.size()) + " is more than " +
                          "the queue's max_party_size of " +
                          std::to_string(config_.max_party_size));
  if (r.give_up_after && r.give_up_after->count() <= 0)
    refuse("give_up_after", "must be greater than 0");
  waiting_ticket t = fresh_record();
  t.created = now;
  t.give_up_at = now + r.give_up_after.value_or(config_.give_up_after);
  const std::size_t dcs = latency_.datacenters().size();
  t.rtt.assign(dcs, 0);
  std::set<player_id> seen;
  for (std::size_t i = 0; i < r.players.size(); ++i) {
    const ticket_player& p = r.players[i];
    if (p.id == invalid_player) refuse(detail::player_field(i, ".id"), "0 is not a player id");
    if (!seen.insert(p.id).second)
      refuse(detail::player_field(i, ".id"),
             "player " + std::to_string(p.id) + " is in the party twice");
    if (!std::isfinite(p.mmr)) refuse(detail::player_field(i, ".mmr"), "must be a finite number");
    if (p.location &&
        (!(std::abs(p.location->latitude) <= 90) || !(std::abs(p.location->longitude) <= 180)))
      refuse(detail::player_field(i, ".location"),
             "latitude within +-90 and longitude within +-180");
    for (const auto& [dc, ms] : p.rtt_ms) {
      if (!latency_.find(dc))
        refuse(detail::player_field(i, ".rtt_ms." + dc), "no such datacenter");
      if (!std::isfinite(ms) || ms < 0)
        refuse(detail::player_field(i, ".rtt_ms." + dc), "must be a number >= 0");
    }
    if (config_.latency && p.rtt_ms.empty() && !p.location)
      refuse(detail::player_field(i, ""),
             "needs rtt_ms or a location for the queue's latency policy");
    for (std::size_t d = 0; d < dcs; ++d) {
      const double* measured = detail::named(p.rtt_ms, latency_.datacenters()[d].name);
      const double rtt = measured     ? *measured
                         : p.location ? latency_.estimate_ms(*p.location, d)
                                      : detail::infinity;
      t.rtt[d] = std::max(t.rtt[d], rtt);
    }
    t.players.push_back(p.id);
    t.player_mmr.push_back(p.mmr);
    t.mmr += p.mmr / static_cast<double>(r.players.size());
  }
  // The party's value for each rule.
  const std::size_t n_rules = config_.rules.size();
  t.numbers.assign(n_rules, 0);
  // Labels and sets only where a rule reads them: two heap blocks less a
  // ticket for the queues without such rules.
  const auto has = [&](rule_kind kind) {
    return std::any_of(config_.rules.begin(), config_.rules.end(),
                       [kind](const rule& ru) { return ru.kind == kind; });
  };
  if (has(rule_kind::equality)) t.labels.assign(n_rules, 0);
  if (has(rule_kind::intersection)) t.sets.assign(n_rules, {});
  for (std::size_t k = 0; k < n_rules; ++k) {
    const rule& ru = config_.rules[k];
    const std::string field = "attributes." + ru.attribute;
    if (ru.kind == rule_kind::difference) {
      if (ru.attribute == "mmr") {
        t.numbers[k] = t.mmr;
        continue;
      }
      double sum = 0;
      for (std::size_t i = 0; i < r.players.size(); ++i) {
        const double* v = detail::named(r.players[i].numbers, ru.attribute);
        if (!v) refuse(detail::player_field(i, "." + field), "the rule '" + ru.name + "' needs it");
        if (!std::isfinite(*v))
          refuse(detail::player_field(i, "." + field), "must be a finite number");
        sum += *v;
      }
      t.numbers[k] = sum / static_cast<double>(r.players.size());
    } else if (ru.kind == rule_kind::equality) {
      // The party's value is its first player's that has one; every player
      // who has one must agree (a party cannot be in two modes at once).
      const std::string* value = nullptr;
      for (std::size_t i = 0; i < r.players.size(); ++i) {
        const std::string* v = detail::named(r.players[i].strings, ru.attribute);
        if (!v) continue;
        if (value && *v != *value)
          refuse(detail::player_field(i, "." + field), "differs from the party's '" + *value + "'");
        value = v;
      }
      if (!value)
        refuse(detail::player_field(0, "." + field), "the rule '" + ru.name + "' needs it");
      t.labels[k] = intern(*value);
    } else if (ru.kind == rule_kind::intersection) {
      // The party's set is what all its players share.
      std::vector<std::uint32_t> common;
      for (std::size_t i = 0; i < r.players.size(); ++i) {
        const auto* v = detail::named(r.players[i].sets, ru.attribute);
        if (!v) refuse(detail::player_field(i, "." + field), "the rule '" + ru.name + "' needs it");
        if (v->size() > 256) refuse(detail::player_field(i, "." + field), "at most 256 items");
        std::vector<std::uint32_t> items;
        for (const auto& s : *v) items.push_back(intern(s));
        std::sort(items.begin(), items.end());
        items.erase(std::unique(items.begin(), items.end()), items.end());
        if (i == 0) {
          common = std::move(items);
        } else {
          std::vector<std::uint32_t> both;
          std::set_intersection(common.begin(), common.end(), items.begin(), items.end(),
                                std::back_inserter(both));
          common = std::move(both);
        }
      }
      t.sets[k] = std::move(common);
    }
  }
  return t;
}

template <session_plugin Plugin>
waiting_ticket basic_session_queue<Plugin>::fresh_record() {
  waiting_ticket t;
  if (spare_.empty()) return t;
  waiting_ticket& old = spare_.back();
  t.players = std::move(old.players);
  t.player_mmr = std::move(old.player_mmr);
  t.numbers = std::move(old.numbers);
  t.rtt = std::move(old.rtt);
  spare_.pop_back();
  t.players.clear();
  t.player_mmr.clear();
  t.numbers.clear();
  t.rtt.clear();
  return t;
}

template <session_plugin Plugin>
add_result basic_session_queue<Plugin>::add(const ticket_request& request, time_ms now) {
  return add_as(request, now, 0);
}

template <session_plugin Plugin>
add_result basic_session_queue<Plugin>::add(const ticket_request& request, time_ms now,
                                            ticket_id id) {
  if (id == 0) refuse("id", "0 is not a ticket id");
  if (index_.contains(id)) refuse("id", "ticket " + std::to_string(id) + " already waits");
  return add_as(request, now, id);
}

template <session_plugin Plugin>
add_result basic_session_queue<Plugin>::restore(const ticket_request& request, time_ms created,
                                                ticket_id id) {
  if (id == 0) refuse("id", "0 is not a ticket id");
  if (index_.contains(id)) refuse("id", "ticket " + std::to_string(id) + " already waits");
  ticket_request r = request;
  r.replace_existing = false;  // the tickets handed over never share a player
  return add_as(r, created, id);
}

template <session_plugin Plugin>
add_result basic_session_queue<Plugin>::add_as(const ticket_request& request, time_ms now,
                                               ticket_id id) {
  waiting_ticket t = compile(request, now);
  add_result out;
  for (std::size_t i = 0; i < t.players.size(); ++i) {
    const ticket_id existing = ticket_of(t.players[i]);
    if (existing == 0) continue;
    if (!request.replace_existing)
      refuse(detail::player_field(i, ".id"), "player " + std::to_string(t.players[i]) +
                                                 " already waits in ticket " +
                                                 std::to_string(existing));
    if (std::find(out.replaced.begin(), out.replaced.end(), existing) == out.replaced.end())
      out.replaced.push_back(existing);
  }
  const ticket_verdict verdict = plugin_.initialize(request, t, config_);
  if (verdict.what == ticket_verdict::action::reject) refuse(verdict.field, verdict.reason);
  if (verdict.what == ticket_verdict::action::fast_track) {
    // A match by itself: its size now, its teams when the plug-in gave them.
    if (t.players.size() < config_.min_players || t.players.size() > config_.max_players)
      refuse("players", "the game's plug-in fast-tracked a party of " +
                            std::to_string(t.players.size()) + ", but a match has " +
                            std::to_string(config_.min_players) + ".." +
                            std::to_string(config_.max_players) + " players");
    if (!verdict.teams.empty()) {
      auto team_of = planned_teams({&t}, verdict.teams);
      if (!team_of) refuse("teams", "the game's plug-in gave teams that are not the queue's");
      t.team_of = std::move(*team_of);
    }
    t.fast_track = true;
    ++stats_.fast_tracked;
  }
  for (ticket_id old : out.replaced) cancel(old);
  t.id = id != 0 ? id : next_ticket_;
  if (id == 0 || id < std::numeric_limits<ticket_id>::max())
    next_ticket_ = std::max(next_ticket_, t.id + 1);
  t.shared = request.shared;
  t.tiebreak = rng_();
  for (player_id p : t.players) player_ticket_.set(p, t.id);
  index_.set(t.id, tickets_.size());
  rows_.push(t);
  tickets_.push_back(std::move(t));
  peak_waiting_ = std::max(peak_waiting_, tickets_.size());
  ++stats_.created;
  out.id = tickets_.back().id;
  return out;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::remove_at(std::size_t i) {
  for (std::size_t p = 0; p < rows_[i].party; ++p) player_ticket_.erase(rows_.player(i, p));
  index_.erase(rows_[i].id);
  move_out(i);
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::move_out(std::size_t i) {
  waiting_ticket gone = std::move(tickets_[i]);
  if (i + 1 != tickets_.size()) {
    tickets_[i] = std::move(tickets_.back());
    index_.set(tickets_[i].id, i);
  }
  tickets_.pop_back();
  rows_.remove(i);
  if (tickets_.size() + spare_.size() < peak_waiting_) spare_.push_back(std::move(gone));
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::cancel(ticket_id id) {
  const std::uint64_t* at = index_.find(id);
  if (!at) return false;
  remove_at(*at);
  ++stats_.cancelled;
  return true;
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::withdraw(ticket_id id) {
  const std::uint64_t* at = index_.find(id);
  if (!at) return false;
  remove_at(*at);
  ++stats_.withdrawn;
  return true;
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
  if (lane_position_.empty()) return;
  const std::size_t n_lanes = lanes_.size();
  for (std::size_t l = 0; l < n_lanes; ++l)
    if (const std::size_t p = lane_position_[i * n_lanes + l]; p != value_lane::npos)
      lanes_[l].take(p);
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
  lane_position_.clear();  // last tick's lanes: take() marks only `taken` until the new ones
  for (std::size_t i = 0; i < tickets_.size(); ++i) {
    const ticket_rows::head t = rows_[i];
    const bool expires = now >= t.give_up_at;
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
  // The candidates' index for this tick: the tickets by the first
  // difference rule's value; with a latency policy, one lane per block of 64
  // datacenters, of the tickets within their threshold of one of them (the
  // entry's mask says which).
  for (auto& l : lanes_) l.clear();
  const std::size_t n_dcs = latency_.datacenters().size();
  lanes_.resize(!use_index_ || primary_ < 0 ? 0 : config_.latency ? (n_dcs + 63) / 64 : 1);
  if (!lanes_.empty()) {
    const auto k = static_cast<std::size_t>(primary_);
    for (std::size_t i = 0; i < tickets_.size(); ++i) {
      const ticket_rows::head t = rows_[i];
      if (taken[i] || t.fast_track) continue;  // a fast-tracked party joins no group
      const double value = rows_.number(i, k);
      if (!config_.latency) {
        lanes_[0].add(value, ~std::uint64_t{0}, t.tiebreak, i, t.party);
        continue;
      }
      const std::uint64_t* mask = within(i, now);
      for (std::size_t l = 0; l < lanes_.size(); ++l)
        if (mask[l] != 0) lanes_[l].add(value, mask[l], t.tiebreak, i, t.party);
    }
    for (auto& l : lanes_) l.seal();
    // Each ticket's position in each lane: a seed's walk starts there
    // instead of searching for its value, and take() marks the entries.
    const std::size_t n_lanes = lanes_.size();
    lane_position_.assign(tickets_.size() * n_lanes, value_lane::npos);
    for (std::size_t l = 0; l < n_lanes; ++l)
      for (std::size_t p = 0; p < lanes_[l].size(); ++p)
        lane_position_[lanes_[l][p].ticket * n_lanes + l] = p;
    seen_.assign(tickets_.size(), 0);
    stamp_ = 0;
  }
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
  // 3. Matched, expired and failed tickets leave the queue: their ids and
  //    players out of the lookups all at once (in the lookups' order of
  //    memory), then the tickets, highest index first (move_out() moves the
  //    last ticket into the hole).
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
  spare_.reserve(peak_waiting_);  // once: the records move in without the array moving
  for (std::size_t i = tickets_.size(); i-- > 0;)
    if (taken[i]) move_out(i);
  return out;
}

}  // namespace mm::session
