#include "mm/actors/session_journal.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "mm/actors/errors.hpp"
#include "mm/actors/event_stream.hpp"
#include "mm/actors/ticket_codec.hpp"
#include "mm/engine/log.hpp"
#include "mm/storage/name_list.hpp"

namespace mm::actors {

namespace {

std::int64_t unix_now(session_journal_pointer self) {
  const auto& c = self->state.config;
  return c.unix_epoch_ms +
         std::chrono::duration_cast<std::chrono::milliseconds>(self->clock().now() - c.epoch)
             .count();
}

ticket_outcome waiting_event(const durable_ticket& t) {
  ticket_outcome o;
  o.queue = t.queues.empty() ? std::string() : t.queues.front();
  o.ticket = t.id;
  o.state = session::ticket_state::waiting;
  o.credential = t.ticket.credential;
  return o;
}

void schedule_flush(session_journal_pointer self);

// One outcome a ticket of the tick: a matched ticket's carries its match (a
// copy each, the last one the match itself), in the order the tick made
// them: matches, then expired, then failed. A ticket placed into a running
// match has a second event, for that match's game server.
void add_tick_outcomes(session_journal_state& st, tick_outcomes& t) {
  auto& finishes = st.finishes;
  std::size_t n = t.expired.size() + t.failed.size();
  for (const auto& m : t.matches) n += m.tickets.size();
  finishes.reserve(finishes.size() + n);
  for (auto& m : t.matches) {
    const std::size_t count = m.tickets.size();
    const std::string* game_server = nullptr;
    for (const auto& b : t.backfills)
      if (!m.running_match.empty() && b.registration.match_id == m.running_match)
        game_server = &b.registration.credential;
    for (std::size_t i = 0; i < count; ++i) {
      ticket_outcome o = outcome_in(t.queue, m.tickets[i], session::ticket_state::matched);
      if (game_server) {
        ticket_outcome copy = outcome_in(t.queue, m.tickets[i], session::ticket_state::matched);
        copy.match = m;
        copy.credential = *game_server;
        copy.to_game_server = true;
        st.copies.push_back(std::move(copy));
      }
      o.match = i + 1 < count ? m : std::move(m);
      finishes.push_back({std::move(o), std::nullopt});
    }
  }
  for (auto& b : t.backfills) st.backfills.push_back({std::move(b), false, std::nullopt});
  for (const std::uint64_t id : t.expired)
    finishes.push_back({outcome_in(t.queue, id, session::ticket_state::expired), std::nullopt});
  for (const std::uint64_t id : t.failed)
    finishes.push_back({outcome_in(t.queue, id, session::ticket_state::failed), std::nullopt});
}

// Writes what waits in one transaction, then tells the listener and answers
// the writers.
void note_write(session_journal_state& st, bool written) {
  if (!st.config.health) return;
  st.config.health->last_write_failed.store(!written, std::memory_order_relaxed);
  if (!written) st.config.health->failures.fetch_add(1, std::memory_order_relaxed);
}

// With shared claims: the new tickets' players are claimed first, in a
// transaction of their own; a ticket refused (a player waits in a ticket of
// another service) is answered with errc::conflict and not written. A
// failed claim answers every create with the store's error; what it may
// have claimed is released by a later batch.
constexpr std::size_t max_claims_to_release = 1 << 20;

void claim_players_of(session_journal_state& st,
                      std::vector<session_journal_state::pending_create>& creates) {
  if (!st.config.claims || !st.config.store || creates.empty()) return;
  if (!st.claims_to_release.empty()) {
    // What a failed write may have left goes first: a player whose create
    // failed and who tries again at once is not refused by its own claim.
    journal_batch release;
    release.released = st.claims_to_release;
    try {
      st.config.store->write_journal(st.config.service, release);
      st.claims_to_release.clear();
    } catch (const mm::error&) {
      // Kept for the batch below, or the next.
    }
  }
  std::vector<player_claim> claims;
  claims.reserve(creates.size());
  for (const auto& c : creates) {
    player_claim claim{serial_of(st.config.ids.get(), c.ticket.id), {}};
    for (const auto& p : c.ticket.ticket.players)
      if (std::find(claim.players.begin(), claim.players.end(), p.id) == claim.players.end())
        claim.players.push_back(p.id);
    claims.push_back(std::move(claim));
  }
  std::vector<std::uint64_t> refused;
  try {
    refused = st.config.store->claim_players(st.config.service, claims);
  } catch (const mm::error& e) {
    log(log_level::error, "journal", std::string(e.what()) + "; the new tickets are refused");
    const auto err = make_error(e.code(), e.what());
    for (std::size_t i = 0; i < creates.size(); ++i) {
      if (st.claims_to_release.size() < max_claims_to_release)
        st.claims_to_release.push_back(claims[i].ticket);
      creates[i].promise.deliver(err);
    }
    creates.clear();
    return;
  }
  if (refused.empty()) return;
  std::sort(refused.begin(), refused.end());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < creates.size(); ++i) {
    if (!std::binary_search(refused.begin(), refused.end(), claims[i].ticket)) {
      if (kept != i) creates[kept] = std::move(creates[i]);
      ++kept;
      continue;
    }
    creates[i].promise.deliver(make_error(
        errc::conflict,
        "players: a player of this ticket already waits in a ticket of another partition of "
        "the session queues"));
  }
  creates.resize(kept);
}

// The events of the groups the store left out (sorted), taken out of the
// batch's `told` events (the same, with their rows in `rows`); their
// outcomes, for the listener.
std::vector<ticket_outcome> leave_out(std::vector<ticket_outcome>& told,
                                      const std::vector<journal_event>& rows,
                                      const std::vector<std::uint32_t>& lost) {
  std::vector<ticket_outcome> out;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < told.size(); ++i) {
    if (rows[i].group != 0 && std::binary_search(lost.begin(), lost.end(), rows[i].group)) {
      out.push_back(std::move(told[i]));
      continue;
    }
    if (kept != i) told[kept] = std::move(told[i]);
    ++kept;
  }
  told.resize(kept);
  return out;
}

