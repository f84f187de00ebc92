// Explain in basic_session_queue (session_queue.hpp), part of its member
// definitions: why a waiting ticket, or a running match with open seats,
// still waits (explain.hpp says what the answer holds and how each
// candidate is judged). Read only: it uses the loop's own admission check
// (refused_by, teams_fit, seat_parties) on groups of its own, and none of
// the tick's state.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mm/session/explain.hpp"
#include "mm/session/session_queue.hpp"
#include "mm/session/session_queue_groups.hpp"

namespace mm::session {

namespace detail {

inline std::string plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace detail

template <session_plugin Plugin>
std::optional<explanation> basic_session_queue<Plugin>::explain(
    ticket_id id, time_ms now, const explain_options& options) const {
  const std::uint64_t* at = index_.find(id);
  if (!at) return std::nullopt;
  const auto t = static_cast<std::size_t>(*at);
  explanation e;
  e.queue = config_.name;
  const time_ms waited = now - rows_[t].created;
  explain_subject(e, rows_[t].created, now);
  e.gives_up_in_ms = std::max<std::int64_t>(0, (rows_.give_up_at(t) - now).count());
  e.players = rows_[t].party;
  e.players_needed = config_.min_players > e.players ? config_.min_players - e.players : 0;
  // Its stage, and the datacenters it may play at now.
  const std::size_t words = rows_.mask_words();
  std::vector<std::uint64_t> where(words, 0);
  if (config_.latency) {
    const latency_stages& p = *config_.latency;
    e.has_stage = true;
    e.stage = stage_after(p, waited);
    const time_ms ends = e.stage == latency_stage::ideal       ? p.expand_after
                         : e.stage == latency_stage::expand    ? p.warm_body_after
                         : e.stage == latency_stage::warm_body ? p.fail_after
                                                               : waited;
    e.next_stage_in_ms = std::max<std::int64_t>(0, (ends - waited).count());
    const double rtt = max_rtt_after(p, waited);
    e.max_rtt_ms = std::isfinite(rtt) ? rtt : -1;
    const std::uint64_t* own = within(t, now);
    const std::uint64_t* finite = rows_.finite(t);
    for (std::size_t w = 0; w < words; ++w) where[w] = own[w] & finite[w];
    detail::for_each_bit(where.data(), words, [&](std::size_t d) {
      if (e.datacenters.size() < options.max_listed_datacenters)
        e.datacenters.push_back(latency_.datacenters()[d].name);
      ++e.datacenter_count;
    });
  }
  // Each candidate as a pair: the older of the two seeds.
  std::vector<std::uint64_t> players_at(latency_.datacenters().size(), 0);
  group pair;
  const double v = primary_ >= 0 ? rows_.number(t, static_cast<std::size_t>(primary_)) : 0;
  for (const std::size_t c : nearest_to(v, t, options.limit, e.waiting)) {
    const bool older = rows_[c].created != rows_[t].created ? rows_[c].created < rows_[t].created
                                                            : rows_[c].tiebreak < rows_[t].tiebreak;
    const std::size_t seed = older ? c : t, other = older ? t : c;
    start_group(pair, seed, now);
    const std::int32_t code = refused_by(pair, other, now, nullptr);
    const refusal why = code >= 0                ? refusal::rule
                        : code == over_size      ? refusal::players
                        : code == no_datacenter  ? refusal::datacenter
                        : teams_fit(pair, other) ? refusal::none
                                                 : refusal::teams;
    count_refusal(e, c, why, code >= 0 ? code : -1, options, now);
    if (why != refusal::none || !config_.latency) continue;
    const std::uint64_t* theirs = within(c, now);
    const std::uint64_t* finite = rows_.finite(c);
    for (std::size_t w = 0; w < words; ++w) {
      const std::uint64_t shared = where[w] & theirs[w] & finite[w];
      detail::for_each_bit(&shared, 1,
                           [&](std::size_t d) { players_at[w * 64 + d] += rows_[c].party; });
    }
  }
  explain_verdict(e, players_at);
  return e;
}

template <session_plugin Plugin>
std::optional<explanation> basic_session_queue<Plugin>::explain_backfill(
    const std::string& match_id, time_ms now, const explain_options& options) const {
  const running_match* m = backfills_.find(match_id);
  if (!m) return std::nullopt;
  explanation e;
  e.queue = config_.name;
  e.running_match = true;
  explain_subject(e, m->registered, now);
  e.players = backfills_.open(*m);
  e.players_needed = e.players == 0 ? 0 : 1;
  std::vector<std::uint64_t> players_at(latency_.datacenters().size(), 0);
  if (m->datacenter < latency_.datacenters().size()) {
    e.datacenters.push_back(latency_.datacenters()[m->datacenter].name);
    e.datacenter_count = 1;
  }
  group g;
  start_anchor(g, *m, now);
  const double v = primary_ >= 0 ? m->players.numbers[static_cast<std::size_t>(primary_)] : 0;
  for (const std::size_t c : nearest_to(v, no_ticket, options.limit, e.waiting, true)) {
    // In the order fill() checks them.
    std::int32_t code = admitted;
    refusal why = refusal::none;
    if (already_in(*m, c)) {
      why = refusal::already_in;
    } else if (code = refused_by(g, c, now, nullptr); code != admitted) {
      why = code >= 0 ? refusal::rule : code == over_size ? refusal::players : refusal::datacenter;
    } else if (!seat_parties(*m, {c}, now)) {
      why = refusal::teams;
    }
    count_refusal(e, c, why, code >= 0 ? code : -1, options, now);
    if (why == refusal::none && m->datacenter < players_at.size())
      players_at[m->datacenter] += rows_[c].party;
  }
  explain_verdict(e, players_at);
  return e;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::explain_subject(explanation& e, time_ms since,
                                                  time_ms now) const {
  const time_ms waited = std::max(time_ms(0), now - since);
  e.waited_ms = waited.count();
  for (const rule& r : config_.rules) {
    rule_explanation x;
    x.name = r.name;
    x.kind = r.kind;
    x.filters = filters_after(r, waited);
    if (r.kind == rule_kind::difference || r.kind == rule_kind::team_balance) {
      x.threshold = threshold_after(r, waited);
      const auto every = r.expand.every.count();
      if (every > 0 && r.expand.step > 0 &&
          x.threshold < std::max(r.expand.limit, r.max_difference))
        x.next_expansion_in_ms = every - waited.count() % every;
    }
    if (r.optional_after && waited < *r.optional_after)
      x.optional_in_ms = (*r.optional_after - waited).count();
    e.rules.push_back(std::move(x));
  }
  e.refused_by_rule.assign(config_.rules.size(), 0);
}

// One pass over the waiting tickets (all of them, the fast-tracked aside,
// counted into `pool`), then a partial sort of the nearest `limit`.
template <session_plugin Plugin>
std::vector<std::size_t> basic_session_queue<Plugin>::nearest_to(double v, std::size_t skip,
                                                                 std::size_t limit,
                                                                 std::uint64_t& pool,
                                                                 bool backfill) const {
  struct key {
    double gap;
    time_ms::rep created;
    std::uint64_t tiebreak;
    std::size_t ticket;
    bool operator<(const key& o) const {
      if (gap != o.gap) return gap < o.gap;
      if (created != o.created) return created < o.created;
      return tiebreak < o.tiebreak;
    }
  };
  std::vector<key> keys;
  keys.reserve(tickets_.size());
  for (std::size_t i = 0; i < tickets_.size(); ++i) {
    if (i == skip || rows_[i].fast_track || (backfill && rows_[i].new_matches_only)) continue;
    const double gap =
        primary_ >= 0 ? std::abs(rows_.number(i, static_cast<std::size_t>(primary_)) - v) : 0;
    keys.push_back({gap, rows_[i].created.count(), rows_[i].tiebreak, i});
  }
  pool = keys.size();
  const std::size_t n = std::min(limit, keys.size());
  std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(n), keys.end());
  std::vector<std::size_t> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(keys[i].ticket);
  return out;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::count_refusal(explanation& e, std::size_t c, refusal why,
                                                std::int32_t rule, const explain_options& options,
                                                time_ms now) const {
  ++e.examined;
  const std::uint32_t party = rows_[c].party;
  switch (why) {
    case refusal::none:
      ++e.compatible;
      e.compatible_players += party;
      break;
    case refusal::rule:
      ++e.refused_by_rule[static_cast<std::size_t>(rule)];
      break;
    case refusal::players:
      ++e.refused_players;
      break;
    case refusal::teams:
      ++e.refused_teams;
      break;
    case refusal::datacenter:
      ++e.refused_datacenter;
      break;
    case refusal::already_in:
      ++e.refused_already_in;
      break;
  }
  if (e.nearest.size() < options.max_listed)
    e.nearest.push_back(
        {rows_[c].id, party, tickets_[c].mmr, (now - rows_[c].created).count(), why, rule});
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::explain_verdict(
    explanation& e, const std::vector<std::uint64_t>& players_at) const {
  using detail::plural;
  if (config_.latency && !players_at.empty()) {
    const auto best = std::max_element(players_at.begin(), players_at.end());
    if (*best > 0) {
      e.best_datacenter =
          latency_.datacenters()[static_cast<std::size_t>(best - players_at.begin())].name;
      e.best_datacenter_players = *best;
    }
  } else {
    e.best_datacenter_players = e.compatible_players;
  }
  // The refusal that kept out the most candidates, in words.
  const top_refusal top = most_refused(e);
  std::string words;
  switch (top.why) {
    case refusal::rule:
      words = "rule '" + e.rules[static_cast<std::size_t>(top.rule)].name + "'";
      break;
    case refusal::players:
      words = "the match's size";
      break;
    case refusal::teams:
      words = "the teams' sizes";
      break;
    case refusal::datacenter:
      words = "no datacenter within both latency stages";
      break;
    case refusal::already_in:
      words = "a player already in the match";
      break;
    case refusal::none:
      break;
  }
  const std::string refused =
      top.count == 0 ? std::string()
                     : "; of the " + plural(e.examined, "ticket", "tickets") + " judged, " + words +
                           " kept out " + std::to_string(top.count);
  const std::string at = e.best_datacenter.empty() ? "" : " at " + e.best_datacenter;
  const std::string queue = "queue '" + config_.name + "'";
  const bool match = e.running_match;
  if (match && e.players == 0) {
    e.verdict = wait_verdict::enough_players;
    e.summary = "no open seat: every seat is taken or reserved";
  } else if (e.waiting == 0) {
    e.verdict = wait_verdict::no_candidates;
    e.summary = match ? "no ticket waits in " + queue + " for its " +
                            plural(e.players, "open seat", "open seats")
                      : "no other ticket waits in " + queue + "; a match needs " +
                            plural(e.players_needed, "more player", "more players");
  } else if (e.best_datacenter_players < e.players_needed || e.compatible == 0) {
    e.verdict = wait_verdict::too_few_players;
    e.summary = match ? "no waiting ticket fits its " +
                            plural(e.players, "open seat", "open seats") + at + refused
                      : plural(e.best_datacenter_players, "player", "players") +
                            " of other tickets could play with it" + at + "; a match needs " +
                            plural(e.players_needed, "more player", "more players") + refused;
  } else {
    e.verdict = wait_verdict::enough_players;
    e.summary = match ? plural(e.compatible, "waiting ticket fits", "waiting tickets fit") +
                            " its open seats" + at + ": the next tick places them"
                      : plural(e.best_datacenter_players, "player", "players") +
                            " of other tickets could play with it" + at + ", enough for the " +
                            plural(e.players_needed, "more player", "more players") +
                            " a match needs: the next tick tries (a rule on the group's mean, "
                            "team balance or tickets taken by older seeds can still keep it "
                            "waiting)";
  }
}

}  // namespace mm::session
