#include "mm/actors/session_queue_actor.hpp"

#include <algorithm>

#include "mm/actors/errors.hpp"
#include "mm/engine/error.hpp"

namespace mm::actors {

namespace {

session::time_ms now_of(session_queue_pointer self) {
  return std::chrono::duration_cast<session::time_ms>(self->clock().now() - self->state.epoch);
}

// Tells the sink that these tickets (the engine's ids) left the queue.
void hand_over_removed(session_queue_pointer self, const std::vector<std::uint64_t>& ids) {
  const auto& st = self->state;
  if (!st.config.handover || ids.empty()) return;
  std::vector<std::uint64_t> global;
  global.reserve(ids.size());
  for (std::uint64_t id : ids) global.push_back(id + st.config.ticket_id_base);
  self->send(st.config.handover, handover_atom::value, st.config.number, std::move(global));
}

void keep_owner(session_queue_pointer self, std::uint64_t id,
                const session_interfaces::owner& owner) {
  auto& st = self->state;
  st.owners[id] = owner;
  if (owner && st.owner_tickets[owner.address()]++ == 0) self->monitor(owner);
}

session_match to_message(const session::formed_match& m, const session_queue_state& st) {
  session_match out;
  out.id = m.id;
  out.queue = st.config.queue.name;
  const auto& dcs = st.queue->latency().datacenters();
  if (m.datacenter < dcs.size()) out.datacenter = dcs[m.datacenter].name;
  out.teams = m.teams;
  for (std::uint64_t t : m.tickets) out.tickets.push_back(t + st.config.ticket_id_base);
  out.mmr_spread = m.mmr_spread;
  out.worst_rtt_ms = m.worst_rtt_ms;
  out.bot_match = m.bot_match;
  out.formed_at_ms = m.formed_at.count();
  return out;
}

// The ticket left the queue: its owner is told (once), and the outcome is
// kept for status requests. Owners and outcomes are kept by the engine's id.
void finish(session_queue_pointer self, ticket_outcome outcome) {
  auto& st = self->state;
  const std::uint64_t id = outcome.ticket - st.config.ticket_id_base;
  if (const auto it = st.owners.find(id); it != st.owners.end()) {
    const auto owner = it->second;
    st.owners.erase(it);
    if (owner) {
      self->send(owner, ticket_atom::value, outcome);
      const auto counted = st.owner_tickets.find(owner.address());
      if (counted != st.owner_tickets.end() && --counted->second == 0) {
        self->demonitor(owner.address());
        st.owner_tickets.erase(counted);
      }
    }
  }
  st.finished[id] = std::move(outcome);
  st.finished_order.push_back(id);
  while (st.finished_order.size() > st.config.finished_kept) {
    st.finished.erase(st.finished_order.front());
    st.finished_order.pop_front();
  }
}

// `id` is the engine's.
ticket_outcome outcome_of(const session_queue_state& st, std::uint64_t id,
                          session::ticket_state state) {
  ticket_outcome o;
  o.queue = st.config.queue.name;
  o.ticket = id + st.config.ticket_id_base;
  o.state = state;
  return o;
}

// Tickets that left the engine without a match (cancelled, expired, failed):
// the sink hears it first, then their owners.
void leave(session_queue_pointer self, const std::vector<std::uint64_t>& ids,
           session::ticket_state state) {
  hand_over_removed(self, ids);
  for (std::uint64_t id : ids) finish(self, outcome_of(self->state, id, state));
}

// The report's figures of a match, before its tickets leave the actor's books.
void measure(session_queue_state& st, const session::formed_match& m) {
  for (const auto& team : m.teams) st.players_matched += team.size();
  st.mmr_spread.add(m.mmr_spread);
  if (m.datacenter < st.queue->latency().datacenters().size()) st.worst_rtt_ms.add(m.worst_rtt_ms);
  for (const session::time_ms created : m.created)
    st.wait_seconds.add(static_cast<double>((m.formed_at - created).count()) / 1000.0);
}

void run_tick(session_queue_pointer self) {
  auto& st = self->state;
  session::tick_result r = st.queue->tick(now_of(self));
  std::vector<std::uint64_t> matched;
  for (const auto& m : r.matches) {
    matched.insert(matched.end(), m.tickets.begin(), m.tickets.end());
    measure(st, m);
  }
  hand_over_removed(self, matched);
  for (const auto& m : r.matches) {
    const session_match match = to_message(m, st);
    for (std::uint64_t id : m.tickets) {
      ticket_outcome o = outcome_of(st, id, session::ticket_state::matched);
      o.match = match;
      finish(self, std::move(o));
    }
  }
  leave(self, r.expired, session::ticket_state::expired);
  leave(self, r.failed, session::ticket_state::failed);
}

// Oldest first; ties by id.
std::vector<waiting_ticket_view> waiting_page(session_queue_pointer self, std::uint32_t offset,
                                              std::uint32_t limit) {
  const auto& st = self->state;
  const auto& all = st.queue->tickets();
  std::vector<const session::waiting_ticket*> order;
  order.reserve(all.size());
  for (const auto& t : all) order.push_back(&t);
  const std::size_t end = std::min<std::size_t>(all.size(), std::size_t{offset} + limit);
  if (offset >= end) return {};
  const auto older = [](const session::waiting_ticket* a, const session::waiting_ticket* b) {
    return a->created != b->created ? a->created < b->created : a->id < b->id;
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(end), order.end(),
                    older);
  const auto now = now_of(self);
  std::vector<waiting_ticket_view> out;
  for (std::size_t i = offset; i < end; ++i) {
    const session::waiting_ticket& t = *order[i];
    waiting_ticket_view v;
    v.ticket = t.id + st.config.ticket_id_base;
    v.players = t.players;
    v.mmr = t.mmr;
    v.waited_ms = (now - t.created).count();
    v.gives_up_in_ms = (t.give_up_at - now).count();
    if (st.config.queue.latency)
      v.stage = session::to_string(session::stage_after(*st.config.queue.latency, now - t.created));
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

session_interfaces::queue_actor::behavior_type session_queue_actor(
    session_queue_pointer self, session_queue_actor_config config) {
  auto& st = self->state;
  st.queue = std::make_unique<session::session_queue>(config.queue, config.latency, config.seed);
  st.config = std::move(config);
  st.epoch = st.config.epoch.value_or(self->clock().now());
  // The tickets of an earlier run wait again, with their ids, times and owners.
  std::vector<std::uint64_t> dropped;
  for (const auto& h : st.config.restored) {
    const std::uint64_t id = h.id - st.config.ticket_id_base;
    try {
      st.queue->restore(to_request(h.ticket), session::time_ms(h.created_ms), id);
      keep_owner(self, id, h.owner);
    } catch (const mm::error&) {
      dropped.push_back(id);  // a config changed under it; told to nobody
    }
  }
  hand_over_removed(self, dropped);
  st.config.restored.clear();
  // An owner that is gone cannot be told its match: its waiting tickets are
  // cancelled (and told to nobody).
  self->set_down_handler([self](caf::down_msg& down) {
    auto& s = self->state;
    s.owner_tickets.erase(down.source);
    std::vector<std::uint64_t> orphans;
    for (const auto& [id, owner] : s.owners)
      if (owner.address() == down.source) orphans.push_back(id);
    std::vector<std::uint64_t> cancelled;
    for (std::uint64_t id : orphans) {
      s.owners.erase(id);
      if (s.queue->cancel(id)) cancelled.push_back(id);
    }
    leave(self, cancelled, session::ticket_state::cancelled);
  });
  self->delayed_send(self, st.config.queue.tick, session_tick_atom::value);
  return {
      [self](create_atom, const session_ticket& t,
             const session_interfaces::owner& owner) -> caf::result<std::uint64_t> {
        auto& s = self->state;
        session::add_result added;
        try {
          added = s.queue->add(to_request(t), now_of(self));
        } catch (const mm::error& e) {
          return make_error(e.code(), e.what());
        }
        leave(self, added.replaced, session::ticket_state::cancelled);
        if (s.config.handover)
          self->send(
              s.config.handover, handover_atom::value, s.config.number,
              handover_ticket{added.id + s.config.ticket_id_base, t, owner, now_of(self).count()});
        keep_owner(self, added.id, owner);
        return added.id + s.config.ticket_id_base;
      },
      [self](cancel_atom, std::uint64_t global) {
        auto& s = self->state;
        const std::uint64_t id = global - s.config.ticket_id_base;
        if (global < s.config.ticket_id_base || !s.queue->cancel(id)) return false;
        leave(self, {id}, session::ticket_state::cancelled);
        return true;
      },
      [self](status_atom, std::uint64_t global) -> caf::result<ticket_outcome> {
        const auto& s = self->state;
        const std::uint64_t id = global - s.config.ticket_id_base;
        if (global >= s.config.ticket_id_base) {
          if (s.queue->is_waiting(id)) return outcome_of(s, id, session::ticket_state::waiting);
          if (const auto it = s.finished.find(id); it != s.finished.end()) return it->second;
        }
        return make_error(errc::invalid_argument, "ticket: no ticket " + std::to_string(global) +
                                                      " in queue '" + s.config.queue.name +
                                                      "' (or it finished long ago)");
      },
      [self](info_atom) {
        const auto& s = self->state;
        const auto& q = s.queue->stats();
        session_queue_report r;
        r.queue = s.config.queue.name;
        r.waiting = s.queue->waiting();
        r.created = q.created;
        r.matched = q.matched;
        r.cancelled = q.cancelled;
        r.expired = q.expired;
        r.failed = q.failed;
        r.matches = q.matches;
        r.bot_matches = q.bot_matches;
        r.players_matched = s.players_matched;
        r.wait_seconds = s.wait_seconds;
        r.mmr_spread = s.mmr_spread;
        r.worst_rtt_ms = s.worst_rtt_ms;
        const auto now = now_of(self);
        for (const auto& t : s.queue->tickets()) {
          const auto stage = s.config.queue.latency
                                 ? session::stage_after(*s.config.queue.latency, now - t.created)
                                 : session::latency_stage::ideal;
          r.waiting_ideal += stage == session::latency_stage::ideal ? 1 : 0;
          r.waiting_expand += stage == session::latency_stage::expand ? 1 : 0;
          r.waiting_warm_body += stage == session::latency_stage::warm_body ? 1 : 0;
        }
        return r;
      },
      [self](inspect_atom, std::uint32_t offset, std::uint32_t limit) {
        return waiting_page(self, offset, limit);
      },
      [self](session_tick_atom) {
        run_tick(self);
        self->delayed_send(self, self->state.config.queue.tick, session_tick_atom::value);
      },
  };
}

}  // namespace mm::actors
