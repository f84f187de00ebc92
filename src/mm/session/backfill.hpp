// Backfill: running matches with open seats in a session queue, and the
// seats the queue's tick reserves in them for waiting tickets.
//
// A game server registers its running match with the queue: its id, its
// datacenter, the players in it by team, a priority. Each tick fills open
// seats from the waiting tickets before it forms new matches
// (session_queue_backfill.hpp). A placement reserves its seats until the
// game server confirms that the players joined, releases them, or the
// queue's reservation_timeout passes; a released or expired seat is open
// again.
//
// This file is the bookkeeping: the matches, their seats and the
// reservations, with no rules. Invariants:
// - per team, the seats of the players in a match plus its reserved seats
//   never exceed the team's size (the match's capacity without teams):
//   reserve() takes only open seats, and an update that would break it is
//   refused before anything changes;
// - a reservation belongs to one match and ends with it;
// - a player is in at most one reservation of a match, and never both in a
//   match and in one of its reservations.
//
// Plain C++, single-threaded: the session queue that owns it calls it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mm/session/id_map.hpp"
#include "mm/session/ticket.hpp"
#include "mm/session/waiting_ticket.hpp"

namespace mm::session {

using reservation_id = std::uint64_t;

// A running match asking for players, as the game server sends it.
struct backfill_request {
  std::string match_id;    // the game server's id of its match, unique in the queue
  std::string datacenter;  // where it runs: a datacenter of the queue's (empty without any)
  // The players in it by team (the queue's teams in order), or one list in
  // a queue without teams. Their attributes are what the rules compare the
  // candidates with; RTTs and locations are not read.
  std::vector<std::vector<ticket_player>> teams;
  std::int32_t priority = 0;  // higher is filled first
  std::string server;         // handed to the placed players as is (an address, a token)
};

// Seats held in a running match for the players of some tickets.
struct seat_reservation {
  reservation_id id = 0;
  std::string match_id;
  std::vector<ticket_id> tickets;
  std::vector<time_ms> created;         // per ticket: when it was created
  std::vector<player_id> players;       // those still holding a seat
  std::vector<std::uint32_t> team_of;   // per player: the team of its seat
  std::vector<double> mmr;              // per player
  time_ms placed_at{0}, expires_at{0};  // seats open again at expires_at
};

// What a tick placed into a running match.
struct backfill_placement {
  seat_reservation reservation;
  std::size_t datacenter = 0;  // the match's
  std::string server;          // the match's
};

// A match that backfills, as the book keeps it.
struct running_match {
  std::string match_id, server;
  std::size_t datacenter = 0;
  std::int32_t priority = 0;
  time_ms registered{0};  // its rules relax from here, as a seed's from its creation
  std::uint64_t tiebreak = 0;
  // Kept by the book: the open seats of all its teams (from `in` and
  // `reserved` below, as they change), and its place in the book's list.
  // The tick's fill order reads them with the keys above, one line of
  // memory a match.
  std::uint32_t open_seats = 0;
  std::size_t book_index = 0;
  // The players in it as one party compiled by the queue: the values its
  // rules compare candidates with (their mean, their common label and set).
  waiting_ticket players;
  std::vector<std::uint32_t> team_of;  // per player of `players`
  // The first `listed` of `players` are the game server's list (their
  // values are what the rules read); those after it joined through seats
  // it confirmed.
  std::size_t listed = 0;
  // Per team: the seats of players in the match and their MMR summed; the
  // reserved seats and their MMR summed.
  std::vector<std::uint32_t> in, reserved;
  std::vector<double> in_mmr, reserved_mmr;
  std::vector<reservation_id> reservations;
};

class backfill_book {
 public:
  // `teams` teams of `team_size` seats (a queue without teams: one team of
  // its max_players).
  backfill_book(std::uint32_t teams, std::uint32_t team_size)
      : teams_(teams == 0 ? 1 : teams), team_size_(team_size) {}
  // A copy lists its own matches (the list points into the map's nodes,
  // which a move keeps and a copy does not).
  backfill_book(const backfill_book& other);
  backfill_book& operator=(const backfill_book& other);
  backfill_book(backfill_book&&) = default;
  backfill_book& operator=(backfill_book&&) = default;

