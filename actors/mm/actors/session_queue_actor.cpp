#include "mm/actors/session_queue_actor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "mm/actors/errors.hpp"
#include "mm/actors/session_queue_backfills.hpp"
#include "mm/engine/error.hpp"
#include "mm/engine/log.hpp"

namespace mm::actors {

namespace {

// A lost match's ticket that cannot wait again yet is tried this often, this
// many times at most (restore_missing): about the event stream's period.
constexpr auto restore_retry_after = std::chrono::milliseconds(100);
constexpr std::uint32_t max_restore_retries = 50;

session::time_ms now_of(session_queue_pointer self) {
  return std::chrono::duration_cast<session::time_ms>(self->clock().now() - self->state.epoch);
}

// The match as its players' owners are told it; its teams and tickets moved
// out of the engine's.
session_match to_message(session_queue_pointer self, session::formed_match& m) {
  const auto& st = self->state;
  session_match out;
  out.id = st.config.ids ? st.config.ids->next() : m.id;
  out.queue = st.config.queue.name;
  const auto& dcs = st.queue->latency().datacenters();
  if (m.datacenter < dcs.size()) out.datacenter = dcs[m.datacenter].name;
  out.teams = std::move(m.teams);
  out.tickets = std::move(m.tickets);
  out.mmr_spread = m.mmr_spread;
  // Unknown (no RTT measured or estimated for a player): -1, so that every
  // double of a message is finite (CAF's wire format cannot carry infinity).
  out.worst_rtt_ms = std::isfinite(m.worst_rtt_ms) ? m.worst_rtt_ms : -1;
  out.bot_match = m.bot_match;
  out.formed_at_ms = m.formed_at.count();
  return out;
}

// The report's figures of a match.
void measure(session_queue_state& st, const session::formed_match& m) {
  for (const auto& team : m.teams) st.players_matched += team.size();
  st.mmr_spread.add(m.mmr_spread);
  if (m.datacenter < st.queue->latency().datacenters().size() && std::isfinite(m.worst_rtt_ms))
    st.worst_rtt_ms.add(m.worst_rtt_ms);
  for (const session::time_ms created : m.created)
    st.wait_seconds.add(static_cast<double>((m.formed_at - created).count()) / 1000.0);
}

// A few waiting tickets drawn at random, explained and counted by their
// main reason, when wait_reasons_every has passed since the last draw. Each
// costs a pass over the waiting tickets (about 1 ms at 100,000): a draw of
// 8 every 5 s is about 0.2% of the queue's time.
void sample_wait_reasons(session_queue_pointer self, session::time_ms now) {
  auto& st = self->state;
  const auto every = st.config.wait_reasons_every;
  if (every.count() <= 0 || (st.last_wait_sample && now - *st.last_wait_sample < every)) return;
  st.last_wait_sample = now;
  const auto& waiting = st.queue->tickets();
  if (waiting.empty()) return;
  session::explain_options o;
  o.limit = 200;
  o.max_listed = 0;
  for (std::uint32_t i = 0; i < st.config.wait_reasons_sample; ++i) {
    st.sample_state = st.sample_state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto& t = waiting[(st.sample_state >> 33) % waiting.size()];
    if (const auto e = st.queue->explain(t.id, now, o)) ++st.wait_reasons[session::wait_reason(*e)];
  }
}

// One round of the loop: what left goes to the journal, which tells the
// service once it is written.
void run_tick(session_queue_pointer self) {
  auto& st = self->state;
  // Wall time, not the actor clock's: what the tick costs the worker.
  const auto start = std::chrono::steady_clock::now();
  const session::time_ms now = now_of(self);
  session::tick_result r = st.queue->tick(now);
  st.last_tick_at = now;
  // Each match once: the journal makes the outcome of each of its tickets.
  tick_outcomes out;
  out.queue = st.config.queue.name;
  out.matches.reserve(r.matches.size());
  for (auto& m : r.matches) {
    measure(st, m);  // before its teams move into the message
    out.matches.push_back(to_message(self, m));
  }
  out.expired = std::move(r.expired);
  out.failed = std::move(r.failed);
  backfill_tick(self, r, out);
  if (!out.matches.empty() || !out.expired.empty() || !out.failed.empty() || !out.backfills.empty())
    self->send(st.config.journal, journal_atom::value, finish_atom::value, std::move(out));
  st.last_tick_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  st.tick_ms.add(st.last_tick_ms);
  if (st.config.recorder)
    st.config.recorder->ticked(st.config.queue.name, st.config.unix_epoch_ms + now.count());
  sample_wait_reasons(self, now_of(self));  // after the tick's timing: not part of it
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
    v.ticket = t.id;
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

session_queue_report report_of(session_queue_pointer self) {
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
  r.tick_ms = s.tick_ms;
  r.last_tick_ms = s.last_tick_ms;
  const auto& book = s.queue->backfills();
  r.backfills = book.size();
  for (const auto& [id, m] : book.matches()) r.open_seats += book.open(m);
  r.backfilled = q.backfilled;
  r.placements = q.placements;
  r.reservations_confirmed = q.reservations_confirmed;
  r.reservations_released = q.reservations_released;
  r.reservations_expired = q.reservations_expired;
  const auto now = now_of(self);
  for (const auto& t : s.queue->tickets()) {
    const auto stage = s.config.queue.latency
                           ? session::stage_after(*s.config.queue.latency, now - t.created)
                           : session::latency_stage::ideal;
    r.waiting_ideal += stage == session::latency_stage::ideal ? 1 : 0;
    r.waiting_expand += stage == session::latency_stage::expand ? 1 : 0;
    r.waiting_warm_body += stage == session::latency_stage::warm_body ? 1 : 0;
  }
  for (const auto& [reason, n] : s.wait_reasons) {
    r.wait_reasons.push_back(reason);
    r.wait_reason_counts.push_back(n);
  }
  return r;
}

// The engine's hooks: multi-queue tickets claimed, reservations' ids.
void hook_engine(session_queue_pointer self) {
  auto& st = self->state;
  if (st.config.claims)
    st.queue->set_claim_hook([claims = st.config.claims](std::span<const session::ticket_id> ids) {
      return claims->try_claim(ids);
    });
  if (st.config.ids)  // reservations get public ids, as matches do
    st.queue->set_reservation_ids([ids = st.config.ids] { return ids->next(); });
}

// The tickets of the store wait again, with their ids and times; one that no
// longer fits the config fails (and its owner is told).
void take_back(session_queue_pointer self) {
  auto& st = self->state;
  std::vector<ticket_outcome> failed;
  for (const auto& t : st.config.restored) {
    try {
      st.queue->restore(to_queue_request(t), session::time_ms(t.created_ms), t.id);
    } catch (const mm::error& e) {
      log(log_level::warning, "sessions",
          "session queue '" + st.config.queue.name + "': a stored ticket " +
              "no longer fits its queue and fails: " + e.what());
      if (t.queues.front() == st.config.queue.name)
        failed.push_back(outcome_in(st.config.queue.name, t.id, session::ticket_state::failed));
    }
  }
  st.config.restored.clear();
  if (!failed.empty())
    self->send(st.config.journal, journal_atom::value, finish_atom::value, std::move(failed));
}

// A new engine of config `next`, holding `tickets` and `backfills` (what the
// journal holds of this queue); the tickets keep their ids and times.
void rebuild(session_queue_pointer self, session::queue_config next,
             std::vector<durable_ticket> tickets, std::vector<backfill_state> backfills) {
  auto& st = self->state;
  st.queue = std::make_unique<session::session_queue>(next, st.config.latency, st.config.seed);
  st.config.queue = std::move(next);
  st.registrations.clear();
  st.wait_reasons.clear();  // their labels name the old config's rules
  hook_engine(self);
  st.config.restored = std::move(tickets);
  st.config.restored_backfills = std::move(backfills);
  take_back(self);
  take_back_backfills(self);
  log(log_level::info, "sessions",
      "session queue '" + st.config.queue.name + "' took its new config: " +
          std::to_string(st.queue->waiting()) + " waiting tickets carried over");
}

// Reads this queue's tickets and running matches back from the journal and
// rebuilds (session_reconfigure.hpp). `await`: no other message is handled
// until both answers are in, so nothing sent to the queue meanwhile reaches
// the old engine or misses the new one.
caf::result<bool> reconfigure(session_queue_pointer self, session::queue_config next) {
  try {
    session::validate(next, "sessions.queues." + next.name + ".");
  } catch (const mm::error& e) {
    return make_error(e.code(), e.what());
  }
  auto rp = self->make_response_promise<bool>();
  const auto journal = self->state.config.journal;
  const std::string name = self->state.config.queue.name;
  self->request(journal, caf::infinite, journal_atom::value, reload_atom::value, name)
      .await(
          [self, rp, journal, name, next](std::vector<durable_ticket>& tickets) mutable {
            self->request(journal, caf::infinite, journal_atom::value, reload_atom::value,
                          backfill_atom::value, name)
                .await(
                    [self, rp, next,
                     tickets = std::move(tickets)](std::vector<backfill_state>& backfills) mutable {
                      rebuild(self, std::move(next), std::move(tickets), std::move(backfills));
                      rp.deliver(true);
                    },
                    [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
          },
          [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

// Takes the ticket into the queue; the error naming the field when it refuses.
std::optional<caf::error> add_ticket(session_queue_pointer self, const durable_ticket& t) {
  auto& s = self->state;
  try {
    s.queue->add(to_queue_request(t), session::time_ms(t.created_ms), t.id);
  } catch (const mm::error& e) {
    return make_error(e.code(), e.what());
  }
  // Created before a tick that ran without it: a replay must add it after
  // that tick, not at its creation.
  if (s.config.recorder && s.last_tick_at && session::time_ms(t.created_ms) <= *s.last_tick_at)
    s.config.recorder->joined_late(s.config.queue.name, t.id,
                                   s.config.unix_epoch_ms + s.last_tick_at->count());
  return std::nullopt;
}

// The journal's waiting tickets of this queue that the engine lacks wait
// again (restore_atom). `await`: no tick runs between the journal's answer
// and the restore, and every outcome this queue sent before is written by
// then (the journal writes all it holds before it reads), so a ticket the
// engine lacks and the store holds waiting left in no committed outcome.
void restore_missing(session_queue_pointer self) {
  auto& st = self->state;
  self->request(st.config.journal, caf::infinite, journal_atom::value, reload_atom::value,
                st.config.queue.name)
      .await(
          [self](std::vector<durable_ticket>& tickets) {
            auto& s = self->state;
            std::size_t back = 0;
            std::string refused;  // the last refusal's reason
            for (const auto& t : tickets) {
              if (s.queue->find(t.id) != nullptr) continue;
              try {
                s.queue->restore(to_queue_request(t), session::time_ms(t.created_ms), t.id);
                ++back;
              } catch (const mm::error& e) {
                refused = e.what();
              }
            }
            // Most often a player's earlier ticket still here, finished by
            // another partition whose outcome the stream has not told yet
            // (its withdraw follows within the stream's period): tried
            // again, a bounded number of times.
            if (!refused.empty() && s.restore_retries++ < max_restore_retries) {
              self->delayed_send(self, restore_retry_after, restore_atom::value);
            } else {
              if (!refused.empty())
                log(log_level::warning, "sessions",
                    "session queue '" + s.config.queue.name + "': a ticket of a lost match " +
                        "cannot wait again: " + refused);
              s.restore_retries = 0;
            }
            if (back > 0)
              log(log_level::info, "sessions",
                  "session queue '" + s.config.queue.name + "': " + std::to_string(back) +
                      " tickets of matches that lost a ticket to another partition wait again");
          },
          [self](caf::error& e) {
            // The queue starts again from the store (what its supervisor does).
            log(log_level::error, "sessions",
                "session queue '" + self->state.config.queue.name +
                    "': its lost match's tickets could not be read back: " + to_string(e));
            self->quit(e);
          });
}

// With shared claims (session_queue_actor_config::admit_after_write):
// checked, written (its players claimed), then taken. A ticket the queue
// refuses after its row was written (it filled up meanwhile) leaves at once
// as failed, through the journal like any outcome.
caf::result<std::uint64_t> admit_after_write(session_queue_pointer self, queued_ticket q) {
  auto& s = self->state;
  try {
    s.queue->check(to_queue_request(q.ticket), session::time_ms(q.ticket.created_ms));
  } catch (const mm::error& e) {
    return make_error(e.code(), e.what());
  }
  auto rp = self->make_response_promise<std::uint64_t>();
  self->request(s.config.journal, caf::infinite, journal_atom::value, create_atom::value, q.ticket)
      .then(
          [self, rp, t = q.ticket](std::uint64_t id) mutable {
            auto& st = self->state;
            // Taken back from the store meanwhile (restore_missing, after a
            // lost match): it waits here already, as written.
            if (st.queue->find(t.id) != nullptr) {
              rp.deliver(id);
              return;
            }
            if (auto refused = add_ticket(self, t)) {
              std::vector<ticket_outcome> failed{
                  outcome_in(st.config.queue.name, t.id, session::ticket_state::failed)};
              self->send(st.config.journal, journal_atom::value, finish_atom::value,
                         std::move(failed));
              rp.deliver(std::move(*refused));
              return;
            }
            rp.deliver(id);
          },
          [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

}  // namespace

session::ticket_request to_queue_request(const durable_ticket& t) {
  session::ticket_request r = to_request(t.ticket);
  r.replace_existing = false;  // the service replaced what there was to replace
  r.shared = t.queues.size() > 1;
  r.new_matches_only = t.contested;
  return r;
}

session_queue_actor_type::behavior_type session_queue_actor(session_queue_pointer self,
                                                            session_queue_actor_config config) {
  auto& st = self->state;
  st.queue = std::make_unique<session::session_queue>(config.queue, config.latency, config.seed);
  st.config = std::move(config);
  st.epoch = st.config.epoch.value_or(self->clock().now());
  st.sample_state = st.config.seed;
  hook_engine(self);
  take_back(self);
  take_back_backfills(self);
  if (st.config.recorder)
    st.config.recorder->queue_started(st.config.queue.name, st.config.seed,
                                      st.config.unix_epoch_ms + now_of(self).count());
  if (st.config.parent) {
    self->monitor(st.config.parent);
    self->set_down_handler([self](caf::down_msg& down) {
      if (down.source == self->state.config.parent.address()) self->quit(down.reason);
    });
  }
  self->delayed_send(self, st.config.queue.tick, session_tick_atom::value);
  return {
      [self](create_atom, queued_ticket& q) -> caf::result<std::uint64_t> {
        auto& s = self->state;
        if (q.journal && s.config.admit_after_write) return admit_after_write(self, std::move(q));
        // Another of its queues' tickets, waiting here already: a guest of
        // another partition this queue took back from the store after a
        // lost match before its service took it in (restore_missing).
        if (!q.journal && s.queue->find(q.ticket.id) != nullptr) return q.ticket.id;
        if (auto refused = add_ticket(self, q.ticket)) return std::move(*refused);
        if (!q.journal) return q.ticket.id;
        return self->delegate(s.config.journal, journal_atom::value, create_atom::value,
                              std::move(q.ticket));
      },
      [self](check_atom, const queued_ticket& q) -> caf::result<bool> {
        try {
          self->state.queue->check(to_queue_request(q.ticket),
                                   session::time_ms(q.ticket.created_ms));
        } catch (const mm::error& e) {
          return make_error(e.code(), e.what());
        }
        return true;
      },
      [self](cancel_atom, std::uint64_t id) -> caf::result<bool> {
        auto& s = self->state;
        const auto* t = s.queue->find(id);
        if (t == nullptr) return false;
        if (t->shared && s.config.claims) {
          const session::ticket_id one[] = {id};
          if (!s.config.claims->try_claim(one).empty()) {
            s.queue->withdraw(id);  // another queue's outcome
            return false;
          }
        }
        s.queue->cancel(id);
        if (s.config.recorder) {
          // After a tick of the same millisecond: recorded 1 ms later, so
          // that the replay lets it go after that tick and before the next
          // (ticks are whole ms apart, at least 1).
          session::time_ms at = now_of(self);
          if (s.last_tick_at && at <= *s.last_tick_at) at = *s.last_tick_at + session::time_ms(1);
          s.config.recorder->cancelled(s.config.queue.name, id,
                                       s.config.unix_epoch_ms + at.count());
        }
        return self->delegate(
            s.config.journal, journal_atom::value, cancel_atom::value,
            outcome_in(s.config.queue.name, id, session::ticket_state::cancelled));
      },
      [self](withdraw_atom, std::uint64_t id) { self->state.queue->withdraw(id); },
      [self](restore_atom) { restore_missing(self); },
      [self](info_atom) { return report_of(self); },
      [self](inspect_atom, std::uint32_t offset, std::uint32_t limit) {
        return waiting_page(self, offset, limit);
      },
      [self](backfill_atom, create_atom, backfill_registration& r) {
        return backfill_register(self, r, false);
      },
      [self](backfill_atom, update_atom, backfill_registration& r) {
        return backfill_register(self, r, true);
      },
      [self](backfill_atom, close_atom, const std::string& id) { return backfill_stop(self, id); },
      [self](backfill_atom, confirm_atom, const seat_change& c) {
        return backfill_seats(self, c, true);
      },
      [self](backfill_atom, release_atom, const seat_change& c) {
        return backfill_seats(self, c, false);
      },
      [self](backfill_atom, inspect_atom) { return backfill_list(self); },
      [self](backfill_atom, status_atom, const std::string& id) { return backfill_one(self, id); },
      [self](explain_atom, std::uint64_t id,
             std::uint32_t limit) -> caf::result<session::explanation> {
        session::explain_options o;
        o.limit = std::min(limit, max_explain_candidates);
        if (auto e = self->state.queue->explain(id, now_of(self), o)) return std::move(*e);
        return make_error(errc::not_found,
                          "ticket: not waiting in queue '" + self->state.config.queue.name + "'");
      },
      [self](backfill_atom, explain_atom, const std::string& id,
             std::uint32_t limit) -> caf::result<session::explanation> {
        session::explain_options o;
        o.limit = std::min(limit, max_explain_candidates);
        if (auto e = self->state.queue->explain_backfill(id, now_of(self), o)) return std::move(*e);
        return make_error(errc::not_found, "match_id: no running match '" + id + "'");
      },
      [self](configure_atom, session::queue_config& next) {
        return reconfigure(self, std::move(next));
      },
      [self](session_tick_atom) {
        run_tick(self);
        self->delayed_send(self, self->state.config.queue.tick, session_tick_atom::value);
      },
  };
}

}  // namespace mm::actors
