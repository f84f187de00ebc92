// Where the session service reports the ticket stream, for a recording of a
// game's own traffic (docs/session.md, "Recording"): each ticket
// once it is durable, and its outcome once that is written. Called on the
// service's thread, in that order for a ticket; an implementation must not
// block it (matchmakerd's hands the events to a writer thread).
#pragma once

#include <cstdint>

#include "mm/actors/session_journal.hpp"
#include "mm/actors/session_messages.hpp"

namespace mm::actors {

class ticket_recorder {
 public:
  virtual ~ticket_recorder() = default;
  // A ticket, durable in its queues, created at `unix_ms`.
  virtual void created(const durable_ticket& ticket, std::int64_t unix_ms) = 0;
  // What became of a ticket (matched, cancelled, expired, failed), written
  // at `unix_ms`.
  virtual void left(const ticket_outcome& outcome, std::int64_t unix_ms) = 0;
};

}  // namespace mm::actors
