#include "mm/session/backfill.hpp"

#include <algorithm>
#include <string>

#include "mm/engine/error.hpp"
#include "mm/session/refuse.hpp"

namespace mm::session {

running_match* backfill_book::find(const std::string& match_id) {
  const auto it = matches_.find(match_id);
  return it == matches_.end() ? nullptr : &it->second;
}

const running_match* backfill_book::find(const std::string& match_id) const {
  const auto it = matches_.find(match_id);
  return it == matches_.end() ? nullptr : &it->second;
}

const seat_reservation* backfill_book::reservation(reservation_id id) const {
  const auto it = reservations_.find(id);
  return it == reservations_.end() ? nullptr : &it->second;
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
  const std::string id = m.match_id;
  return matches_.emplace(id, std::move(m)).first->second;
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
    const seat_reservation& r = reservations_.at(id);
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
  return left_out;
}

std::vector<seat_reservation> backfill_book::stop(const std::string& match_id) {
  std::vector<seat_reservation> out;
  const auto it = matches_.find(match_id);
  if (it == matches_.end()) return out;
  for (reservation_id id : it->second.reservations) {
    auto r = reservations_.find(id);
    by_expiry_.erase({r->second.expires_at.count(), id});
    out.push_back(std::move(r->second));
    reservations_.erase(r);
  }
  matches_.erase(it);
  return out;
}

std::uint32_t backfill_book::open(const running_match& m, std::uint32_t t) const {
  const std::uint32_t held = m.in[t] + m.reserved[t];
  return held >= team_size_ ? 0 : team_size_ - held;
}

std::uint32_t backfill_book::open(const running_match& m) const {
  std::uint32_t n = 0;
  for (std::uint32_t t = 0; t < teams_; ++t) n += open(m, t);
  return n;
}

void backfill_book::hold(running_match& m, const seat_reservation& r, int sign) {
  for (std::size_t i = 0; i < r.players.size(); ++i) {
    m.reserved[r.team_of[i]] += static_cast<std::uint32_t>(sign);
    m.reserved_mmr[r.team_of[i]] += sign * r.mmr[i];
  }
}

const seat_reservation& backfill_book::reserve(running_match& m, seat_reservation r) {
  if (r.id == 0) r.id = next_reservation_;
  next_reservation_ = std::max(next_reservation_, r.id + 1);
  r.match_id = m.match_id;
  hold(m, r, +1);
  m.reservations.push_back(r.id);
  by_expiry_.emplace(r.expires_at.count(), r.id);
  const reservation_id id = r.id;
  return reservations_.emplace(id, std::move(r)).first->second;
}

void backfill_book::restore_reservation(running_match& m, seat_reservation r) {
  reserve(m, r);
}

void backfill_book::end_seats(reservation_id id, const std::vector<player_id>& players,
                              bool joined) {
  const auto it = reservations_.find(id);
  if (it == reservations_.end())
    throw error(errc::not_found, "reservation " + std::to_string(id) + " is not held");
  seat_reservation& r = it->second;
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
  if (joined)
    for (std::size_t i = 0; i < leaving.players.size(); ++i) {
      m.players.players.push_back(leaving.players[i]);
      m.players.player_mmr.push_back(leaving.mmr[i]);
      m.team_of.push_back(leaving.team_of[i]);
      ++m.in[leaving.team_of[i]];
      m.in_mmr[leaving.team_of[i]] += leaving.mmr[i];
    }
  if (kept == 0) {
    by_expiry_.erase({r.expires_at.count(), id});
    m.reservations.erase(std::find(m.reservations.begin(), m.reservations.end(), id));
    reservations_.erase(it);
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
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now.count()) {
    const reservation_id id = by_expiry_.begin()->second;
    out.push_back(reservations_.at(id));
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
  keys.reserve(matches_.size());
  for (auto& [id, m] : matches_)
    if (open(m) > 0) keys.push_back({m.priority, m.registered.count(), m.tiebreak, &m});
  std::sort(keys.begin(), keys.end(), [](const keyed& a, const keyed& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.registered != b.registered) return a.registered < b.registered;
    return a.tiebreak < b.tiebreak;
  });
  std::vector<running_match*> out;
  out.reserve(keys.size());
  for (const keyed& k : keys) out.push_back(k.match);
  return out;
}

}  // namespace mm::session
