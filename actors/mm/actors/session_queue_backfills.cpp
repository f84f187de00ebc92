#include "mm/actors/session_queue_backfills.hpp"

#include <algorithm>
#include <set>

#include "mm/actors/errors.hpp"
#include "mm/engine/error.hpp"
#include "mm/engine/log.hpp"

namespace mm::actors {

namespace {

session::time_ms engine_now(session_queue_pointer self) {
  return std::chrono::duration_cast<session::time_ms>(self->clock().now() - self->state.epoch);
}

// The match as the journal keeps it and a view shows it.
backfill_state state_of(session_queue_pointer self, const std::string& match_id) {
  const auto& st = self->state;
  const session::backfill_book& book = st.queue->backfills();
  const session::running_match& m = *book.find(match_id);
  backfill_state b;
  b.registration = st.registrations.at(match_id);
  b.registered_ms = m.registered.count();
  for (const session::reservation_id id : m.reservations)
    b.reservations.push_back(to_hold(*book.reservation(id)));
  for (std::size_t i = m.listed; i < m.players.players.size(); ++i) {
    b.joined.players.push_back(m.players.players[i]);
    b.joined.team_of.push_back(m.team_of[i]);
    b.joined.mmr.push_back(m.players.player_mmr[i]);
  }
  b.players_in = m.in;
  b.reserved = m.reserved;
  for (std::uint32_t t = 0; t < book.teams(); ++t) b.open.push_back(book.open(m, t));
  b.now_ms = engine_now(self).count();
  return b;
}

// Answers `reply` once the journal has written everything this queue sent
// it before: a view then shows no reservation (formed by a tick, its write
// still pending) that a crash could yet take back.
template <class T>
caf::result<T> once_written(session_queue_pointer self, T reply) {
  auto rp = self->make_response_promise<T>();
  self->request(self->state.config.journal, caf::infinite, journal_atom::value, sync_atom::value,
                self->state.config.queue.name)
      .then([rp, reply](bool) mutable { rp.deliver(std::move(reply)); },
            [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

// Writes `b` (or deletes its row: `stopped`), then answers `reply`.
template <class T>
caf::result<T> durable(session_queue_pointer self, backfill_state b, bool stopped, T reply) {
  auto rp = self->make_response_promise<T>();
  self->request(self->state.config.journal, caf::infinite, journal_atom::value,
                backfill_atom::value, std::move(b), stopped)
      .then([rp, reply](bool) mutable { rp.deliver(std::move(reply)); },
            [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

// Writes `b` (or deletes its row) with no one to answer: a restore's
// corrections. A failed write makes the queue start again, as any.
void write_quietly(session_queue_pointer self, backfill_state b, bool stopped) {
  self->request(self->state.config.journal, caf::infinite, journal_atom::value,
                backfill_atom::value, std::move(b), stopped)
      .then([](bool) {}, [](caf::error&) {});
}

// The placed players' match as their owners are told it.
session_match placement_message(session_queue_pointer self, const session::backfill_placement& p) {
  const auto& st = self->state;
  const session::seat_reservation& r = p.reservation;
  session_match m;
  m.id = r.id;
  m.queue = st.config.queue.name;
  const auto& dcs = st.queue->latency().datacenters();
  if (p.datacenter < dcs.size()) m.datacenter = dcs[p.datacenter].name;
  m.teams.resize(st.queue->backfills().teams());
  double lo = 0, hi = 0;
  for (std::size_t i = 0; i < r.players.size(); ++i) {
    m.teams[r.team_of[i]].push_back(r.players[i]);
    lo = i == 0 ? r.mmr[i] : std::min(lo, r.mmr[i]);
    hi = i == 0 ? r.mmr[i] : std::max(hi, r.mmr[i]);
  }
  m.tickets = r.tickets;
  m.mmr_spread = hi - lo;
  m.worst_rtt_ms = -1;                   // the players in the match measured theirs; not known here
  m.formed_at_ms = r.placed_at.count();  // the tick's time, as its expiry's
  m.running_match = r.match_id;
  m.server = p.server;
  m.reserved_until_ms = r.expires_at.count();
  return m;
}

}  // namespace

caf::result<backfill_state> backfill_register(session_queue_pointer self, backfill_registration& r,
                                              bool update) {
  auto& st = self->state;
  if (update) {  // what the update leaves out stays as it was
    const auto old = st.registrations.find(r.match_id);
    if (old != st.registrations.end()) {
      if (r.datacenter.empty()) r.datacenter = old->second.datacenter;
      if (r.server.empty()) r.server = old->second.server;
    }
  }
  try {
    const auto request = to_backfill_request(r);
    if (update)
      st.queue->update_backfill(request, engine_now(self));
    else
      st.queue->add_backfill(request, engine_now(self));
  } catch (const mm::error& e) {
    return make_error(e.code(), e.what());
  }
  const std::string id = r.match_id;
  if (update) r.credential = st.registrations.at(id).credential;  // the registrant's
  st.registrations[id] = std::move(r);
  backfill_state b = state_of(self, id);
  return durable<backfill_state>(self, b, false, b);
}

caf::result<bool> backfill_stop(session_queue_pointer self, const std::string& match_id) {
  auto& st = self->state;
  if (!st.queue->stop_backfill(match_id)) return false;
  backfill_state gone;
  gone.registration = std::move(st.registrations.at(match_id));
  st.registrations.erase(match_id);
  return durable<bool>(self, std::move(gone), true, true);
}

caf::result<backfill_state> backfill_seats(session_queue_pointer self, const seat_change& c,
                                           bool joined) {
  auto& st = self->state;
  const auto* r = st.queue->backfills().reservation(c.reservation);
  if (r == nullptr || r->match_id != c.match_id)
    return make_error(errc::not_found,
                      "reservation: match '" + c.match_id + "' holds no such reservation");
  try {
    if (joined)
      st.queue->confirm_reservation(c.reservation, c.players);
    else
      st.queue->release_reservation(c.reservation, c.players);
  } catch (const mm::error& e) {
    return make_error(e.code(), e.what());
  }
  backfill_state b = state_of(self, c.match_id);
  return durable<backfill_state>(self, b, false, b);
}

caf::result<std::vector<backfill_state>> backfill_list(session_queue_pointer self) {
  std::vector<backfill_state> out;
  for (const auto& [id, r] : self->state.registrations) out.push_back(state_of(self, id));
  std::sort(out.begin(), out.end(), [](const backfill_state& a, const backfill_state& b) {
    return a.registered_ms != b.registered_ms ? a.registered_ms < b.registered_ms
                                              : a.registration.match_id < b.registration.match_id;
  });
  return once_written(self, std::move(out));
}

caf::result<backfill_state> backfill_one(session_queue_pointer self, const std::string& match_id) {
  if (self->state.registrations.count(match_id) == 0)
    return make_error(errc::not_found, "match_id: no running match '" + match_id + "'");
  return once_written(self, state_of(self, match_id));
}

void backfill_tick(session_queue_pointer self, session::tick_result& r, tick_outcomes& out) {
  if (r.placed.empty() && r.reservations_expired.empty()) return;
  std::set<std::string> changed;
  for (const auto& p : r.placed) {
    out.matches.push_back(placement_message(self, p));
    changed.insert(p.reservation.match_id);
  }
  for (const auto& e : r.reservations_expired) changed.insert(e.match_id);
  for (const auto& id : changed) out.backfills.push_back(state_of(self, id));
}

void take_back_backfills(session_queue_pointer self) {
  auto& st = self->state;
  for (auto& b : st.config.restored_backfills) {
    auto& reg = b.registration;
    std::vector<session::seat_reservation> held;
    for (const auto& h : b.reservations) held.push_back(to_reservation(h, reg.match_id));
    std::vector<session::seat_reservation> dropped;
    try {
      dropped =
          st.queue->restore_backfill(to_backfill_request(reg), session::time_ms(b.registered_ms),
                                     std::move(held), to_reservation(b.joined, reg.match_id));
    } catch (const mm::error& e) {
      log(log_level::warning, "sessions",
          "session queue '" + st.config.queue.name + "': running match '" + reg.match_id +
              "' no longer fits its queue and stops: " + e.what());
      write_quietly(self, std::move(b), true);
      continue;
    }
    const std::string id = reg.match_id;
    st.registrations[id] = std::move(reg);
    if (!dropped.empty()) {
      log(log_level::warning, "sessions",
          "session queue '" + st.config.queue.name + "': " + std::to_string(dropped.size()) +
              " reservations of match '" + id + "' no longer fit it and are dropped");
      write_quietly(self, state_of(self, id), false);
    }
  }
  st.config.restored_backfills.clear();
}

}  // namespace mm::actors
