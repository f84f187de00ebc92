// The arbiter of multi-queue tickets (ticket_request::shared): a ticket that
// waits in several queues, each run by its own thread, leaves at its first
// outcome. Before a queue matches, expires, fails or cancels a shared ticket
// it claims it here; the first claim wins, and every later one is refused, so
// the ticket is in at most one match and is told one outcome. Thread-safe: a
// short critical section per claim, taken only for shared tickets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_set>
#include <vector>

#include "mm/session/ticket.hpp"

namespace mm::session {

class ticket_claims {
 public:
  // All of `ids` claimed, or none: then the ids already claimed.
  std::vector<ticket_id> try_claim(std::span<const ticket_id> ids) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<ticket_id> refused;
    for (const ticket_id id : ids)
      if (claimed_.count(id)) refused.push_back(id);
    if (refused.empty()) claimed_.insert(ids.begin(), ids.end());
    return refused;
  }
  // The ticket has left every queue: its claim is no longer needed.
  void release(ticket_id id) {
    std::lock_guard<std::mutex> lock(mutex_);
    claimed_.erase(id);
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return claimed_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<ticket_id> claimed_;
};

}  // namespace mm::session
