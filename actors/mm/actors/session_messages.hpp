// Message types of the session matchmaker's actors (session_queue_actor.hpp)
// and their CAF `inspect` functions: a ticket as a game sends it, the outcome
// its owner is told, a queue's report. Shapes that serialize (no optional, no
// pair); conversions to and from the session engine's own types.
#pragma once

#include <caf/meta/type_name.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mm/actors/wire_number.hpp"
#include "mm/engine/types.hpp"
#include "mm/session/ticket.hpp"

namespace mm::actors {

struct named_number {
  std::string name;
  double value = 0;
};
struct named_text {
  std::string name, value;
};
struct named_set {
  std::string name;
  std::vector<std::string> items;
};

struct session_player {
  player_id id = 0;
  double mmr = 0;
  std::vector<named_number> numbers;
  std::vector<named_text> strings;
  std::vector<named_set> sets;
  std::vector<named_number> rtt_ms;  // by datacenter name
  bool has_location = false;
  double latitude = 0, longitude = 0;
};

// A party asking a queue for a match.
struct session_ticket {
  std::vector<session_player> players;
  std::int64_t give_up_after_ms = 0;  // 0: the queue's (a multi-queue ticket: its first queue's)
  bool replace_existing = false;
  // More queues to wait in at once (a multi-queue ticket): the first match in
  // any of them takes the party out of all the others.
  std::vector<std::string> also_queues;
  // Who created it: only this credential (or an admin) may read or cancel
  // it. Set by the server's front ends (HTTP: the caller's token; the actor
  // port: "actor-port"), whatever the sender put there.
  std::string credential;
  // How a refusal names the queues: "queue" for a ticket of one queue, else
  // "queues[i]" over the list queue, also_queues... (HTTP's `queues` form
  // sets it for a list of one too). Not on the wire: a door sets it for the
  // service of its own process.
  bool queues_listed = false;
};

// A formed match as the players' owners are told it.
struct session_match {
  std::uint64_t id = 0;  // public: unique across queues, restarts and nodes
  std::string queue;
  std::string datacenter;  // empty when the queue has none
  std::vector<std::vector<player_id>> teams;
  std::vector<std::uint64_t> tickets;
  double mmr_spread = 0;
  double worst_rtt_ms = 0;  // -1: not known (a player with neither RTTs nor a location)
  bool bot_match = false;
  std::int64_t formed_at_ms = 0;  // the tick that formed it, on the queue's clock
  // Placed into a running match (backfill) rather than a new one: the game
  // server's match id and server. `id` is then the public id of the seats'
  // reservation, held until reserved_until_ms (the queue's clock); `teams`
  // and `tickets` are the placed ones. Empty running_match: a new match.
  std::string running_match, server;
  std::int64_t reserved_until_ms = 0;
};

// What became of a ticket: told to its owner when it leaves the queue, and
// the answer to a status request.
struct ticket_outcome {
  std::string queue;  // where it was matched; else its (first) queue
  std::uint64_t ticket = 0;
  session::ticket_state state = session::ticket_state::waiting;
  session_match match;          // when matched
  std::string credential;       // who created it
  std::uint64_t seq = 0;        // the event's sequence number (0: not an event)
  std::int64_t at_unix_ms = 0;  // when it was written (created, or left)
  // An event for the game server of the running match a ticket was placed
  // into (`credential` is then the backfill's): a copy of the ticket's
  // outcome on the events' channel only. Its owner and its status keep the
  // ticket's own outcome.
  bool to_game_server = false;
};

// The outcome of ticket `id` of `queue` that left in `state` (no match yet).
inline ticket_outcome outcome_in(std::string queue, std::uint64_t id, session::ticket_state state) {
  ticket_outcome o;
  o.queue = std::move(queue);
  o.ticket = id;
  o.state = state;
  return o;
}

// Counts of values at most each bound (the last bucket: above the last
// bound), and their sum: a histogram as /metrics renders it.
struct value_histogram {
  std::vector<double> bounds;         // ascending
  std::vector<std::uint64_t> counts;  // bounds.size() + 1
  double sum = 0;

