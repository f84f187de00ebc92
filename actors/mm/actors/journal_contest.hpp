// What the session journal keeps of the tickets that wait in the queues of
// several partitions (docs/design.md, "A ticket over partitions"): which
// waiting tickets they are, with the services each waits in, and the groups
// of a batch's outcomes, so that the store writes a contested ticket's
// first outcome only and leaves out whole every match that lost it
// (mm/storage/ticket_journal.hpp, groups).
//
// With partitions every outcome the journal writes is guarded so: a ticket
// this partition alone holds always finds its row waiting, and one another
// partition may finish is guarded even when this journal no longer knows it
// for one (it forgets a ticket once another partition's outcome of it is
// heard, while its own queue's outcome of it may still be on its way). A
// group is a new match's outcomes (by match id), or a lone outcome (a
// cancel, an expiry, a failure, a placement into a running match). Backfill
// placements never hold a contested ticket
// (session::ticket_request::new_matches_only).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/session_messages.hpp"
#include "mm/session/partitions.hpp"

namespace mm::actors {

class contested_tickets {
 public:
  contested_tickets() = default;
  // `stream`: the partitions' common name; `me`: this journal's partition.
  contested_tickets(std::string stream, session::partition_slice me)
      : stream_(std::move(stream)), me_(me) {}

  // The services a ticket of `queues` waits in, its home's (its first
  // queue's) first, comma-separated; empty when that is one service.
  std::string services_of(const std::vector<std::string>& queues) const;
  // Its guests: the services besides this one.
  std::vector<std::string> guests_of(const std::vector<std::string>& queues) const;

  void add(std::uint64_t ticket, std::string services) {
    if (!services.empty()) waiting_[ticket] = std::move(services);
  }
  void forget(std::uint64_t ticket) { waiting_.erase(ticket); }
  // The services of a waiting contested ticket, or nullptr.
  const std::string* find(std::uint64_t ticket) const {
    const auto it = waiting_.find(ticket);
    return it == waiting_.end() ? nullptr : &it->second;
  }
  std::size_t size() const { return waiting_.size(); }

 private:
  std::string stream_;
  session::partition_slice me_;
  std::unordered_map<std::uint64_t, std::string> waiting_;  // by public id
};

// The groups of one batch's outcomes: a match's share one, a contested
// ticket's lone outcome has its own, the others none (0).
class batch_groups {
 public:
  std::uint32_t of(const ticket_outcome& o, bool contested) {
    if (o.state == session::ticket_state::matched && o.match.running_match.empty()) {
      const auto [it, fresh] = by_match_.try_emplace(o.match.id, next_);
      next_ += fresh ? 1 : 0;
      return it->second;
    }
    return contested ? next_++ : 0;
  }

 private:
  std::unordered_map<std::uint64_t, std::uint32_t> by_match_;
  std::uint32_t next_ = 1;
};

}  // namespace mm::actors
