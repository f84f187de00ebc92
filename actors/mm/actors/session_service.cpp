#include "mm/actors/session_service.hpp"

#include <algorithm>

#include "mm/actors/errors.hpp"
#include "mm/engine/log.hpp"

namespace mm::actors {

namespace {

// Starts (or starts again) the queue in slot `number - 1`, with the tickets
// it handed over.
void start_queue(session_service_pointer self, std::uint64_t number) {
  auto& st = self->state;
  session_queue_slot& slot = st.queues[number - 1];
  session_queue_actor_config c;
  c.queue = slot.config;
  c.latency = st.config.latency;
  c.seed = st.config.seed + number + 1'000'003ull * slot.restarts;
  c.finished_kept = st.config.finished_kept;
  c.ticket_id_base = number << ticket_queue_shift;
  c.epoch = st.epoch;
  c.number = number;
  c.handover = caf::actor_cast<handover_sink>(self);
  for (const auto& [id, h] : slot.waiting) c.restored.push_back(h);
  // By id: the order they came in (their tiebreaks are drawn anew).
  std::sort(c.restored.begin(), c.restored.end(),
            [](const handover_ticket& a, const handover_ticket& b) { return a.id < b.id; });
  slot.handle = self->spawn<caf::linked>(session_queue_actor, std::move(c));
  slot.started = self->clock().now();
}

// A slot for the queue, not started yet; its index.
std::size_t add_slot(session_service_state& st, session::queue_config q) {
  st.by_name[q.name] = st.queues.size();
  session_queue_slot slot;
  slot.config = std::move(q);
  st.queues.push_back(std::move(slot));
  return st.queues.size() - 1;
}

std::size_t add_queue(session_service_pointer self, session::queue_config q) {
  const std::size_t at = add_slot(self->state, std::move(q));
  start_queue(self, at + 1);
  return at;
}

// The config of a queue named `name` that has no slot yet, when one may be
// made: a shard of a sharded queue ("coop.eu"), or a queue from the default
// config.
std::optional<session::queue_config> config_for_new(const session_service_state& st,
                                                    const std::string& name) {
  if (const auto dot = name.find('.'); dot != std::string::npos) {
    const auto base = st.sharded.find(name.substr(0, dot));
    if (base == st.sharded.end() || !session::valid_queue_name(name.substr(dot + 1)))
      return std::nullopt;
    session::queue_config c = base->second;
    c.name = name;
    c.shard_by.clear();
    return c;
  }
  if (!st.config.default_queue || !session::valid_queue_name(name)) return std::nullopt;
  session::queue_config c = *st.config.default_queue;
  c.name = name;
  c.shard_by.clear();  // a queue made on first use is one queue
  return c;
}

// The shard of a sharded queue a ticket goes to: its players' value of the
// attribute, which must be the same for all and fit a queue name.
caf::expected<std::string> shard_of(const session_ticket& t, const session::queue_config& base) {
  std::string value;
  for (std::size_t i = 0; i < t.players.size(); ++i) {
    const std::string field = "players[" + std::to_string(i) + "].strings." + base.shard_by;
    const auto& strings = t.players[i].strings;
    const auto it = std::find_if(strings.begin(), strings.end(),
                                 [&](const named_text& x) { return x.name == base.shard_by; });
    if (it == strings.end())
      return make_error(errc::invalid_argument, field + ": queue '" + base.name +
                                                    "' is split by it: every player needs it");
    if (!session::valid_queue_name(it->value))
      return make_error(errc::invalid_argument, field + ": 1 to 64 of a-z, 0-9, _ and -");
    if (i > 0 && it->value != value)
      return make_error(errc::invalid_argument, field + ": differs from players[0]'s");
    value = it->value;
  }
  return base.name + "." + value;
}

// The tickets of an earlier run into their slots (before the queues start):
// a ticket whose queue has another number now is dropped.
void place_restored(session_service_state& st) {
  auto restored = std::move(st.config.restored_tickets);
  st.config.restored_tickets.clear();
  std::sort(restored.begin(), restored.end(),
            [](const saved_ticket& a, const saved_ticket& b) { return a.ticket.id < b.ticket.id; });
  std::size_t placed = 0, dropped = 0;
  for (auto& r : restored) {
    const std::uint64_t number = r.ticket.id >> ticket_queue_shift;
    if (!st.by_name.count(r.queue) && st.queues.size() < st.config.max_queues &&
        number == st.queues.size() + 1)
      if (auto c = config_for_new(st, r.queue)) add_slot(st, std::move(*c));
    const auto it = st.by_name.find(r.queue);
    if (it == st.by_name.end() || it->second + 1 != number) {
      ++dropped;
      continue;
    }
    r.ticket.owner = nullptr;  // an actor of the old run
    const std::uint64_t id = r.ticket.id;
    st.queues[it->second].waiting[id] = std::move(r.ticket);
    ++placed;
  }
  if (placed + dropped > 0)
    log(log_level::info, "session service: " + std::to_string(placed) +
                             " waiting tickets of the last run wait again" +
                             (dropped ? ", " + std::to_string(dropped) +
                                            " dropped (their queue is gone or renumbered)"
                                      : std::string()));
}

// The slot a ticket id belongs to, or nothing.
session_queue_slot* slot_of(session_service_state& st, std::uint64_t ticket) {
  const std::uint64_t number = ticket >> ticket_queue_shift;
  if (number == 0 || number > st.queues.size()) return nullptr;
  return &st.queues[number - 1];
}

void start_lobbies(session_service_pointer self, std::vector<lobby_registration> restored) {
  auto& st = self->state;
  session_lobbies_config c;
  c.lobbies = st.config.lobbies;
  c.latency = st.config.latency;
  c.seed = st.config.seed + 7;
  c.restored = std::move(restored);
  st.lobbies = self->spawn<caf::linked>(session_lobbies_actor, std::move(c));
  st.lobbies_started = self->clock().now();
}

// Passes a lobby message on, or answers instance_down while the lobbies restart.
template <class Reply, class... Ts>
caf::result<Reply> to_lobbies(session_service_pointer self, Ts&&... xs) {
  if (!self->state.lobbies)
    return make_error(errc::instance_down, "the lobbies are restarting after a crash");
  return self->delegate(self->state.lobbies, lobby_atom::value, std::forward<Ts>(xs)...);
}

// Answers the save once no queue runs: the tickets they handed over.
void finish_saving(session_service_pointer self) {
  auto& st = self->state;
  if (!st.saving) return;
  for (const auto& slot : st.queues)
    if (slot.handle) return;
  saved_tickets out;
  out.now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(self->clock().now() - st.epoch).count();
  for (const auto& slot : st.queues)
    for (const auto& [id, h] : slot.waiting) out.tickets.push_back({slot.config.name, h});
  std::sort(out.tickets.begin(), out.tickets.end(),
            [](const saved_ticket& a, const saved_ticket& b) { return a.ticket.id < b.ticket.id; });
  st.saving->deliver(std::move(out));
}

caf::error down(const session_queue_slot& slot) {
  return make_error(errc::instance_down,
                    "queue '" + slot.config.name + "' is restarting after a crash");
}

}  // namespace

session_service_actor::behavior_type session_service(session_service_pointer self,
                                                     session_service_config config) {
  auto& st = self->state;
  st.config = std::move(config);
  st.epoch = self->clock().now();
  // Every config is tried once here, so that a queue that could never run
  // fails the service at its start instead of crashing again and again.
  for (const auto& q : st.config.queues)
    session::session_queue(q, st.config.latency, st.config.seed);
  if (st.config.default_queue)
    session::session_queue(*st.config.default_queue, st.config.latency, st.config.seed);
  session::lobby_registry(st.config.latency, st.config.lobbies, st.config.seed);
  for (const auto& q : st.config.queues) {
    if (q.shard_by.empty())
      add_slot(st, q);
    else
      st.sharded[q.name] = q;
  }
  place_restored(st);
  for (std::size_t i = 0; i < st.queues.size(); ++i) start_queue(self, i + 1);
  start_lobbies(self, std::move(st.config.restored_lobbies));
  st.config.restored_lobbies.clear();
  // A queue (or the lobbies) that exits while the service runs crashed: it
  // starts again.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    auto& s = self->state;
    if (s.lobbies && s.lobbies.address() == msg.source) {
      s.lobbies = nullptr;
      const bool long_run = self->clock().now() - s.lobbies_started >= s.config.backoff.reset_after;
      s.lobby_crashes_in_a_row = long_run ? 1 : s.lobby_crashes_in_a_row + 1;
      self->delayed_send(self, backoff_delay(s.config.backoff, s.lobby_crashes_in_a_row),
                         session_restart_atom::value, std::uint64_t{0});
      return;
    }
    for (std::size_t i = 0; i < s.queues.size(); ++i) {
      session_queue_slot& slot = s.queues[i];
      if (!slot.handle || slot.handle.address() != msg.source) continue;
      slot.handle = nullptr;
      if (s.saving) {  // stopped on purpose: it stays down
        finish_saving(self);
        return;
      }
      const bool long_run = self->clock().now() - slot.started >= s.config.backoff.reset_after;
      slot.crashes_in_a_row = long_run ? 1 : slot.crashes_in_a_row + 1;
      ++slot.restarts;
      self->delayed_send(self, backoff_delay(s.config.backoff, slot.crashes_in_a_row),
                         session_restart_atom::value, static_cast<std::uint64_t>(i + 1));
      return;
    }
    self->quit(msg.reason);  // not a queue: the service's own exit
  });
  // Only the queues stopped by a save are monitored.
  self->set_down_handler([self](caf::down_msg& down) {
    auto& s = self->state;
    for (auto& slot : s.queues)
      if (slot.handle && slot.handle.address() == down.source) slot.handle = nullptr;
    finish_saving(self);
  });
  return {
      [self](create_atom, const std::string& name, const session_ticket& t,
             const session_interfaces::owner& owner) -> caf::result<std::uint64_t> {
        auto& s = self->state;
        if (s.saving) return make_error(errc::instance_down, "the server is stopping");
        if (name.find('.') != std::string::npos)
          return make_error(
              errc::invalid_argument,
              "queue: '" + name.substr(0, 64) + "' names a shard; send the ticket to its queue");
        std::string target = name;
        if (const auto base = s.sharded.find(name); base != s.sharded.end()) {
          auto shard = shard_of(t, base->second);
          if (!shard) return std::move(shard.error());
          target = std::move(*shard);
        }
        std::size_t at = 0;
        if (const auto it = s.by_name.find(target); it != s.by_name.end()) {
          at = it->second;
        } else if (target == name && !s.config.default_queue) {
          return make_error(errc::invalid_argument, "queue: no queue '" + name.substr(0, 64) + "'");
        } else if (target == name && !session::valid_queue_name(name)) {
          return make_error(errc::invalid_argument,
                            "queue: a new queue's name is 1 to 64 of a-z, 0-9, _ and -");
        } else if (s.queues.size() >= s.config.max_queues) {
          return make_error(errc::invalid_argument, "queue: no queue '" + target +
                                                        "', and the server runs its maximum of " +
                                                        std::to_string(s.config.max_queues) +
                                                        " queues");
        } else if (auto c = config_for_new(s, target)) {
          at = add_queue(self, std::move(*c));
        } else {
          return make_error(errc::invalid_argument, "queue: no queue '" + name.substr(0, 64) + "'");
        }
        const session_queue_slot& slot = s.queues[at];
        if (!slot.handle) return down(slot);
        return self->delegate(slot.handle, create_atom::value, t, owner);
      },
      [self](cancel_atom, std::uint64_t id) -> caf::result<bool> {
        const session_queue_slot* slot = slot_of(self->state, id);
        if (!slot) return false;
        if (!slot->handle) return down(*slot);
        return self->delegate(slot->handle, cancel_atom::value, id);
      },
      [self](status_atom, std::uint64_t id) -> caf::result<ticket_outcome> {
        const session_queue_slot* slot = slot_of(self->state, id);
        if (!slot)
          return make_error(errc::invalid_argument, "ticket: no ticket " + std::to_string(id));
        if (!slot->handle) return down(*slot);
        return self->delegate(slot->handle, status_atom::value, id);
      },
      [self](info_atom) -> caf::result<std::vector<session_queue_report>> {
        auto& s = self->state;
        auto rp = self->make_response_promise<std::vector<session_queue_report>>();
        auto reports = std::make_shared<std::vector<session_queue_report>>(s.queues.size());
        auto left = std::make_shared<std::size_t>(0);
        // A queue that is down reports its name and the tickets it will restore.
        for (std::size_t i = 0; i < s.queues.size(); ++i) {
          (*reports)[i].queue = s.queues[i].config.name;
          (*reports)[i].waiting = s.queues[i].waiting.size();
          if (s.queues[i].handle) ++*left;
        }
        if (*left == 0) {
          rp.deliver(std::move(*reports));
          return rp;
        }
        for (std::size_t i = 0; i < s.queues.size(); ++i) {
          if (!s.queues[i].handle) continue;
          self->request(s.queues[i].handle, caf::infinite, info_atom::value)
              .then(
                  [=](session_queue_report& r) mutable {
                    (*reports)[i] = std::move(r);
                    if (--*left == 0) rp.deliver(std::move(*reports));
                  },
                  [=](caf::error&) mutable {
                    // It crashed meanwhile: its placeholder stays.
                    if (--*left == 0) rp.deliver(std::move(*reports));
                  });
        }
        return rp;
      },
      [self](inspect_atom, const std::string& name, std::uint32_t offset,
             std::uint32_t limit) -> caf::result<std::vector<waiting_ticket_view>> {
        auto& s = self->state;
        const auto it = s.by_name.find(name);
        if (it == s.by_name.end())
          return make_error(errc::invalid_argument, "queue: no queue '" + name.substr(0, 64) + "'");
        const session_queue_slot& slot = s.queues[it->second];
        if (!slot.handle) return down(slot);
        return self->delegate(slot.handle, inspect_atom::value, offset, limit);
      },
      [self](handover_atom, std::uint64_t number, handover_ticket& h) {
        auto& s = self->state;
        if (number == 0 || number > s.queues.size()) return;
        const std::uint64_t id = h.id;
        s.queues[number - 1].waiting[id] = std::move(h);
      },
      [self](handover_atom, std::uint64_t number, const std::vector<std::uint64_t>& left) {
        auto& s = self->state;
        if (number == 0 || number > s.queues.size()) return;
        for (std::uint64_t id : left) s.queues[number - 1].waiting.erase(id);
      },
      [self](lobby_atom, create_atom, const lobby_registration& l) {
        return to_lobbies<bool>(self, create_atom::value, l);
      },
      [self](lobby_atom, update_atom, const std::string& id, std::uint32_t players) {
        return to_lobbies<bool>(self, update_atom::value, id, players);
      },
      [self](lobby_atom, close_atom, const std::string& id) {
        return to_lobbies<bool>(self, close_atom::value, id);
      },
      [self](lobby_atom, find_atom, const lobby_query& q) {
        return to_lobbies<lobby_placement>(self, find_atom::value, q);
      },
      [self](lobby_atom, info_atom) { return to_lobbies<lobbies_report>(self, info_atom::value); },
      [self](lobby_atom, inspect_atom) {
        return to_lobbies<std::vector<lobby_registration>>(self, inspect_atom::value);
      },
      [self](session_save_atom) -> caf::result<saved_tickets> {
        auto& s = self->state;
        if (s.saving) return make_error(errc::invalid_argument, "the service is saving already");
        auto rp = self->make_response_promise<saved_tickets>();
        s.saving = rp;
        // A queue told to exit drops its link to the sender first, so its end
        // comes as a down message, after every handover it sent before.
        for (auto& slot : s.queues)
          if (slot.handle) {
            self->monitor(slot.handle);
            self->send_exit(slot.handle, caf::exit_reason::user_shutdown);
          }
        finish_saving(self);
        return rp;
      },
      [self](session_restart_atom, std::uint64_t number) {
        auto& s = self->state;
        if (s.saving) return;
        if (number == 0) {
          if (!s.lobbies) start_lobbies(self, {});
          return;
        }
        if (number == 0 || number > s.queues.size() || s.queues[number - 1].handle) return;
        start_queue(self, number);
      },
  };
}

}  // namespace mm::actors
