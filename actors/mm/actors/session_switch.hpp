// The handle a node of a cluster gives for its session service, which runs
// only while the node holds the "sessions" lease (docs/operations.md,
// "Several nodes"): a stand-in that passes every message on to the service
// running now, unchanged (same sender, same request id: the answer goes
// straight back, as with delegation), and while none runs answers each
// request with errc::not_owned_here, naming the node that serves the
// sessions when it knows it. Like the network gate it has no mailbox and no
// thread: it forwards in the sender's context, so it adds no hop.
//
// With the queues in partitions (mm/session/partitions.hpp) each partition
// is a service of its own, and the switch routes each message to its
// partition's: a ticket by its (first) queue's name, a cancel, status or
// explanation by the partition in its id's serial, a running match's
// change by its queue or its reservation's id, the lobbies to partition 0.
// What no one partition answers (every queue's counts, a running match
// named by its id alone, the running matches of every queue) is asked of
// every partition running here and merged (session_fan_out.hpp).
#pragma once

#include <caf/actor_control_block.hpp>
#include <caf/actor_system.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mm/actors/ticket_book.hpp"
#include "mm/session/public_id.hpp"

namespace mm::actors {

// What the switch passes to, changed by the node as it gains and loses the
// lease; shared with the switch, and with the HTTP server, which reads the
// running service's books for a ticket poll (ticket_book.hpp).
class session_target {
 public:
  void set(caf::strong_actor_ptr service, std::shared_ptr<const ticket_book> book = nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    service_ = std::move(service);
    book_ = std::move(book);
  }
  void clear(std::string served_by) {
    std::lock_guard<std::mutex> lock(mutex_);
    service_ = nullptr;
    book_ = nullptr;
    served_by_ = std::move(served_by);
  }
  // The ticket's status from the running service's books, on the calling
  // thread; nullopt when none runs here, its books are closed or busy, or
  // they do not hold the ticket: then ask the service.
  std::optional<ticket_outcome> status_here(std::uint64_t ticket) const {
    std::shared_ptr<const ticket_book> book;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      book = book_;
    }
    return book ? book->try_status(ticket) : std::nullopt;
  }
  caf::strong_actor_ptr get() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return service_;
  }
  std::string served_by() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return served_by_;
  }

 private:
  mutable std::mutex mutex_;
  caf::strong_actor_ptr service_;
  std::shared_ptr<const ticket_book> book_;  // the running service's
  std::string served_by_;                    // for the error while none runs here
};

// The targets of the partitions (one for a service alone) and the ids'
// permutation, to tell a ticket's partition from its public id.
class session_partitions {
 public:
  session_partitions(std::uint32_t count, session::id_permutation ids);

  std::uint32_t count() const { return static_cast<std::uint32_t>(targets_.size()); }
  session_target& target(std::uint32_t p) { return *targets_.at(p); }
  const session_target& target(std::uint32_t p) const { return *targets_.at(p); }

  std::uint32_t of_queue(std::string_view queue) const;
  // The partition that made a ticket, a match or a reservation.
  std::uint32_t of_id(std::uint64_t public_id) const;
  // status_here of the ticket's partition.
  std::optional<ticket_outcome> status_here(std::uint64_t ticket) const {
    return target(of_id(ticket)).status_here(ticket);
  }

 private:
  std::vector<std::shared_ptr<session_target>> targets_;
  session::id_permutation ids_;
};

// A switch presenting `sigs` (the session service's interface).
caf::strong_actor_ptr make_session_switch(caf::actor_system& sys,
                                          std::shared_ptr<const session_partitions> partitions,
                                          std::set<std::string> sigs);

}  // namespace mm::actors
