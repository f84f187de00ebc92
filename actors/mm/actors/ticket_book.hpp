// The session service's books, plain C++: which tickets wait (their players,
// queues, owner and credential), which player waits in which ticket (one
// waiting ticket per player, across every queue), and the outcomes of the
// tickets that left, kept for the outcome retention. What a waiting ticket
// holds here is small: the queue actor holds the ticket itself, and the
// journal holds it durably.
//
// Read from other threads too: the HTTP server's network thread answers a
// ticket poll from the book (`try_status`) instead of handing it to the
// service's thread and back (docs/performance.md, "Ticket polls answered
// where they arrive").
//
// Invariants:
// - The service actor is the only writer. Every insertion, removal and
//   change of what `status` reads (an entry's queues and credential, the
//   interned credentials, the queue names, the kept outcomes) takes the
//   mutex; the service's own reads need it not, since nothing else writes.
//   `pending` and `owner`, changed through find() without the mutex, are
//   the service's alone: other threads never read them.
// - Other threads read only through try_status, which tries the mutex and
//   never waits for the service, and answers only while the book is open:
//   from the end of the service's restore to its exit. Closed, busy or
//   unknown: nullopt, and the caller asks the service, which answers the
//   same from the same book.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/interface.hpp"
#include "mm/session/public_id.hpp"

namespace mm::actors {

class ticket_book {
 public:
  struct entry {
    std::vector<player_id> players;
    std::vector<std::uint32_t> slots;  // its queues (the first journals it)
    session_interfaces::owner owner;   // may be invalid
    std::uint32_t credential = 0;      // interned
    bool pending = true;               // created, not yet answered
  };

  ticket_book(std::chrono::milliseconds retention, std::size_t max_retained)
      : retention_(retention), max_retained_(max_retained) {}

  // The waiting ticket a player is in, or 0.
  std::uint64_t ticket_of(player_id p) const {
    const auto it = player_ticket_.find(p);
    return it == player_ticket_.end() ? 0 : it->second;
  }
  entry* find(std::uint64_t id) {
    const auto it = waiting_.find(id);
    return it == waiting_.end() ? nullptr : &it->second;
  }
  void add(std::uint64_t id, entry e) {
    std::lock_guard lock(mutex_);
    for (const player_id p : e.players) player_ticket_[p] = id;
    waiting_[id] = std::move(e);
  }
  // The entry, taken out; its players no longer wait (unless a newer ticket
  // of theirs took them already).
  std::optional<entry> remove(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    const auto it = waiting_.find(id);
    if (it == waiting_.end()) return std::nullopt;
    entry e = std::move(it->second);
    waiting_.erase(it);
    for (const player_id p : e.players)
      if (const auto pt = player_ticket_.find(p); pt != player_ticket_.end() && pt->second == id)
        player_ticket_.erase(pt);
    return e;
  }
  // Whether the players may wait in a new ticket of `credential`, and which
  // of their waiting tickets it replaces (`replace`: the request's
  // replace_existing). The one rule of ownership for every door: another
  // credential's ticket is never replaced, nor its id named; the caller's
  // own is named without `replace`, and not replaced while being created.
  struct admission {
    std::vector<std::uint64_t> replaced;
    std::string refusal;  // empty: admitted; else the reason, its field first (a conflict)
  };
  admission admit(const std::vector<player_id>& players, const std::string& credential,
                  bool replace) const {
    admission out;
    for (std::size_t i = 0; i < players.size(); ++i) {
      const std::uint64_t existing = ticket_of(players[i]);
      if (existing == 0) continue;
      const entry& e = waiting_.at(existing);
      const std::string who =
          "players[" + std::to_string(i) + "].id: player " + std::to_string(players[i]);
      if (credentials_.at(e.credential) != credential)
        out.refusal = who + " already waits in a ticket of another owner";
      else if (!replace)
        out.refusal = who + " already waits in ticket " + session::format_public_id(existing);
      else if (e.pending)
        out.refusal =
            who + "'s ticket " + session::format_public_id(existing) + " is still being created";
      if (!out.refusal.empty()) return out;
      if (std::find(out.replaced.begin(), out.replaced.end(), existing) == out.replaced.end())
        out.replaced.push_back(existing);
    }
    return out;
  }

