// The handle a node of a cluster gives for its session service, which runs
// only while the node holds the "sessions" lease (docs/operations.md,
// "Several nodes"): a stand-in that passes every message on to the service
// running now, unchanged (same sender, same request id: the answer goes
// straight back, as with delegation), and while none runs answers each
// request with errc::not_owned_here, naming the node that serves the
// sessions when it knows it. Like the network gate it has no mailbox and no
// thread: it forwards in the sender's context, so it adds no hop.
#pragma once

#include <caf/actor_control_block.hpp>
#include <caf/actor_system.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "mm/actors/ticket_book.hpp"

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

// A switch presenting `sigs` (the session service's interface).
caf::strong_actor_ptr make_session_switch(caf::actor_system& sys,
                                          std::shared_ptr<session_target> target,
                                          std::set<std::string> sigs);

}  // namespace mm::actors
