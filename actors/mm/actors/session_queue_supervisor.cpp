#include "mm/actors/session_queue_supervisor.hpp"

#include "mm/actors/errors.hpp"
#include "mm/engine/log.hpp"

namespace mm::actors {

namespace {

void start(session_queue_supervisor_pointer self, std::vector<durable_ticket> restored,
           std::vector<backfill_state> backfills) {
  auto& st = self->state;
  session_queue_actor_config c = st.config.queue;
  c.restored = std::move(restored);
  c.restored_backfills = std::move(backfills);
  c.seed = st.base_seed + 1'000'003ull * st.restarts;
  c.parent = caf::actor_cast<caf::actor>(self);
  st.queue = self->spawn(session_queue_actor, std::move(c));
  self->monitor(st.queue);
  st.started = self->clock().now();
}

caf::error down(const session_queue_supervisor_state& st) {
  return make_error(errc::instance_down,
                    "queue '" + st.config.queue.queue.name + "' is restarting after a crash");
}

// Passes a request on to the queue, or answers instance_down while it restarts.
template <class Reply, class... Ts>
caf::result<Reply> to_queue(session_queue_supervisor_pointer self, Ts&&... xs) {
  if (!self->state.queue) return down(self->state);
  return self->delegate(self->state.queue, std::forward<Ts>(xs)...);
}

void reload_failed(session_queue_supervisor_pointer self, const caf::error& e) {
  auto& sup = self->state;
  log(log_level::error, "sessions",
      "session queue '" + sup.config.queue.queue.name +
          "' cannot read its tickets back: " + to_string(e));
  sup.crashes_in_a_row += 1;
  self->delayed_send(self, backoff_delay(sup.config.backoff, sup.crashes_in_a_row),
                     sup_restart_atom::value);
}

}  // namespace

session_queue_supervisor_actor::behavior_type session_queue_supervisor(
    session_queue_supervisor_pointer self, session_queue_supervisor_config config) {
  auto& st = self->state;
  st.config = std::move(config);
  st.base_seed = st.config.queue.seed;
  auto first = std::move(st.config.queue.restored);
  auto first_backfills = std::move(st.config.queue.restored_backfills);
  st.config.queue.restored.clear();
  st.config.queue.restored_backfills.clear();
  start(self, std::move(first), std::move(first_backfills));
  self->set_down_handler([self](caf::down_msg& msg) {
    auto& s = self->state;
    if (!s.queue || msg.source != s.queue.address()) return;
    s.queue = nullptr;
    if (s.stopping) {
      s.stopping->deliver(true);
      s.stopping.reset();
      return;
    }
    const bool long_run = self->clock().now() - s.started >= s.config.backoff.reset_after;
    s.crashes_in_a_row = long_run ? 1 : s.crashes_in_a_row + 1;
    ++s.restarts;
    log(log_level::warning, "sessions",
        "session queue '" + s.config.queue.queue.name + "' ended (" + to_string(msg.reason) +
            "); it starts again from the store");
    self->delayed_send(self, backoff_delay(s.config.backoff, s.crashes_in_a_row),
                       sup_restart_atom::value);
  });
  return {
      [self](create_atom, queued_ticket& q) {
        return to_queue<std::uint64_t>(self, create_atom::value, std::move(q));
      },
      [self](check_atom, queued_ticket& q) {
        return to_queue<bool>(self, check_atom::value, std::move(q));
      },
      [self](cancel_atom, std::uint64_t id) {
        return to_queue<bool>(self, cancel_atom::value, id);
      },
      [self](withdraw_atom, std::uint64_t id) {
        // While down, the store no longer holds it as waiting once its
        // outcome is written, and its claim keeps it from any other outcome.
        if (self->state.queue) self->send(self->state.queue, withdraw_atom::value, id);
      },
      [self](restore_atom) {
        // While down, its start reads every waiting ticket back anyway.
        if (self->state.queue) self->send(self->state.queue, restore_atom::value);
      },
      [self](info_atom) { return to_queue<session_queue_report>(self, info_atom::value); },
      [self](inspect_atom, std::uint32_t offset, std::uint32_t limit) {
        return to_queue<std::vector<waiting_ticket_view>>(self, inspect_atom::value, offset, limit);
      },
      [self](backfill_atom b, create_atom a, backfill_registration& r) {
        return to_queue<backfill_state>(self, b, a, std::move(r));
      },
      [self](backfill_atom b, update_atom a, backfill_registration& r) {
        return to_queue<backfill_state>(self, b, a, std::move(r));
      },
      [self](backfill_atom b, close_atom a, std::string& id) {
        return to_queue<bool>(self, b, a, std::move(id));
      },
      [self](backfill_atom b, confirm_atom a, seat_change& c) {
        return to_queue<backfill_state>(self, b, a, std::move(c));
      },
      [self](backfill_atom b, release_atom a, seat_change& c) {
        return to_queue<backfill_state>(self, b, a, std::move(c));
      },
      [self](backfill_atom b, inspect_atom a) {
        return to_queue<std::vector<backfill_state>>(self, b, a);
      },
      [self](backfill_atom b, status_atom a, std::string& id) {
        return to_queue<backfill_state>(self, b, a, std::move(id));
      },
      [self](explain_atom a, std::uint64_t id, std::uint32_t limit) {
        return to_queue<session::explanation>(self, a, id, limit);
      },
      [self](backfill_atom b, explain_atom a, std::string& id, std::uint32_t limit) {
        return to_queue<session::explanation>(self, b, a, std::move(id), limit);
      },
      [self](sup_restart_atom) {
        auto& s = self->state;
        if (s.queue || s.stopping) return;
        // Its tickets, then its running matches: both after every record
        // sent before (the journal writes what it holds first).
        const auto& journal = s.config.queue.journal;
        const std::string name = s.config.queue.queue.name;
        self->request(journal, caf::infinite, journal_atom::value, reload_atom::value, name)
            .then(
                [self, journal, name](std::vector<durable_ticket>& tickets) {
                  self->request(journal, caf::infinite, journal_atom::value, reload_atom::value,
                                backfill_atom::value, name)
                      .then(
                          [self, tickets = std::move(tickets)](
                              std::vector<backfill_state>& backfills) mutable {
                            if (!self->state.queue && !self->state.stopping)
                              start(self, std::move(tickets), std::move(backfills));
                          },
                          [self](caf::error& e) { reload_failed(self, e); });
                },
                [self](caf::error& e) { reload_failed(self, e); });
      },
      [self](configure_atom a, session::queue_config& next) -> caf::result<bool> {
        auto& s = self->state;
        s.config.queue.queue = next;  // what a restart after a crash starts with
        if (!s.queue) return true;
        return self->delegate(s.queue, a, std::move(next));
      },
      [self](lost_atom) {
        if (self->state.queue) self->send_exit(self->state.queue, caf::exit_reason::kill);
      },
      [self](stop_atom) -> caf::result<bool> {
        auto& s = self->state;
        if (!s.queue) {
          s.stopping.emplace();  // a restart due no longer happens
          return true;
        }
        auto rp = self->make_response_promise<bool>();
        s.stopping = rp;
        self->send_exit(s.queue, caf::exit_reason::user_shutdown);
        return rp;
      },
  };
}

}  // namespace mm::actors