void flush(session_journal_pointer self) {
  auto& st = self->state;
  st.flush_sent = false;
  if (st.creates.empty() && st.finishes.empty() && st.backfills.empty()) return;
  claim_players_of(st, st.creates);
  auto creates = std::move(st.creates);
  auto finishes = std::move(st.finishes);
  auto copies = std::move(st.copies);
  auto backfills = std::move(st.backfills);
  st.creates.clear();
  st.finishes.clear();
  st.copies.clear();
  st.backfills.clear();
  const std::int64_t now = unix_now(self);
  journal_batch batch;
  // A stream's events are numbered by the store at the commit: until then
  // they carry 0 (an outcome's bytes too: read back, its number is its
  // event row's).
  const bool streamed = st.config.store && !st.config.event_stream.empty();
  if (streamed) batch.event_stream = st.config.event_stream;
  batch.created.reserve(creates.size());
  batch.finished.reserve(finishes.size());
  batch.events.reserve(creates.size() + finishes.size() + copies.size());
  std::vector<ticket_outcome> events;
  events.reserve(creates.size() + finishes.size() + copies.size());
  std::uint64_t seq = st.last_seq;
  const auto next_seq = [&] { return streamed ? std::uint64_t{0} : ++seq; };
  // Serials are the store's keys: without a store nothing is keyed.
  const session::id_permutation* ids = st.config.store ? st.config.ids.get() : nullptr;
  // Contested tickets (journal_contest.hpp): the new ones with their guests'
  // rows; every outcome and event in a group, each event naming the
  // ticket's services.
  const bool contesting = st.config.partition.count > 1;
  std::unordered_map<std::uint64_t, std::string> new_contested;  // this batch's
  const auto services_of = [&](std::uint64_t ticket) -> const std::string* {
    if (!contesting) return nullptr;
    if (const auto* s = st.contested.find(ticket)) return s;
    const auto it = new_contested.find(ticket);
    return it == new_contested.end() ? nullptr : &it->second;
  };
  for (const auto& c : creates) {
    const auto& t = c.ticket;
    journal_ticket row{serial_of(ids, t.id), join_queues(t.queues), t.ticket.credential,
                       st.config.unix_epoch_ms + t.created_ms, encode_ticket(t.ticket)};
    if (contesting)
      if (auto services = st.contested.services_of(t.queues); !services.empty()) {
        row.guests = st.contested.guests_of(t.queues);
        new_contested.emplace(t.id, std::move(services));
      }
    batch.created.push_back(std::move(row));
    ticket_outcome e = waiting_event(t);
    e.seq = next_seq();
    e.at_unix_ms = now;
    events.push_back(std::move(e));
  }
  // A waiting event's row holds no bytes (its ticket row says it all); an
  // outcome's row holds the outcome's bytes, encoded once for both rows.
  // A stream's rows carry their credential: a node that follows the stream
  // reads them without the ticket rows (event_stream.hpp).
  std::unordered_map<std::uint64_t, const std::string*> created_here;  // this batch's
  if (streamed)
    for (const auto& c : creates) created_here.emplace(c.ticket.id, &c.ticket.ticket.credential);
  const auto row_credential = [&](const ticket_outcome& e) {
    if (!streamed) return std::string();
    if (e.state == session::ticket_state::waiting || !e.credential.empty()) return e.credential;
    if (const auto it = st.stream_credentials.find(e.ticket); it != st.stream_credentials.end())
      return it->second;
    const auto here = created_here.find(e.ticket);
    return here == created_here.end() ? std::string() : *here->second;
  };
  for (const auto& e : events) {
    batch.events.push_back({e.seq, e.ticket, row_credential(e), e.queue, now, {}});
    if (const auto* s = services_of(e.ticket)) batch.events.back().services = *s;
  }
  batch_groups groups;
  std::vector<std::uint32_t> finish_groups;  // by finishes' order
  finish_groups.reserve(finishes.size());
  for (auto& f : finishes) {
    ticket_outcome e = std::move(f.outcome);
    e.seq = next_seq();
    e.at_unix_ms = now;
    std::string bytes = encode_outcome(e);
    if (st.config.claims) batch.released.push_back(serial_of(ids, e.ticket));
    // With partitions every outcome is guarded (contested): a ticket's
    // services may be forgotten here (its outcome came from another
    // partition) while this partition's own outcome of it is still on its
    // way, which must then lose; a ticket only this partition holds always
    // finds its row waiting.
    const std::string* services = services_of(e.ticket);
    const std::uint32_t group = contesting ? groups.of(e, true) : 0;
    finish_groups.push_back(group);
    batch.finished.push_back(
        {serial_of(ids, e.ticket), {}, static_cast<std::uint8_t>(e.state), now, bytes});
    batch.finished.back().contested = contesting;
    batch.finished.back().group = group;
    batch.events.push_back({e.seq, e.ticket, row_credential(e), e.queue, now, std::move(bytes)});
    batch.events.back().group = group;
    if (services) batch.events.back().services = *services;
    events.push_back(std::move(e));
  }
  // The game servers' copies: events only, under the backfill's credential.
  for (auto& e : copies) {
    e.seq = next_seq();
    e.at_unix_ms = now;
    batch.events.push_back({e.seq, e.ticket, e.credential, e.queue, now, encode_outcome(e)});
    events.push_back(std::move(e));
  }
  for (const auto& b : backfills) {
    const auto& r = b.state.registration;
    journal_backfill row{r.queue, r.match_id, r.credential, now, {}};
    if (!b.stopped) {
      backfill_state stored = b.state;
      shift_times(stored, st.config.unix_epoch_ms);
      row.state = encode_backfill(stored);
    }
    batch.backfills.push_back(std::move(row));
  }
  // Claims whose ticket may not have been written (a failed claim or batch):
  // released unless their ticket waits.
  batch.released.insert(batch.released.end(), st.claims_to_release.begin(),
                        st.claims_to_release.end());
  std::vector<std::uint32_t> lost;  // groups (journal_contest.hpp)
  std::vector<ticket_outcome> lost_outcomes;
  try {
    if (st.config.store) {
      const std::uint64_t last =
          st.config.store->write_journal(st.config.service, batch, contesting ? &lost : nullptr);
      if (!lost.empty()) lost_outcomes = leave_out(events, batch.events, lost);
      if (streamed && !events.empty()) {
        // batch.events are `events`, in the same order.
        seq = last;
        for (std::size_t i = 0; i < events.size(); ++i)
          events[i].seq = last - events.size() + 1 + i;
      }
    }
    st.claims_to_release.clear();
  } catch (const mm::error& e) {
    // Bounded: past it, a claim left behind waits for the next start's
    // drop_orphan_claims.
    if (st.config.claims && st.claims_to_release.size() < max_claims_to_release)
      for (const auto& c : batch.created) st.claims_to_release.push_back(c.id);
    ++st.failures;
    note_write(st, false);
    log(log_level::error, "journal",
        std::string(e.what()) + "; the queues concerned start again from the store");
    std::vector<std::string> queues;
    // The events hold each record's queue: a new ticket's first, an outcome's.
    for (const auto& record : events) queues.push_back(record.queue);
    for (const auto& b : backfills) queues.push_back(b.state.registration.queue);
    st.lost_queues.insert(queues.begin(), queues.end());
    if (st.listener) self->send(st.listener, journal_atom::value, lost_atom::value, queues);
    const auto err = make_error(e.code(), e.what());
    for (auto& c : creates) c.promise.deliver(err);
    for (auto& f : finishes)
      if (f.promise) f.promise->deliver(err);
    for (auto& b : backfills)
      if (b.promise) b.promise->deliver(err);
    return;
  }
  note_write(st, true);
  if (streamed) {
    for (const auto& c : creates)
      st.stream_credentials.emplace(c.ticket.id, c.ticket.ticket.credential);
    for (const auto& e : events)
      if (e.state != session::ticket_state::waiting) st.stream_credentials.erase(e.ticket);
  }
  for (auto& [id, services] : new_contested) st.contested.add(id, std::move(services));
  if (contesting)
    for (const auto& e : events)
      if (e.state != session::ticket_state::waiting) st.contested.forget(e.ticket);
  st.last_seq = seq;
  ++st.batches;
  st.records += events.size();
  if (st.listener)
    self->send(st.listener, journal_atom::value, committed_atom::value, std::move(events));
  if (st.listener && !lost_outcomes.empty())
    self->send(st.listener, journal_atom::value, lost_atom::value, std::move(lost_outcomes));
  for (auto& c : creates) c.promise.deliver(c.ticket.id);
  for (std::size_t i = 0; i < finishes.size(); ++i)  // a lost cancel: the ticket left elsewhere
    if (finishes[i].promise)
      finishes[i].promise->deliver(
          !std::binary_search(lost.begin(), lost.end(), finish_groups[i]) || finish_groups[i] == 0);
  for (auto& b : backfills)
    if (b.promise) b.promise->deliver(true);
}

