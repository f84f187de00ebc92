// Backfill's message types (session::backfill_book): a running match as its
// game server registers it, the seats a queue's tick reserved in it, a
// change of those seats, and the match as the journal keeps it and a view
// shows it. CAF `inspect` functions, and conversions to and from the
// session engine's own types.
//
// Times are on the queue's clock (engine milliseconds since the service's
// epoch), as a ticket's created_ms; the journal stores them as unix time.
#pragma once

#include <bit>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "mm/actors/session_messages.hpp"
#include "mm/actors/wire_number.hpp"
#include "mm/session/backfill.hpp"

namespace mm::actors {

using backfill_atom = caf::atom_constant<caf::atom("backfill")>;
using confirm_atom = caf::atom_constant<caf::atom("confirm")>;
using release_atom = caf::atom_constant<caf::atom("release")>;

// A running match asking for players (session::backfill_request).
struct backfill_registration {
  std::string queue;
  std::string match_id, datacenter, server;
  std::vector<std::vector<session_player>> teams;  // the players in it, by team
  std::int32_t priority = 0;
  // Who registered it: only this credential (or an admin) may change it.
  // Set by the front ends, whatever the sender put there.
  std::string credential;
};

// Seats held in a running match for placed players (session::seat_reservation).
struct seat_hold {
  std::uint64_t id = 0;  // public id
  std::vector<std::uint64_t> tickets;
  std::vector<std::int64_t> created_ms;  // per ticket
  std::vector<player_id> players;        // still holding a seat
  std::vector<std::uint32_t> team_of;    // per player
  std::vector<double> mmr;               // per player
  std::int64_t placed_ms = 0, expires_ms = 0;
};

// A running match: as the journal keeps it (its registration, when, its
// reservations) and, with its seats counted, as a view shows it.
struct backfill_state {
  backfill_registration registration;
  std::int64_t registered_ms = 0;
  std::vector<seat_hold> reservations;
  // The players who joined through confirmed seats (players, team_of, mmr),
  // beyond the registration's: in the match until an update lists them.
  seat_hold joined;
  // Views only: per team, the seats of players in it, reserved, and open;
  // and the queue's clock when the view was made.
  std::vector<std::uint32_t> players_in, reserved, open;
  std::int64_t now_ms = 0;
};

// Players of a reservation who joined (confirm) or will not (release); none
// listed: all of them.
struct seat_change {
  std::string match_id;
  std::uint64_t reservation = 0;
  std::vector<player_id> players;
  std::string credential;  // set by the front ends
};

// What one tick of a queue took out, as its actor hands it to the journal:
// each match once (its tickets are the matched ones), and the ids of the
// tickets that expired or failed. The journal writes one outcome a ticket;
// the tick does not build them (a copy of the match per ticket cost the
// tick a quarter of its time at 100,000 tickets).
//
// Placements into running matches (backfill) are matches too, with
// running_match set, and `backfills` holds every running match whose seats
// the tick changed (placed, or a reservation expired), as it is now: the
// journal writes them in the same transaction as the tickets' outcomes, and
// tells each placement to its match's game server (its credential) too.
struct tick_outcomes {
  std::string queue;
  std::vector<session_match> matches;
  std::vector<std::uint64_t> expired, failed;
  std::vector<backfill_state> backfills;
};

inline session::backfill_request to_backfill_request(const backfill_registration& r) {
  session::backfill_request b;
  b.match_id = r.match_id;
  b.datacenter = r.datacenter;
  b.priority = r.priority;
  b.server = r.server;
  for (const auto& team : r.teams) {
    session_ticket as_party;
    as_party.players = team;
    b.teams.push_back(to_request(as_party).players);
  }
  return b;
}

inline seat_hold to_hold(const session::seat_reservation& r) {
  seat_hold h;
  h.id = r.id;
  h.tickets = r.tickets;
  for (const auto t : r.created) h.created_ms.push_back(t.count());
  h.players = r.players;
  h.team_of = r.team_of;
  h.mmr = r.mmr;
  h.placed_ms = r.placed_at.count();
  h.expires_ms = r.expires_at.count();
  return h;
}

inline session::seat_reservation to_reservation(const seat_hold& h, const std::string& match_id) {
  session::seat_reservation r;
  r.id = h.id;
  r.match_id = match_id;
  r.tickets = h.tickets;
  for (const auto t : h.created_ms) r.created.push_back(session::time_ms(t));
  r.players = h.players;
  r.team_of = h.team_of;
  r.mmr = h.mmr;
  r.placed_at = session::time_ms(h.placed_ms);
  r.expires_at = session::time_ms(h.expires_ms);
  return r;
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, backfill_registration& x) {
  return f(caf::meta::type_name("backfill_registration"), x.queue, x.match_id, x.datacenter,
           x.server, x.teams, x.priority, x.credential);
}

// The MMRs as their bits (wire_number.hpp): every double crosses exactly.
struct mmr_bits {
  std::vector<double>& values;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, mmr_bits& x) {
  if constexpr (std::is_void_v<typename Inspector::result_type>) {
    f(x.values);  // to_string: the numbers themselves
  } else {
    std::vector<std::uint64_t> bits;
    for (const double v : x.values) bits.push_back(std::bit_cast<std::uint64_t>(v));
    auto result = f(bits);
    if constexpr (Inspector::writes_state) {
      x.values.clear();
      for (const auto b : bits) x.values.push_back(std::bit_cast<double>(b));
    }
    return result;
  }
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, seat_hold& x) {
  mmr_bits mmr{x.mmr};
  return f(caf::meta::type_name("seat_hold"), x.id, x.tickets, x.created_ms, x.players, x.team_of,
           mmr, x.placed_ms, x.expires_ms);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, backfill_state& x) {
  return f(caf::meta::type_name("backfill_state"), x.registration, x.registered_ms, x.reservations,
           x.joined, x.players_in, x.reserved, x.open, x.now_ms);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, tick_outcomes& x) {
  return f(caf::meta::type_name("tick_outcomes"), x.queue, x.matches, x.expired, x.failed,
           x.backfills);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, seat_change& x) {
  return f(caf::meta::type_name("seat_change"), x.match_id, x.reservation, x.players, x.credential);
}

}  // namespace mm::actors