  std::uint32_t teams() const { return teams_; }
  std::uint32_t team_size() const { return team_size_; }
  std::size_t size() const { return matches_.size(); }
  std::size_t reservations() const { return slot_of_.size(); }

  running_match* find(const std::string& match_id);
  const running_match* find(const std::string& match_id) const;
  // Reservation `id` while it is held, or null; the pointer holds until the
  // next reservation is made (the slots may move then).
  const seat_reservation* reservation(reservation_id id) const;
  const std::unordered_map<std::string, running_match>& matches() const { return matches_; }

  // A new match (its id not in the book), with `players` and `team_of` set
  // and its seats counted from them; the caller checked them.
  running_match& add(running_match m);
  // The players in `m` now (`team_of` per player of `players`). Those of its
  // reservations among them joined: their seats move from reserved to in.
  // Throws mm::error (invalid_argument, naming "teams[t]") when a team would
  // hold more than its size with the seats still reserved; nothing changes.
  void set_players(running_match& m, waiting_ticket players, std::vector<std::uint32_t> team_of);
  // Players who joined `m` through seats confirmed in an earlier run, back
  // into it (per player: its team and MMR), while their team has an open
  // seat and they are not in the match yet; the number left out.
  std::size_t rejoin(running_match& m, const std::vector<player_id>& players,
                     const std::vector<std::uint32_t>& team_of, const std::vector<double>& mmr);
  // The match leaves the book; its reservations, which end with it.
  std::vector<seat_reservation> stop(const std::string& match_id);

  // Team t's open seats in `m`: its size less the seats in and reserved.
  std::uint32_t open(const running_match& m, std::uint32_t t) const;
  std::uint32_t open(const running_match& m) const;

  // Holds seats in `m` for `r`'s players (r.id and r.match_id are set
  // here); the caller checked that they are open. The book keeps a copy.
  void reserve(running_match& m, seat_reservation& r);
  // Players of a reservation joined (confirm: their seats are the match's
  // players') or will not (release: their seats are open). `players` empty:
  // all of them. A reservation left with no player ends. Throws mm::error
  // (not_found) for a reservation not held, (invalid_argument, naming
  // "players[i]") for a player not in it; nothing changes then.
  void confirm(reservation_id id, const std::vector<player_id>& players);
  void release(reservation_id id, const std::vector<player_id>& players);
  // The reservations whose time ran out at `now`, released, oldest first.
  std::vector<seat_reservation> expire(time_ms now);

  // The matches with an open seat, in the order the tick fills them:
  // highest priority first, then registered first, then their tiebreak.
  std::vector<running_match*> fill_order();

  // A reservation handed over from an earlier run (its id kept; later ids
  // follow the highest); the caller checked its seats.
  void restore_reservation(running_match& m, seat_reservation r);

 private:
  // The players of reservation `id` selected by `players` (all when empty)
  // leave it; `joined`: into the match's players' seats.
  void end_seats(reservation_id id, const std::vector<player_id>& players, bool joined);
  void hold(running_match& m, const seat_reservation& r, int sign);
  // m.open_seats from its counts, after they changed.
  void count_open(running_match& m) const;
  seat_reservation* find_held(reservation_id id);
  // Reservation `id` is no longer held: its slot is free for the next one.
  void forget(reservation_id id);

  using expiry = std::pair<time_ms::rep, reservation_id>;

  std::uint32_t teams_, team_size_;
  std::unordered_map<std::string, running_match> matches_;
  // Every match of matches_ (whose nodes do not move), side by side: the
  // fill order reads them ahead of need, which a walk of the map's nodes
  // cannot. book_list_[m.book_index] == &m.
  std::vector<running_match*> book_list_;
  // The reservations held, in slots of one array with no node per
  // reservation: a free slot keeps its lists' memory for the next one.
  std::vector<seat_reservation> slots_;
  std::vector<std::uint32_t> free_slots_;
  bool free_slots_sorted_ = true;  // highest first, as fill_order() leaves them
  id_map slot_of_;                 // reservation id (never 0) -> its slot
  // A min-heap of (expires_at, id) of every reservation held. An entry
  // whose reservation ended (or was held again with another time) stays
  // until its time comes and is passed over then: so each entry is one
  // reservation made within the last reservation_timeout or one held now.
  std::vector<expiry> by_expiry_;
  reservation_id next_reservation_ = 1;
};

}  // namespace mm::session