// A waiting ticket read back from the store for a queue (a guest taken in,
// or a lost match's ticket waiting again): the services it waits in, which
// its outcome's event names, and its owner's credential, which that event
// row carries (a guest's, or one whose queue took it back before its
// service took it in, is known here from this read alone).
void note_read_back(session_journal_state& s, durable_ticket& t) {
  auto services = s.contested.services_of(t.queues);
  t.contested = !services.empty();
  s.contested.add(t.id, std::move(services));
  if (!s.config.event_stream.empty()) s.stream_credentials.emplace(t.id, t.ticket.credential);
}

void schedule_flush(session_journal_pointer self) {
  auto& st = self->state;
  if (st.creates.size() + st.finishes.size() + st.backfills.size() >= st.config.max_batch) {
    flush(self);
    return;
  }
  if (st.flush_sent) return;
  st.flush_sent = true;
  self->send(self, journal_atom::value, flush_atom::value);
}

void prune(session_journal_pointer self) {
  auto& st = self->state;
  if (!st.config.store) return;
  journal_prune p;
  p.before_unix_ms = unix_now(self) - st.config.retention.count();
  p.keep_events = st.config.max_retained;
  p.keep_finished = st.config.max_retained;
  try {
    st.config.store->prune_journal(st.config.service, p);
    note_write(st, true);
  } catch (const mm::error& e) {
    note_write(st, false);
    log(log_level::warning, "journal", e.what());
  }
}

}  // namespace

