// The session service's books, plain C++: which tickets wait (their players,
// queues, owner and credential), which player waits in which ticket (one
// waiting ticket per player, across every queue), and the outcomes of the
// tickets that left, kept for the outcome retention. What a waiting ticket
// holds here is small: the queue actor holds the ticket itself, and the
// journal holds it durably.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/interface.hpp"

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
    for (const player_id p : e.players) player_ticket_[p] = id;
    waiting_[id] = std::move(e);
  }
  // The entry, taken out; its players no longer wait (unless a newer ticket
  // of theirs took them already).
  std::optional<entry> remove(std::uint64_t id) {
    const auto it = waiting_.find(id);
    if (it == waiting_.end()) return std::nullopt;
    entry e = std::move(it->second);
    waiting_.erase(it);
    for (const player_id p : e.players)
      if (const auto pt = player_ticket_.find(p); pt != player_ticket_.end() && pt->second == id)
        player_ticket_.erase(pt);
    return e;
  }
  const std::unordered_map<std::uint64_t, entry>& waiting() const { return waiting_; }
  std::size_t waiting_count() const { return waiting_.size(); }

  std::uint32_t intern(const std::string& credential) {
    const auto [it, added] = credential_ids_.emplace(credential, credentials_.size());
    if (added) credentials_.push_back(credential);
    return static_cast<std::uint32_t>(it->second);
  }
  const std::string& credential(std::uint32_t id) const { return credentials_.at(id); }

  // A finished ticket's outcome, kept until it is older than the retention
  // (by `at_unix_ms`) or the oldest of more than max_retained. Returns the
  // ids that were dropped to make room or that aged out, as of `now_unix_ms`.
  std::vector<std::uint64_t> keep(ticket_outcome o, std::int64_t now_unix_ms) {
    const std::uint64_t id = o.ticket;
    order_.push_back({o.at_unix_ms, id});
    finished_[id] = std::move(o);
    return expire(now_unix_ms);
  }
  std::vector<std::uint64_t> expire(std::int64_t now_unix_ms) {
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
  const ticket_outcome* finished(std::uint64_t id) const {
    const auto it = finished_.find(id);
    return it == finished_.end() ? nullptr : &it->second;
  }
  std::size_t finished_count() const { return finished_.size(); }

 private:
  std::unordered_map<std::uint64_t, entry> waiting_;
  std::unordered_map<player_id, std::uint64_t> player_ticket_;
  std::vector<std::string> credentials_;
  std::unordered_map<std::string, std::size_t> credential_ids_;
  std::chrono::milliseconds retention_;
  std::size_t max_retained_;
  std::unordered_map<std::uint64_t, ticket_outcome> finished_;
  std::deque<std::pair<std::int64_t, std::uint64_t>> order_;  // (at, id), oldest first
};

}  // namespace mm::actors
