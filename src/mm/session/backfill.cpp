#include "mm/session/backfill.hpp"

#include <algorithm>
#include <functional>
#include <string>

#include "mm/engine/error.hpp"
#include "mm/session/refuse.hpp"

namespace mm::session {

backfill_book::backfill_book(const backfill_book& other)
    : teams_(other.teams_),
      team_size_(other.team_size_),
      matches_(other.matches_),
      book_list_(other.book_list_.size()),
      slots_(other.slots_),
      free_slots_(other.free_slots_),
      free_slots_sorted_(other.free_slots_sorted_),
      slot_of_(other.slot_of_),
      by_expiry_(other.by_expiry_),
      next_reservation_(other.next_reservation_) {
  for (auto& [id, m] : matches_) book_list_[m.book_index] = &m;
}

backfill_book& backfill_book::operator=(const backfill_book& other) {
  if (this != &other) *this = backfill_book(other);
  return *this;
}

running_match* backfill_book::find(const std::string& match_id) {
  const auto it = matches_.find(match_id);
  return it == matches_.end() ? nullptr : &it->second;
}

const running_match* backfill_book::find(const std::string& match_id) const {
  const auto it = matches_.find(match_id);
  return it == matches_.end() ? nullptr : &it->second;
}

const seat_reservation* backfill_book::reservation(reservation_id id) const {
  const std::uint64_t* slot = id == 0 ? nullptr : slot_of_.find(id);
  return slot ? &slots_[*slot] : nullptr;
}

seat_reservation* backfill_book::find_held(reservation_id id) {
  return const_cast<seat_reservation*>(reservation(id));  // the one lookup, on a book not const
}

void backfill_book::forget(reservation_id id) {
  const auto slot = static_cast<std::uint32_t>(*slot_of_.find(id));
  slot_of_.erase(id);
  seat_reservation& r = slots_[slot];
  r.id = 0;
  r.tickets.clear();
  r.created.clear();
  r.players.clear();
  r.team_of.clear();
  r.mmr.clear();
  free_slots_.push_back(slot);
  free_slots_sorted_ = false;
}

running_match& backfill_book::add(running_match m) {
  m.in.assign(teams_, 0);
  m.in_mmr.assign(teams_, 0);
  m.reserved.assign(teams_, 0);
  m.reserved_mmr.assign(teams_, 0);
  m.reservations.clear();
  m.listed = m.players.players.size();
  for (std::size_t i = 0; i < m.players.players.size(); ++i) {
    ++m.in[m.team_of[i]];
    m.in_mmr[m.team_of[i]] += m.players.player_mmr[i];
  }
  count_open(m);
  m.book_index = book_list_.size();
  const std::string id = m.match_id;
  running_match& added = matches_.emplace(id, std::move(m)).first->second;
  book_list_.push_back(&added);
  return added;
}

void backfill_book::set_players(running_match& m, waiting_ticket players,
                                std::vector<std::uint32_t> team_of) {
  // The seats each team would hold: the players listed, plus the reserved
  // seats of players not listed (a listed one has joined).
  std::vector<std::uint32_t> held(teams_, 0);
  for (std::uint32_t t : team_of) ++held[t];
  const auto listed = [&](player_id p) {
    return std::find(players.players.begin(), players.players.end(), p) != players.players.end();
  };
  std::vector<std::pair<reservation_id, player_id>> joined;
  for (reservation_id id : m.reservations) {
    const seat_reservation& r = *find_held(id);
    for (std::size_t i = 0; i < r.players.size(); ++i) {
      if (listed(r.players[i]))
        joined.emplace_back(id, r.players[i]);
      else
        ++held[r.team_of[i]];
    }
  }
  for (std::uint32_t t = 0; t < teams_; ++t)
    if (held[t] > team_size_)
      refuse("teams[" + std::to_string(t) + "]",
             std::to_string(held[t]) + " players and reserved seats is more than the " +
                 std::to_string(team_size_) + " seats of the team");
  // The reserved seats of the listed players end (they are in the list now).
  for (const auto& [id, p] : joined) end_seats(id, {p}, false);
  m.players = std::move(players);
  m.team_of = std::move(team_of);
  m.listed = m.players.players.size();
  m.in.assign(teams_, 0);
  m.in_mmr.assign(teams_, 0);
  for (std::size_t i = 0; i < m.players.players.size(); ++i) {
    ++m.in[m.team_of[i]];
    m.in_mmr[m.team_of[i]] += m.players.player_mmr[i];
  }
  count_open(m);
}

std::size_t backfill_book::rejoin(running_match& m, const std::vector<player_id>& players,
                                  const std::vector<std::uint32_t>& team_of,
                                  const std::vector<double>& mmr) {
  std::size_t left_out = 0;
  for (std::size_t i = 0; i < players.size(); ++i) {
    const auto& in = m.players.players;
    if (i >= team_of.size() || i >= mmr.size() || team_of[i] >= teams_ ||
        open(m, team_of[i]) == 0 || std::find(in.begin(), in.end(), players[i]) != in.end()) {
      ++left_out;
      continue;
    }
    m.players.players.push_back(players[i]);
    m.players.player_mmr.push_back(mmr[i]);
    m.team_of.push_back(team_of[i]);
    ++m.in[team_of[i]];
    m.in_mmr[team_of[i]] += mmr[i];
  }
  count_open(m);
  return left_out;
}

std::vector<seat_reservation> backfill_book::stop(const std::string& match_id) {
  std::vector<seat_reservation> out;
  const auto it = matches_.find(match_id);
  if (it == matches_.end()) return out;
  for (reservation_id id : it->second.reservations) {
    out.push_back(*find_held(id));
    forget(id);
  }
  // Out of the list: the last match takes its place.
  const std::size_t at = it->second.book_index;
  book_list_[at] = book_list_.back();
  book_list_[at]->book_index = at;
  book_list_.pop_back();
  matches_.erase(it);
  return out;
}

std::uint32_t backfill_book::open(const running_match& m, std::uint32_t t) const {
  const std::uint32_t held = m.in[t] + m.reserved[t];
  return held >= team_size_ ? 0 : team_size_ - held;
}

std::uint32_t backfill_book::open(const running_match& m) const {
  return m.open_seats;
}

void backfill_book::count_open(running_match& m) const {
  std::uint32_t n = 0;
  for (std::uint32_t t = 0; t < teams_; ++t) n += open(m, t);
  m.open_seats = n;
}

void backfill_book::hold(running_match& m, const seat_reservation& r, int sign) {
  for (std::size_t i = 0; i < r.players.size(); ++i) {
    m.reserved[r.team_of[i]] += static_cast<std::uint32_t>(sign);
    m.reserved_mmr[r.team_of[i]] += sign * r.mmr[i];
  }
  count_open(m);
}

void backfill_book::reserve(running_match& m, seat_reservation& r) {
  if (r.id == 0) r.id = next_reservation_;
  next_reservation_ = std::max(next_reservation_, r.id + 1);
  r.match_id = m.match_id;
  hold(m, r, +1);
  m.reservations.push_back(r.id);
  by_expiry_.emplace_back(r.expires_at.count(), r.id);
  std::push_heap(by_expiry_.begin(), by_expiry_.end(), std::greater<>{});
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  // Assigned, not moved: a reused slot's lists keep their memory.
  seat_reservation& kept = slots_[slot];
  kept.id = r.id;
  kept.match_id = r.match_id;
  kept.tickets.assign(r.tickets.begin(), r.tickets.end());
  kept.created.assign(r.created.begin(), r.created.end());
  kept.players.assign(r.players.begin(), r.players.end());
  kept.team_of.assign(r.team_of.begin(), r.team_of.end());
  kept.mmr.assign(r.mmr.begin(), r.mmr.end());
  kept.placed_at = r.placed_at;
  kept.expires_at = r.expires_at;
  slot_of_.set(r.id, slot);
}

void backfill_book::restore_reservation(running_match& m, seat_reservation r) {
  reserve(m, r);
}

void backfill_book::end_seats(reservation_id id, const std::vector<player_id>& players,
                              bool joined) {
  seat_reservation* found = find_held(id);
  if (!found) throw error(errc::not_found, "reservation " + std::to_string(id) + " is not held");
  seat_reservation& r = *found;
  for (std::size_t i = 0; i < players.size(); ++i)
    if (std::find(r.players.begin(), r.players.end(), players[i]) == r.players.end())
      refuse("players[" + std::to_string(i) + "]",
             "player " + std::to_string(players[i]) + " holds no seat of this reservation");
  running_match& m = matches_.at(r.match_id);
  seat_reservation leaving;  // the seats that end, for hold()
  std::size_t kept = 0;
  for (std::size_t i = 0; i < r.players.size(); ++i) {
    const bool ends =
        players.empty() || std::find(players.begin(), players.end(), r.players[i]) != players.end();
    if (ends) {
      leaving.players.push_back(r.players[i]);
      leaving.team_of.push_back(r.team_of[i]);
      leaving.mmr.push_back(r.mmr[i]);
      continue;
    }
    r.players[kept] = r.players[i];
    r.team_of[kept] = r.team_of[i];
    r.mmr[kept] = r.mmr[i];
    ++kept;
  }
  r.players.resize(kept);
  r.team_of.resize(kept);
  r.mmr.resize(kept);
  hold(m, leaving, -1);
  if (joined) {
    for (std::size_t i = 0; i < leaving.players.size(); ++i) {
      m.players.players.push_back(leaving.players[i]);
      m.players.player_mmr.push_back(leaving.mmr[i]);
      m.team_of.push_back(leaving.team_of[i]);
      ++m.in[leaving.team_of[i]];
      m.in_mmr[leaving.team_of[i]] += leaving.mmr[i];
    }
    count_open(m);
  }
  if (kept == 0) {
    m.reservations.erase(std::find(m.reservations.begin(), m.reservations.end(), id));
    forget(id);
  }
}

void backfill_book::confirm(reservation_id id, const std::vector<player_id>& players) {
  end_seats(id, players, true);
}

void backfill_book::release(reservation_id id, const std::vector<player_id>& players) {
  end_seats(id, players, false);
}

std::vector<seat_reservation> backfill_book::expire(time_ms now) {
  std::vector<seat_reservation> out;
  while (!by_expiry_.empty() && by_expiry_.front().first <= now.count()) {
    const auto [at, id] = by_expiry_.front();
    std::pop_heap(by_expiry_.begin(), by_expiry_.end(), std::greater<>{});
    by_expiry_.pop_back();
    const seat_reservation* r = find_held(id);
    if (!r || r->expires_at.count() != at) continue;  // ended before its time
    out.push_back(*r);
    end_seats(id, {}, false);
  }
  return out;
}

std::vector<running_match*> backfill_book::fill_order() {
  // Sorted by keys copied side by side, not through the matches' pointers:
  // one read of each match instead of one per comparison.
  struct keyed {
    std::int32_t priority;
    time_ms::rep registered;
    std::uint64_t tiebreak;
    running_match* match;
  };
  std::vector<keyed> keys;
  keys.reserve(book_list_.size());
  constexpr std::size_t ahead = 8;
  for (std::size_t j = 0; j < book_list_.size(); ++j) {
    if (j + ahead < book_list_.size()) {
      __builtin_prefetch(&book_list_[j + ahead]->priority);
      __builtin_prefetch(&book_list_[j + ahead]->open_seats);
    }
    running_match& m = *book_list_[j];
    if (m.open_seats > 0) keys.push_back({m.priority, m.registered.count(), m.tiebreak, &m});
  }
  std::sort(keys.begin(), keys.end(), [](const keyed& a, const keyed& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.registered != b.registered) return a.registered < b.registered;
    return a.tiebreak < b.tiebreak;
  });
  std::vector<running_match*> out;
  out.reserve(keys.size());
  for (const keyed& k : keys) out.push_back(k.match);
  // The tick's reservations take the free slots lowest first (reserve()
  // takes the last): one after another in memory, as their lists' memory
  // was taken when the slots were first used, instead of in the order the
  // reservations before them ended. Sorted again only after one was freed.
  if (!free_slots_sorted_) std::sort(free_slots_.begin(), free_slots_.end(), std::greater<>{});
  free_slots_sorted_ = true;
  return out;
}

}  // namespace mm::session