namespace {

// A running match's id across the partitions (claim_atom): on this thread,
// which blocks on the store anyway, so the service that asks does not.
caf::result<bool> claim_match_id(const session_journal_config& c, const std::string& id) {
  if (!c.claims || c.event_stream.empty() || !c.store) return true;
  try {
    return c.store->claim_match(c.event_stream, id, c.service) == c.service;
  } catch (const mm::error& e) {
    return make_error(e.code(), e.what());
  }
}

void release_match_id(const session_journal_config& c, const std::string& id) {
  if (!c.claims || c.event_stream.empty() || !c.store) return;
  try {
    c.store->release_match(c.event_stream, id, c.service);
  } catch (const mm::error& e) {
    // Dropped at the partition's next start (drop_orphan_match_claims).
    log(log_level::error, "journal",
        std::string(e.what()) + "; the claim of match id '" + id.substr(0, 128) +
            "' stays until the partition's next start");
  }
}

}  // namespace

session_journal_actor::behavior_type session_journal(session_journal_pointer self,
                                                     session_journal_config config) {
  auto& st = self->state;
  st.config = std::move(config);
  st.last_seq = st.config.last_seq;
  st.stream_credentials = std::move(st.config.waiting_credentials);
  st.contested = contested_tickets(st.config.event_stream, st.config.partition);
  for (auto& [id, services] : st.config.contested_waiting)
    st.contested.add(id, std::move(services));
  st.config.contested_waiting.clear();
  if (st.config.claims && st.config.store) {
    // Before any new ticket: the claims an earlier run took for tickets it
    // never wrote (killed between the two transactions) go.
    try {
      if (const auto n = st.config.store->drop_orphan_claims(st.config.service))
        log(log_level::info, "journal",
            std::to_string(n) + " player claims of tickets never written were dropped");
    } catch (const mm::error& e) {
      log(log_level::error, "journal",
          std::string(e.what()) + "; claims of tickets never written stay until the next start");
    }
  }
  self->delayed_send(self, st.config.prune_every, journal_atom::value, prune_atom::value);
  return {
      [self](journal_atom, create_atom, durable_ticket& t) {
        auto rp = self->make_response_promise<std::uint64_t>();
        self->state.creates.push_back({std::move(t), rp});
        schedule_flush(self);
        return rp;
      },
      [self](journal_atom, cancel_atom, ticket_outcome& o) {
        auto rp = self->make_response_promise<bool>();
        self->state.finishes.push_back({std::move(o), rp});
        schedule_flush(self);
        return rp;
      },
      [self](journal_atom, finish_atom, std::vector<ticket_outcome>& outcomes) {
        for (auto& o : outcomes) self->state.finishes.push_back({std::move(o), std::nullopt});
        schedule_flush(self);
      },
      [self](journal_atom, finish_atom, tick_outcomes& t) {
        add_tick_outcomes(self->state, t);
        schedule_flush(self);
      },
      [self](journal_atom, backfill_atom, backfill_state& b, bool stopped) {
        auto rp = self->make_response_promise<bool>();
        self->state.backfills.push_back({std::move(b), stopped, rp});
        schedule_flush(self);
        return rp;
      },
      [self](journal_atom, claim_atom, backfill_atom, const std::string& id) {
        return claim_match_id(self->state.config, id);
      },
      [self](journal_atom, release_atom, backfill_atom, const std::string& id) {
        release_match_id(self->state.config, id);
      },
      [self](journal_atom, reload_atom, backfill_atom,
             const std::string& queue) -> caf::result<std::vector<backfill_state>> {
        flush(self);
        const auto& c = self->state.config;
        if (!c.store) return std::vector<backfill_state>{};
        try {
          std::size_t unreadable = 0;
          auto all =
              decode_backfills(c.store->read_backfills(c.service), c.unix_epoch_ms, &unreadable);
          if (unreadable > 0)
            log(log_level::warning, "journal",
                std::to_string(unreadable) + " running matches do not decode and stay behind");
          std::vector<backfill_state> out;
          for (auto& b : all)
            if (b.registration.queue == queue) out.push_back(std::move(b));
          return out;
        } catch (const mm::error& e) {
          return make_error(e.code(), e.what());
        }
      },
      [self](journal_atom, reload_atom,
             const std::string& queue) -> caf::result<std::vector<durable_ticket>> {
        flush(self);
        self->state.lost_queues.erase(queue);  // the queue starts again from its rows
        const auto& c = self->state.config;
        if (!c.store) return std::vector<durable_ticket>{};
        try {
          std::size_t unreadable = 0;
          auto rows = c.store->read_waiting_tickets(c.service);
          if (c.partition.count > 1) {
            auto guests = c.store->read_guest_tickets(c.service);
            rows.insert(rows.end(), guests.begin(), guests.end());
          }
          auto all = decode_waiting(rows, c.ids.get(), c.unix_epoch_ms, &unreadable);
          if (unreadable > 0)
            log(log_level::warning, "journal",
                std::to_string(unreadable) + " waiting tickets do not decode and stay behind");
          std::vector<durable_ticket> out;
          for (auto& t : all)
            if (std::find(t.queues.begin(), t.queues.end(), queue) != t.queues.end()) {
              note_read_back(self->state, t);
              out.push_back(std::move(t));
            }
          return out;
        } catch (const mm::error& e) {
          return make_error(e.code(), e.what());
        }
      },
      [self](journal_atom, guest_atom,
             const std::vector<std::uint64_t>& ids) -> caf::result<std::vector<durable_ticket>> {
        auto& s = self->state;
        const auto& c = s.config;
        if (!c.store || ids.empty()) return std::vector<durable_ticket>{};
        std::vector<std::uint64_t> serials;
        serials.reserve(ids.size());
        for (const std::uint64_t id : ids) serials.push_back(serial_of(c.ids.get(), id));
        try {
          auto out = decode_waiting(c.store->read_waiting_rows(serials), c.ids.get(),
                                    c.unix_epoch_ms, nullptr);
          for (auto& t : out) note_read_back(s, t);
          return out;
        } catch (const mm::error& e) {
          return make_error(e.code(), e.what());
        }
      },
      [self](journal_atom, forget_atom, const std::vector<std::uint64_t>& ids) {
        for (const std::uint64_t id : ids) {
          self->state.contested.forget(id);
          self->state.stream_credentials.erase(id);
        }
      },
      [self](journal_atom, sync_atom, const std::string& queue) -> caf::result<bool> {
        flush(self);
        if (self->state.lost_queues.count(queue) != 0)
          return make_error(errc::instance_down, "session queue '" + queue +
                                                     "': its last records were not written; it "
                                                     "starts again from the store");
        return true;
      },
      [self](journal_atom, sync_atom) -> caf::result<bool> {
        const auto failures = self->state.failures;
        flush(self);
        if (self->state.failures != failures)
          return make_error(errc::database, "the last records were not written");
        return true;
      },
      [self](journal_atom, const journal_listener& l) { self->state.listener = l; },
      [self](journal_atom, flush_atom) { flush(self); },
      [self](journal_atom, prune_atom) {
        prune(self);
        self->delayed_send(self, self->state.config.prune_every, journal_atom::value,
                           prune_atom::value);
      },
  };
}

}  // namespace mm::actors
