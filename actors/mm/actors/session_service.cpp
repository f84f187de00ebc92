#include "mm/actors/session_service.hpp"

#include <algorithm>

#include "mm/actors/errors.hpp"
#include "mm/actors/session_service_backfills.hpp"
#include "mm/actors/session_service_explain.hpp"
#include "mm/engine/log.hpp"
#include "mm/session/public_id.hpp"

namespace mm::actors {

namespace {

using session::format_public_id;

std::int64_t now_ms(session_service_pointer self) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(self->clock().now() -
                                                               self->state.epoch)
      .count();
}

}  // namespace

std::int64_t unix_now(session_service_pointer self) {
  return self->state.config.unix_epoch_ms + now_ms(self);
}

void start_slot(session_service_pointer self, std::size_t slot,
                std::vector<durable_ticket> restored, std::vector<backfill_state> backfills) {
  auto& st = self->state;
  session_queue_supervisor_config c;
  c.queue.queue = st.registry->config(slot);
  c.queue.latency = st.config.latency;
  c.queue.seed = st.config.seed + slot + 1;
  c.queue.epoch = st.epoch;
  c.queue.journal = st.journal;
  c.queue.claims = st.claims;
  c.queue.admit_after_write = st.config.shared_claims && st.config.store;
  c.queue.ids = st.config.ids;
  c.queue.restored = std::move(restored);
  c.queue.restored_backfills = std::move(backfills);
  c.queue.wait_reasons_every = st.config.wait_reasons_every;
  if (st.config.recorder && st.config.recorder->records(c.queue.queue.name)) {
    c.queue.recorder = st.config.recorder;
    c.queue.unix_epoch_ms = st.config.unix_epoch_ms;
  }
  c.backoff = st.config.backoff;
  st.book->name_queue(static_cast<std::uint32_t>(slot), c.queue.queue.name);
  if (st.slots.size() <= slot) st.slots.resize(slot + 1);
  st.slots[slot] = self->spawn<caf::linked>(session_queue_supervisor, std::move(c));
}

namespace {

void unwatch(session_service_pointer self, const session_interfaces::owner& owner);

}  // namespace

void ticket_left(session_service_pointer self, ticket_outcome& ev) {
  auto& st = self->state;
  auto e = st.book->remove(ev.ticket);
  if (!e && st.book->finished(ev.ticket) != nullptr) return;  // told already
  if (e) {
    ev.credential = st.book->credential(e->credential);
    for (const std::uint32_t slot : e->slots)
      if (st.registry->config(slot).name != ev.queue)
        self->send(st.slots[slot], withdraw_atom::value, ev.ticket);
    if (e->owner) {
      self->send(e->owner, ticket_atom::value, ev);
      unwatch(self, e->owner);
    }
  }
  for (const std::uint64_t gone : st.book->keep(ev, unix_now(self))) st.claims->release(gone);
}