  // A replacement that failed gives its players back to the tickets it was
  // to replace (those still waiting): add() had pointed them at the new one,
  // and remove() of the new one left them pointing nowhere.
  void give_back(const std::vector<std::uint64_t>& replaced) {
    std::lock_guard lock(mutex_);
    for (const std::uint64_t id : replaced)
      if (const auto it = waiting_.find(id); it != waiting_.end())
        for (const player_id p : it->second.players) player_ticket_.emplace(p, id);
  }

  const std::unordered_map<std::uint64_t, entry>& waiting() const { return waiting_; }
  std::size_t waiting_count() const { return waiting_.size(); }

  std::uint32_t intern(const std::string& credential) {
    std::lock_guard lock(mutex_);
    const auto [it, added] = credential_ids_.emplace(credential, credentials_.size());
    if (added) credentials_.push_back(credential);
    return static_cast<std::uint32_t>(it->second);
  }
  const std::string& credential(std::uint32_t id) const { return credentials_.at(id); }

  // The name of the queue at registry slot `slot`, for the answers.
  void name_queue(std::uint32_t slot, const std::string& name) {
    std::lock_guard lock(mutex_);
    if (queue_names_.size() <= slot) queue_names_.resize(slot + 1);
    queue_names_[slot] = name;
  }
  // Other threads may read the book (after the restore), or no longer.
  void open(bool readable) {
    std::lock_guard lock(mutex_);
    open_ = readable;
  }

  // A ticket as the service answers its status: waiting (its first queue,
  // its creator), or its kept outcome; nullopt when the book has neither.
  // The service's thread only.
  std::optional<ticket_outcome> status(std::uint64_t id) const {
    if (const auto it = waiting_.find(id); it != waiting_.end()) {
      ticket_outcome o;
      const std::uint32_t slot = it->second.slots.front();
      if (slot < queue_names_.size()) o.queue = queue_names_[slot];
      o.ticket = id;
      o.credential = credentials_.at(it->second.credential);
      return o;
    }
    if (const auto it = finished_.find(id); it != finished_.end()) return it->second;
    return std::nullopt;
  }
  // The same from another thread: nullopt also while the book is closed or
  // the service is changing it (then ask the service).
  std::optional<ticket_outcome> try_status(std::uint64_t id) const {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || !open_) return std::nullopt;
    return status(id);
  }

  // A finished ticket's outcome, kept until it is older than the retention
  // (by `at_unix_ms`) or the oldest of more than max_retained. Returns the
  // ids that were dropped to make room or that aged out, as of `now_unix_ms`.
  std::vector<std::uint64_t> keep(ticket_outcome o, std::int64_t now_unix_ms) {
    std::lock_guard lock(mutex_);
    const std::uint64_t id = o.ticket;
    order_.push_back({o.at_unix_ms, id});
    finished_[id] = std::move(o);
    return expire_locked(now_unix_ms);
  }
  std::vector<std::uint64_t> expire(std::int64_t now_unix_ms) {
    std::lock_guard lock(mutex_);
    return expire_locked(now_unix_ms);
  }
  const ticket_outcome* finished(std::uint64_t id) const {
    const auto it = finished_.find(id);
    return it == finished_.end() ? nullptr : &it->second;
  }
  std::size_t finished_count() const { return finished_.size(); }

 private:
  std::vector<std::uint64_t> expire_locked(std::int64_t now_unix_ms) {
    std::vector<std::uint64_t> gone;
    while (!order_.empty() && (order_.size() > max_retained_ ||
                               order_.front().first < now_unix_ms - retention_.count())) {
      const auto [at, id] = order_.front();
      order_.pop_front();
      const auto it = finished_.find(id);
      if (it != finished_.end() && it->second.at_unix_ms == at) {
        finished_.erase(it);
        gone.push_back(id);
      }
    }
    return gone;
  }

  mutable std::mutex mutex_;
  bool open_ = false;
  std::unordered_map<std::uint64_t, entry> waiting_;
  std::unordered_map<player_id, std::uint64_t> player_ticket_;
  std::vector<std::string> credentials_;
  std::unordered_map<std::string, std::size_t> credential_ids_;
  std::vector<std::string> queue_names_;  // by registry slot
  std::chrono::milliseconds retention_;
  std::size_t max_retained_;
  std::unordered_map<std::uint64_t, ticket_outcome> finished_;
  std::deque<std::pair<std::int64_t, std::uint64_t>> order_;  // (at, id), oldest first
};

}  // namespace mm::actors