  value_histogram() = default;
  explicit value_histogram(std::vector<double> b)
      : bounds(std::move(b)), counts(bounds.size() + 1, 0) {}
  void add(double x) {
    std::size_t i = 0;
    while (i < bounds.size() && x > bounds[i]) ++i;
    ++counts[i];
    sum += x;
  }
  std::uint64_t count() const {
    std::uint64_t n = 0;
    for (auto c : counts) n += c;
    return n;
  }
};

// A waiting ticket as a queue's view shows it.
struct waiting_ticket_view {
  std::uint64_t ticket = 0;
  std::vector<player_id> players;
  double mmr = 0;  // the party's mean
  std::int64_t waited_ms = 0, gives_up_in_ms = 0;
  std::string stage;       // the latency stage ("ideal", "expand", "warm_body"), or "" without one
  std::string credential;  // who created it (filled by the service)
};

// One queue's report.
struct session_queue_report {
  std::string queue;
  std::uint64_t waiting = 0;
  std::uint64_t created = 0, matched = 0, cancelled = 0, expired = 0, failed = 0;
  std::uint64_t matches = 0, bot_matches = 0;
  std::uint64_t players_matched = 0;  // over the matches: their mean size
  // Waiting tickets by latency stage (all "ideal" in a queue without a policy).
  std::uint64_t waiting_ideal = 0, waiting_expand = 0, waiting_warm_body = 0;
  value_histogram wait_seconds;  // per matched ticket: creation to match
  value_histogram mmr_spread;    // per match
  value_histogram worst_rtt_ms;  // per match with a datacenter
  // Per tick: the match loop's wall time in ms, with the message of its
  // outcomes to the journal; and the last one's.
  value_histogram tick_ms;
  double last_tick_ms = 0;
  // Backfill: the running matches held, their open seats now; tickets placed
  // into them and the reservations made, confirmed, released and expired.
  std::uint64_t backfills = 0, open_seats = 0;
  std::uint64_t backfilled = 0, placements = 0;
  std::uint64_t reservations_confirmed = 0, reservations_released = 0, reservations_expired = 0;
  // Why its tickets wait: waiting tickets sampled (a few every
  // wait_reasons_every), counted by their main reason
  // (session::wait_reason), the names and counts in the same order.
  std::vector<std::string> wait_reasons;
  std::vector<std::uint64_t> wait_reason_counts;
};

// A running lobby as its game server registers it.
struct lobby_registration {
  std::string id, mode, datacenter;
  std::uint32_t max_players = 0, players = 0;
  bool created_by_find = false;  // in listings only
  std::string credential;        // who registers it: its share of the lobbies is bounded
};

// A party looking for a running lobby (session::find_lobby_request).
struct lobby_query {
  std::vector<std::string> modes;  // a created lobby gets the first
  std::uint32_t party_size = 1;
  std::string region;  // empty: the region of the nearest datacenter
  std::vector<named_number> rtt_ms;
  bool has_location = false;
  double latitude = 0, longitude = 0;
  bool prevent_auto_create = false;
  std::string credential;  // who asks: a lobby its find creates counts as theirs
};

// Where the party goes.
struct lobby_placement {
  std::string lobby, datacenter;
  bool created = false;
  std::uint32_t players = 0;  // the lobby's count with the party in it
};

struct lobby_datacenter_report {
  std::string datacenter;
  std::uint64_t lobbies = 0, players = 0, seats = 0;
};

// The lobbies actor's counts, and its lobbies by datacenter (those with any).
struct lobbies_report {
  std::uint64_t lobbies = 0, players = 0, seats = 0;
  std::uint64_t found = 0, created = 0, closed_idle = 0, full = 0;
  std::vector<lobby_datacenter_report> by_datacenter;
};

inline session::ticket_request to_request(const session_ticket& t) {
  session::ticket_request r;
  for (const auto& p : t.players) {
    session::ticket_player q;
    q.id = p.id;
    q.mmr = p.mmr;
    for (const auto& n : p.numbers) q.numbers.emplace_back(n.name, n.value);
    for (const auto& s : p.strings) q.strings.emplace_back(s.name, s.value);
    for (const auto& s : p.sets) q.sets.emplace_back(s.name, s.items);
    for (const auto& n : p.rtt_ms) q.rtt_ms.emplace_back(n.name, n.value);
    if (p.has_location) q.location = session::geo_point{p.latitude, p.longitude};
    r.players.push_back(std::move(q));
  }
  if (t.give_up_after_ms != 0) r.give_up_after = std::chrono::milliseconds(t.give_up_after_ms);
  r.replace_existing = t.replace_existing;
  return r;
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, named_number& x) {
  return f(caf::meta::type_name("named_number"), x.name, as_bits(x.value));
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, named_text& x) {
  return f(caf::meta::type_name("named_text"), x.name, x.value);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, named_set& x) {
  return f(caf::meta::type_name("named_set"), x.name, x.items);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_player& x) {
  return f(caf::meta::type_name("session_player"), x.id, as_bits(x.mmr), x.numbers, x.strings,
           x.sets, x.rtt_ms, x.has_location, as_bits(x.latitude), as_bits(x.longitude));
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_ticket& x) {
  return f(caf::meta::type_name("session_ticket"), x.players, x.give_up_after_ms,
           x.replace_existing, x.also_queues, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_match& x) {
  return f(caf::meta::type_name("session_match"), x.id, x.queue, x.datacenter, x.teams, x.tickets,
           x.mmr_spread, x.worst_rtt_ms, x.bot_match, x.formed_at_ms, x.running_match, x.server,
           x.reserved_until_ms);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ticket_outcome& x) {
  return f(caf::meta::type_name("ticket_outcome"), x.queue, x.ticket, x.state, x.match,
           x.credential, x.seq, x.at_unix_ms, x.to_game_server);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, value_histogram& x) {
  return f(caf::meta::type_name("value_histogram"), x.bounds, x.counts, x.sum);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, waiting_ticket_view& x) {
  return f(caf::meta::type_name("waiting_ticket_view"), x.ticket, x.players, x.mmr, x.waited_ms,
           x.gives_up_in_ms, x.stage, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_queue_report& x) {
  return f(caf::meta::type_name("session_queue_report"), x.queue, x.waiting, x.created, x.matched,
           x.cancelled, x.expired, x.failed, x.matches, x.bot_matches, x.players_matched,
           x.waiting_ideal, x.waiting_expand, x.waiting_warm_body, x.wait_seconds, x.mmr_spread,
           x.worst_rtt_ms, x.tick_ms, x.last_tick_ms, x.backfills, x.open_seats, x.backfilled,
           x.placements, x.reservations_confirmed, x.reservations_released, x.reservations_expired,
           x.wait_reasons, x.wait_reason_counts);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lobby_registration& x) {
  return f(caf::meta::type_name("lobby_registration"), x.id, x.mode, x.datacenter, x.max_players,
           x.players, x.created_by_find, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lobby_query& x) {
  return f(caf::meta::type_name("lobby_query"), x.modes, x.party_size, x.region, x.rtt_ms,
           x.has_location, x.latitude, x.longitude, x.prevent_auto_create, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lobby_placement& x) {
  return f(caf::meta::type_name("lobby_placement"), x.lobby, x.datacenter, x.created, x.players);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lobby_datacenter_report& x) {
  return f(caf::meta::type_name("lobby_datacenter_report"), x.datacenter, x.lobbies, x.players,
           x.seats);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lobbies_report& x) {
  return f(caf::meta::type_name("lobbies_report"), x.lobbies, x.players, x.seats, x.found,
           x.created, x.closed_idle, x.full, x.by_datacenter);
}

}  // namespace mm::actors