namespace {

void watch(session_service_pointer self, const session_interfaces::owner& owner) {
  if (owner && self->state.owners[owner.address()]++ == 0) self->monitor(owner);
}

void unwatch(session_service_pointer self, const session_interfaces::owner& owner) {
  if (!owner) return;
  auto& owners = self->state.owners;
  const auto it = owners.find(owner.address());
  if (it == owners.end() || --it->second > 0) return;
  self->demonitor(owner.address());
  owners.erase(it);
}

// The ticket leaves the books without an outcome (its create failed).
void forget(session_service_pointer self, std::uint64_t id) {
  if (auto e = self->state.book->remove(id)) unwatch(self, e->owner);
}

caf::error no_ticket(std::uint64_t id) {
  return make_error(errc::not_found, "ticket: no ticket " + format_public_id(id));
}

// Cancels a waiting ticket in every queue it waits in; `done` gets true when
// one of them cancelled it (durably), false when none held it, or the error
// of a queue that could not answer.
void cancel_everywhere(session_service_pointer self, std::uint64_t id,
                       std::function<void(caf::expected<bool>)> done) {
  const ticket_book::entry* e = self->state.book->find(id);
  if (e == nullptr) {
    done(false);
    return;
  }
  struct tally {
    std::size_t left = 0;
    bool cancelled = false;
    caf::error err;
  };
  auto t = std::make_shared<tally>();
  t->left = e->slots.size();
  auto finish = [t, done] {
    if (--t->left > 0) return;
    if (t->cancelled || !t->err)
      done(t->cancelled);
    else
      done(t->err);
  };
  for (const std::uint32_t slot : e->slots)
    self->request(self->state.slots[slot], caf::infinite, cancel_atom::value, id)
        .then(
            [t, finish](bool b) {
              t->cancelled = t->cancelled || b;
              finish();
            },
            [t, finish](caf::error& err) {
              t->err = std::move(err);
              finish();
            });
}

caf::result<bool> cancel_checked(session_service_pointer self, std::uint64_t id,
                                 const std::string* credential) {
  auto& st = self->state;
  const ticket_book::entry* e = st.book->find(id);
  if (e == nullptr) {
    const ticket_outcome* f = st.book->finished(id);
    if (f != nullptr && (credential == nullptr || f->credential == *credential)) return false;
    return no_ticket(id);
  }
  if (credential != nullptr && st.book->credential(e->credential) != *credential)
    return no_ticket(id);
  if (e->pending) return false;
  auto rp = self->make_response_promise<bool>();
  cancel_everywhere(self, id, [rp](caf::expected<bool> x) mutable {
    if (x)
      rp.deliver(*x);
    else
      rp.deliver(x.error());
  });
  return rp;
}

// The other queues of a multi-queue ticket take it in (after its first queue
// wrote it); the answer once all did. One that refuses it cancels the ticket.
void join_others(session_service_pointer self, const durable_ticket& d,
                 caf::typed_response_promise<std::uint64_t> rp) {
  auto& st = self->state;
  const ticket_book::entry* entry = st.book->find(d.id);
  if (entry == nullptr) {
    // It left already through its first queue (matched, or cancelled) in
    // the moment since that queue wrote it: its creation is durable, and its
    // outcome is told as any other.
    rp.deliver(d.id);
    return;
  }
  const std::vector<std::uint32_t> slots = entry->slots;
  auto left = std::make_shared<std::size_t>(slots.size() - 1);
  auto failure = std::make_shared<caf::error>();
  for (std::size_t i = 1; i < slots.size(); ++i) {
    const std::uint32_t slot = slots[i];
    auto answered = [self, id = d.id, slot, left, failure, rp](caf::error err) mutable {
      auto& s = self->state;
      if (err && !*failure) *failure = std::move(err);
      if (!err && s.book->find(id) == nullptr)  // left through another queue meanwhile
        self->send(s.slots[slot], withdraw_atom::value, id);
      if (--*left > 0) return;
      if (!*failure) {
        if (auto* e = s.book->find(id)) e->pending = false;
        rp.deliver(id);
        return;
      }
      if (auto* e = s.book->find(id)) e->pending = false;
      cancel_everywhere(self, id,
                        [rp, failure](caf::expected<bool>) mutable { rp.deliver(*failure); });
    };
    self->request(st.slots[slot], caf::infinite, create_atom::value, queued_ticket{d, false})
        .then([answered](std::uint64_t) mutable { answered(caf::error{}); },
              [answered](caf::error& e) mutable { answered(std::move(e)); });
  }
}

// The ticket's first queue takes it and writes it to the journal; then its
// other queues, if any.
void submit(session_service_pointer self, durable_ticket d,
            caf::typed_response_promise<std::uint64_t> rp) {
  auto& st = self->state;
  const std::uint32_t first = st.book->find(d.id)->slots.front();
  const std::uint64_t id = d.id;
  const bool more = st.book->find(d.id)->slots.size() > 1;  // its other queues here
  self->request(st.slots[first], caf::infinite, create_atom::value, queued_ticket{d, true})
      .then(
          [self, id, more, d, rp](std::uint64_t) mutable {
            if (const auto& r = self->state.config.recorder)
              r->created(d, self->state.config.unix_epoch_ms + d.created_ms);
            if (more) {
              join_others(self, d, rp);
              return;
            }
            if (auto* e = self->state.book->find(id)) e->pending = false;
            rp.deliver(id);
          },
          [self, id, rp](caf::error& err) mutable {
            forget(self, id);
            rp.deliver(std::move(err));
          });
}

// The players' older tickets (the caller's own) are cancelled first; one
// that could not be (it is being matched, or its queue is down) fails the new one.
void cancel_then_submit(session_service_pointer self, std::vector<std::uint64_t> olds,
                        durable_ticket d, caf::typed_response_promise<std::uint64_t> rp) {
  auto left = std::make_shared<std::size_t>(olds.size());
  for (const std::uint64_t old : olds)
    cancel_everywhere(self, old, [self, old, olds, d, rp, left](caf::expected<bool>) mutable {
      if (--*left > 0) return;
      auto& st = self->state;
      for (const std::uint64_t o : olds)
        if (st.book->find(o) != nullptr) {
          forget(self, d.id);
          st.book->give_back(olds);
          rp.deliver(make_error(errc::conflict, "replace_existing: ticket " + format_public_id(o) +
                                                    " could not be cancelled: it is being "
                                                    "matched, or its queue is restarting"));
          return;
        }
      submit(self, std::move(d), rp);
      (void)old;
    });
}

// With replace_existing: every queue of the new ticket checks it first, so
// a request that a queue refuses (a bad field) has cancelled nothing; then
// the older tickets go, then the new one is written.
void replace_then_submit(session_service_pointer self, std::vector<std::uint64_t> olds,
                         durable_ticket d, caf::typed_response_promise<std::uint64_t> rp) {
  const std::vector<std::uint32_t> slots = self->state.book->find(d.id)->slots;
  auto left = std::make_shared<std::size_t>(slots.size());
  auto failure = std::make_shared<caf::error>();
  auto checked = [self, olds, d, rp, left, failure](caf::error err) mutable {
    if (err && !*failure) *failure = std::move(err);
    if (--*left > 0) return;
    if (*failure) {
      forget(self, d.id);
      self->state.book->give_back(olds);
      rp.deliver(*failure);
      return;
    }
    cancel_then_submit(self, std::move(olds), std::move(d), rp);
  };
  for (const std::uint32_t slot : slots)
    self->request(self->state.slots[slot], caf::infinite, check_atom::value,
                  queued_ticket{d, false})
        .then([checked](bool) mutable { checked(caf::error{}); },
              [checked](caf::error& e) mutable { checked(std::move(e)); });
}

caf::result<std::uint64_t> create(session_service_pointer self, const std::string& name,
                                  session_ticket& t, const session_interfaces::owner& owner) {
  auto& st = self->state;
  if (st.saving) return make_error(errc::instance_down, "the server is stopping");
  if (t.also_queues.size() + 1 > st.config.max_queues_per_ticket)
    return make_error(
        errc::invalid_argument,
        "queues: at most " + std::to_string(st.config.max_queues_per_ticket) + " queues a ticket");
  ticket_book::entry e;
  std::vector<std::string> names;
  const bool listed = t.queues_listed || !t.also_queues.empty();
  for (std::size_t i = 0; i <= t.also_queues.size(); ++i) {
    const std::string& q = i == 0 ? name : t.also_queues[i - 1];
    const std::string field = listed ? "queues[" + std::to_string(i) + "]" : "queue";
    if (i > 0 && !st.registry->holds(q)) {
      // Another partition's queue: the ticket waits there as a guest
      // (session_service_guests.cpp).
      if (auto refused = st.registry->check_elsewhere(q, field)) return std::move(*refused);
      if (std::find(names.begin(), names.end(), q) != names.end())
        return make_error(errc::invalid_argument,
                          field + ": the ticket is for '" + q + "' already");
      names.push_back(q);
      continue;
    }
    bool made = false;
    auto at = st.registry->place(q, t, field, made);
    if (!at) return std::move(at.error());
    if (made) start_slot(self, *at, {}, {});
    const auto slot = static_cast<std::uint32_t>(*at);
    if (std::find(e.slots.begin(), e.slots.end(), slot) != e.slots.end())
      return make_error(errc::invalid_argument, field + ": the ticket is for '" +
                                                    st.registry->config(slot).name + "' already");
    e.slots.push_back(slot);
    names.push_back(st.registry->config(slot).name);
  }
  for (const auto& p : t.players) e.players.push_back(p.id);
  auto admitted = st.book->admit(e.players, t.credential, t.replace_existing);
  if (!admitted.refusal.empty()) return make_error(errc::conflict, admitted.refusal);
  std::vector<std::uint64_t> olds = std::move(admitted.replaced);
  durable_ticket d;
  d.id = st.config.ids->next();
  d.queues = std::move(names);
  d.created_ms = now_ms(self);
  d.ticket = std::move(t);
  d.ticket.replace_existing = false;
  d.contested = !st.contest.services_of(d.queues).empty();
  e.owner = owner;
  e.credential = st.book->intern(d.ticket.credential);
  st.book->add(d.id, std::move(e));
  watch(self, owner);
  auto rp = self->make_response_promise<std::uint64_t>();
  if (olds.empty())
    submit(self, std::move(d), rp);
  else
    replace_then_submit(self, std::move(olds), std::move(d), rp);
  return rp;
}

// What the journal wrote: owners are told, outcomes kept, books updated.
void committed(session_service_pointer self, std::vector<ticket_outcome>& events) {
  auto& st = self->state;
  const std::int64_t now = unix_now(self);
  for (auto& ev : events) {
    // A game server's copy of a placement is for the events' channel only.
    if (ev.state == session::ticket_state::waiting || ev.to_game_server) continue;
    // A match at the tick that formed it (a replay's tick), not when written.
    if (st.config.recorder)
      st.config.recorder->left(ev, ev.state == session::ticket_state::matched
                                       ? st.config.unix_epoch_ms + ev.match.formed_at_ms
                                       : now);
    ticket_left(self, ev);
  }
  if (st.config.events) st.config.events->append(events);
  if (st.config.events_committed && !events.empty()) st.config.events_committed();
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

session_journal_actor spawn_journal(session_service_pointer self) {
  auto& st = self->state;
  session_journal_config j;
  j.store = st.config.store;
  j.service = st.config.service_name;
  j.epoch = st.epoch;
  j.unix_epoch_ms = st.config.unix_epoch_ms;
  j.last_seq = st.config.restored.last_seq;
  j.max_batch = st.config.journal_batch;
  j.retention = st.config.outcome_retention;
  j.max_retained = st.config.max_outcomes;
  j.health = st.config.journal_writes;
  j.claims = st.config.shared_claims;
  j.event_stream = st.config.event_stream;
  if (!j.event_stream.empty())
    for (const auto* list : {&st.config.restored.waiting, &st.config.restored.guests})
      for (const auto& t : *list) j.waiting_credentials.emplace(t.id, t.ticket.credential);
  j.partition = st.config.partition;
  for (const auto* list : {&st.config.restored.waiting, &st.config.restored.guests})
    for (const auto& t : *list)
      if (auto services = st.contest.services_of(t.queues); !services.empty())
        j.contested_waiting.emplace(t.id, std::move(services));
  j.ids =
      std::shared_ptr<const session::id_permutation>(st.config.ids, &st.config.ids->permutation());
  auto journal = st.config.detached_journal
                     ? self->spawn<caf::linked + caf::detached>(session_journal, std::move(j))
                     : self->spawn<caf::linked>(session_journal, std::move(j));
  self->send(journal, journal_atom::value, caf::actor_cast<journal_listener>(self));
  return journal;
}

}  // namespace

session_service_actor::behavior_type session_service(session_service_pointer self,
                                                     session_service_config config) {
  auto& st = self->state;
  st.config = std::move(config);
  st.backfills = backfill_owners({st.config.max_backfills_per_credential,
                                  st.config.backfill_requests_per_s, st.config.backfill_burst});
  st.epoch = self->clock().now();
  // Every config is tried once here, so that a queue that could never run
  // fails the service at its start instead of crashing again and again.
  for (const auto& q : st.config.queues)
    session::session_queue(q, st.config.latency, st.config.seed);
  if (st.config.default_queue)
    session::session_queue(*st.config.default_queue, st.config.latency, st.config.seed);
  session::lobby_registry(st.config.latency, st.config.lobbies, st.config.seed);
  if (!st.config.ids) throw mm::error(errc::invalid_config, "the session service needs ids");
  st.registry = std::make_unique<session_queue_registry>(st.config.queues, st.config.default_queue,
                                                         st.config.max_queues, st.config.partition);
  st.book = st.config.book ? st.config.book
                           : std::make_shared<ticket_book>(st.config.outcome_retention,
                                                           st.config.max_outcomes);
  st.claims = std::make_shared<session::ticket_claims>();
  st.contest = contested_tickets(st.config.event_stream, st.config.partition);
  st.journal = spawn_journal(self);
  take_back(self);
  // Other threads read the books from now until the service exits (a crash
  // included): after it, they ask the service's successor, or get its error.
  st.book->open(true);
  self->attach_functor([book = st.book](const caf::error&) { book->open(false); });
  start_lobbies(self, std::move(st.config.restored_lobbies));
  st.config.restored_lobbies.clear();
  // The lobbies actor that exits while the service runs crashed: it starts
  // again. Anything else linked (a queue's supervisor, the journal) ends the
  // service with it.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    auto& s = self->state;
    if (s.lobbies && s.lobbies.address() == msg.source) {
      s.lobbies = nullptr;
      const bool long_run = self->clock().now() - s.lobbies_started >= s.config.backoff.reset_after;
      s.lobby_crashes_in_a_row = long_run ? 1 : s.lobby_crashes_in_a_row + 1;
      self->delayed_send(self, backoff_delay(s.config.backoff, s.lobby_crashes_in_a_row),
                         session_restart_atom::value);
      return;
    }
    self->quit(msg.reason);
  });
  // An owner that is gone cannot be told: its waiting tickets are cancelled.
  self->set_down_handler([self](caf::down_msg& down) {
    auto& s = self->state;
    if (!s.owners.erase(down.source)) return;
    std::vector<std::uint64_t> orphans;
    for (const auto& [id, e] : s.book->waiting())
      if (e.owner && e.owner.address() == down.source) orphans.push_back(id);
    for (const std::uint64_t id : orphans) {
      s.book->find(id)->owner = nullptr;
      cancel_everywhere(self, id, [](caf::expected<bool>) {});
    }
  });
  return {
      [self](create_atom, const std::string& name, session_ticket& t,
             const session_interfaces::owner& owner) { return create(self, name, t, owner); },
      [self](cancel_atom, std::uint64_t id) { return cancel_checked(self, id, nullptr); },
      [self](cancel_atom, std::uint64_t id, const std::string& credential) {
        return cancel_checked(self, id, &credential);
      },
      [self](status_atom, std::uint64_t id) -> caf::result<ticket_outcome> {
        if (auto o = self->state.book->status(id)) return std::move(*o);
        return no_ticket(id);
      },
      [self](info_atom) -> caf::result<std::vector<session_queue_report>> {
        auto& s = self->state;
        auto rp = self->make_response_promise<std::vector<session_queue_report>>();
        auto reports = std::make_shared<std::vector<session_queue_report>>(s.slots.size());
        auto left = std::make_shared<std::size_t>(s.slots.size());
        if (s.slots.empty()) {
          rp.deliver(std::move(*reports));
          return rp;
        }
        for (std::size_t i = 0; i < s.slots.size(); ++i) {
          (*reports)[i].queue = s.registry->config(i).name;  // a queue that is down
          self->request(s.slots[i], caf::infinite, info_atom::value)
              .then(
                  [=](session_queue_report& r) mutable {
                    (*reports)[i] = std::move(r);
                    if (--*left == 0) rp.deliver(std::move(*reports));
                  },
                  [=](caf::error&) mutable {
                    if (--*left == 0) rp.deliver(std::move(*reports));
                  });
        }
        return rp;
      },
      [self](inspect_atom, const std::string& name, std::uint32_t offset,
             std::uint32_t limit) -> caf::result<std::vector<waiting_ticket_view>> {
        auto& s = self->state;
        const auto at = s.registry->find(name);
        if (!at) return make_error(errc::not_found, "queue: no queue '" + name.substr(0, 64) + "'");
        auto rp = self->make_response_promise<std::vector<waiting_ticket_view>>();
        self->request(s.slots[*at], caf::infinite, inspect_atom::value, offset, limit)
            .then(
                [self, rp](std::vector<waiting_ticket_view>& page) mutable {
                  auto& book = *self->state.book;
                  for (auto& v : page)
                    if (const auto* e = book.find(v.ticket))
                      v.credential = book.credential(e->credential);
                  rp.deliver(std::move(page));
                },
                [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
      [self](journal_atom, committed_atom, std::vector<ticket_outcome>& events) {
        committed(self, events);
      },
      [self](journal_atom, lost_atom, const std::vector<ticket_outcome>& outcomes) {
        matches_lost(self, outcomes);
      },
      [self](guest_atom, const std::vector<std::uint64_t>& ids) { ask_for_guests(self, ids); },
      [self](elsewhere_atom, std::vector<ticket_outcome>& outcomes) {
        left_elsewhere(self, outcomes);
      },
      [self](journal_atom, lost_atom, const std::vector<std::string>& queues) {
        auto& s = self->state;
        for (const auto& q : queues)
          if (const auto at = s.registry->find(q)) self->send(s.slots[*at], lost_atom::value);
      },
      [self](lobby_atom, create_atom, const lobby_registration& l) {
        return to_lobbies<bool>(self, create_atom::value, l);
      },
      [self](lobby_atom, update_atom, const std::string& id, std::uint32_t players,
             const std::string& credential) {
        return to_lobbies<bool>(self, update_atom::value, id, players, credential);
      },
      [self](lobby_atom, close_atom, const std::string& id, const std::string& credential) {
        return to_lobbies<bool>(self, close_atom::value, id, credential);
      },
      [self](lobby_atom, find_atom, const lobby_query& q) {
        return to_lobbies<lobby_placement>(self, find_atom::value, q);
      },
      [self](lobby_atom, info_atom) { return to_lobbies<lobbies_report>(self, info_atom::value); },
      [self](lobby_atom, inspect_atom) {
        return to_lobbies<std::vector<lobby_registration>>(self, inspect_atom::value);
      },
      [self](backfill_atom, create_atom, backfill_registration& r) {
        return route_backfill_create(self, r);
      },
      [self](backfill_atom, update_atom, backfill_registration& r) {
        return route_backfill_update(self, r);
      },
      [self](backfill_atom, close_atom, const std::string& id, const std::string& credential) {
        return route_backfill_stop(self, id, credential);
      },
      [self](backfill_atom, confirm_atom, seat_change& c) {
        return route_backfill_seats(self, c, true);
      },
      [self](backfill_atom, release_atom, seat_change& c) {
        return route_backfill_seats(self, c, false);
      },
      [self](backfill_atom, explain_atom, const std::string& id, std::uint32_t limit,
             const std::string& credential) {
        return route_backfill_explain(self, id, limit, credential);
      },
      [self](explain_atom, std::uint64_t id, std::uint32_t limit, const std::string& credential) {
        return route_ticket_explain(self, id, limit, credential);
      },
      [self](backfill_atom, status_atom, const std::string& id, const std::string& credential) {
        return route_backfill_status(self, id, credential);
      },
      [self](backfill_atom, inspect_atom, const std::string& queue, const std::string& credential) {
        return route_backfill_list(self, queue, credential);
      },
      [self](session_save_atom) { return save_and_stop_queues(self); },
      [self](configure_atom, queue_set& next) { return reconfigure_queues(self, next); },
      [self](session_restart_atom) {
        if (!self->state.lobbies) start_lobbies(self, {});
      },
  };
}

}  // namespace mm::actors
