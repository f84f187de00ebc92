// The waiting tickets' records of basic_session_queue (session_queue.hpp),
// part of its member definitions: a request checked and compiled into a
// record (its values per rule, its RTT per datacenter), adds, restores,
// cancels and removals, and the records kept for the next tickets' buffers.
// The match loop is in session_queue_impl.hpp, which includes this file: a
// game with its own plug-in includes that one.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "mm/engine/error.hpp"
#include "mm/session/refuse.hpp"
#include "mm/session/session_queue.hpp"
#include "mm/session/session_queue_groups.hpp"

namespace mm::session {

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
  compile_party(r.players, detail::player_field, true, t);
  return t;
}

template <session_plugin Plugin>
template <class Field>
void basic_session_queue<Plugin>::compile_party(const std::vector<ticket_player>& party,
                                                const Field& field, bool needs_rtt,
                                                waiting_ticket& t) {
  const std::size_t dcs = latency_.datacenters().size();
  t.rtt.assign(dcs, 0);
  std::set<player_id> seen;
  for (std::size_t i = 0; i < party.size(); ++i) {
    const ticket_player& p = party[i];
    if (p.id == invalid_player) refuse(field(i, ".id"), "0 is not a player id");
    if (!seen.insert(p.id).second)
      refuse(field(i, ".id"), "player " + std::to_string(p.id) + " is in the party twice");
    if (!std::isfinite(p.mmr)) refuse(field(i, ".mmr"), "must be a finite number");
    if (p.location &&
        (!(std::abs(p.location->latitude) <= 90) || !(std::abs(p.location->longitude) <= 180)))
      refuse(field(i, ".location"), "latitude within +-90 and longitude within +-180");
    for (const auto& [dc, ms] : p.rtt_ms) {
      if (!latency_.find(dc)) refuse(field(i, ".rtt_ms." + dc), "no such datacenter");
      if (!std::isfinite(ms) || ms < 0) refuse(field(i, ".rtt_ms." + dc), "must be a number >= 0");
    }
    if (needs_rtt && config_.latency && p.rtt_ms.empty() && !p.location)
      refuse(field(i, ""), "needs rtt_ms or a location for the queue's latency policy");
    for (std::size_t d = 0; d < dcs; ++d) {
      const double* measured = detail::named(p.rtt_ms, latency_.datacenters()[d].name);
      const double rtt = measured     ? *measured
                         : p.location ? latency_.estimate_ms(*p.location, d)
                         : needs_rtt  ? detail::infinity
                                      : 0;
      t.rtt[d] = std::max(t.rtt[d], rtt);
    }
    t.players.push_back(p.id);
    t.player_mmr.push_back(p.mmr);
    t.mmr += p.mmr / static_cast<double>(party.size());
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
    const std::string name = "attributes." + ru.attribute;
    if (ru.kind == rule_kind::difference) {
      if (ru.attribute == "mmr") {
        t.numbers[k] = t.mmr;
        continue;
      }
      double sum = 0;
      for (std::size_t i = 0; i < party.size(); ++i) {
        const double* v = detail::named(party[i].numbers, ru.attribute);
        if (!v) refuse(field(i, "." + name), "the rule '" + ru.name + "' needs it");
        if (!std::isfinite(*v)) refuse(field(i, "." + name), "must be a finite number");
        sum += *v;
      }
      t.numbers[k] = sum / static_cast<double>(party.size());
    } else if (ru.kind == rule_kind::equality) {
      // The party's value is its first player's that has one; every player
      // who has one must agree (a party cannot be in two modes at once).
      const std::string* value = nullptr;
      for (std::size_t i = 0; i < party.size(); ++i) {
        const std::string* v = detail::named(party[i].strings, ru.attribute);
        if (!v) continue;
        if (value && *v != *value)
          refuse(field(i, "." + name), "differs from the party's '" + *value + "'");
        value = v;
      }
      if (!value) refuse(field(0, "." + name), "the rule '" + ru.name + "' needs it");
      t.labels[k] = intern(*value);
    } else if (ru.kind == rule_kind::intersection) {
      // The party's set is what all its players share.
      std::vector<std::uint32_t> common;
      for (std::size_t i = 0; i < party.size(); ++i) {
        const auto* v = detail::named(party[i].sets, ru.attribute);
        if (!v) refuse(field(i, "." + name), "the rule '" + ru.name + "' needs it");
        if (v->size() > 256) refuse(field(i, "." + name), "at most 256 items");
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
}

template <session_plugin Plugin>
waiting_ticket basic_session_queue<Plugin>::fresh_record() {
  waiting_ticket t;
  if (spare_.empty()) return t;
  spare_buffers& old = spare_.back();
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
void basic_session_queue<Plugin>::keep_buffers(waiting_ticket& t) {
  spare_.push_back(
      {std::move(t.players), std::move(t.player_mmr), std::move(t.numbers), std::move(t.rtt)});
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
waiting_ticket basic_session_queue<Plugin>::admit(const ticket_request& request, time_ms now) {
  waiting_ticket t = compile(request, now);
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
  }
  return t;
}

template <session_plugin Plugin>
void basic_session_queue<Plugin>::check(const ticket_request& request, time_ms now) {
  admit(request, now);
}

template <session_plugin Plugin>
add_result basic_session_queue<Plugin>::add_as(const ticket_request& request, time_ms now,
                                               ticket_id id) {
  waiting_ticket t = admit(request, now);
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
  if (t.fast_track) ++stats_.fast_tracked;
  for (ticket_id old : out.replaced) cancel(old);
  t.id = id != 0 ? id : next_ticket_;
  if (id == 0 || id < std::numeric_limits<ticket_id>::max())
    next_ticket_ = std::max(next_ticket_, t.id + 1);
  t.shared = request.shared;
  t.new_matches_only = request.new_matches_only;
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
  // Its buffers to the spare ones (or freed below when there are enough).
  if (tickets_.size() - 1 + spare_.size() < peak_waiting_) keep_buffers(tickets_[i]);
  if (i + 1 != tickets_.size()) {
    tickets_[i] = std::move(tickets_.back());
    index_.set(tickets_[i].id, i);
  }
  tickets_.pop_back();
  rows_.remove(i);
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::remove_counted(ticket_id id, std::uint64_t& counter) {
  const std::uint64_t* at = index_.find(id);
  if (!at) return false;
  remove_at(*at);
  ++counter;
  return true;
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::cancel(ticket_id id) {
  return remove_counted(id, stats_.cancelled);
}

template <session_plugin Plugin>
bool basic_session_queue<Plugin>::withdraw(ticket_id id) {
  return remove_counted(id, stats_.withdrawn);
}

}  // namespace mm::session
