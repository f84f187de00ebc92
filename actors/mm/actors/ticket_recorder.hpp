// Where the session service reports the ticket stream, for a recording of a
// game's own traffic (docs/session.md, "Recording"): each ticket
// once it is durable, and its outcome once that is written (called on the
// service's thread, in that order for a ticket); and each recorded queue's
// start and ticks (called on that queue actor's thread), so that a replay
// runs the match loop at the same moments with the same seed. An
// implementation must not block any of them (matchmakerd's hands the events
// to a writer thread).
#pragma once

#include <cstdint>
#include <string>

#include "mm/actors/session_journal.hpp"
#include "mm/actors/session_messages.hpp"

namespace mm::actors {

class ticket_recorder {
 public:
  virtual ~ticket_recorder() = default;
  // A ticket, durable in its queues, created at `unix_ms`.
  virtual void created(const durable_ticket& ticket, std::int64_t unix_ms) = 0;
  // What became of a ticket (matched, cancelled, expired, failed): at
  // `unix_ms`, when it was written, or for a match when it formed (the
  // queue's tick).
  virtual void left(const ticket_outcome& outcome, std::int64_t unix_ms) = 0;
  // Whether queue `name` (a shard: "coop.eu") is recorded: only then are
  // its start and ticks reported. Called once per queue actor start.
  virtual bool records(const std::string& name) const = 0;
  // Queue `name` started (or restarted) its match loop with `seed`.
  virtual void queue_started(const std::string& name, std::uint64_t seed, std::int64_t unix_ms) = 0;
  // Queue `name` ran its match loop at `unix_ms` (its engine time).
  virtual void ticked(const std::string& name, std::int64_t unix_ms) = 0;
  // Ticket `id` reached queue `name` only after the tick at `tick_unix_ms`,
  // though it was created at or before it.
  virtual void joined_late(const std::string& name, std::uint64_t id,
                           std::int64_t tick_unix_ms) = 0;
  // Queue `name` let ticket `id` go at `unix_ms` on its owner's cancel (or
  // a player's newer ticket): the queue's own moment, a few ms before the
  // outcome is written and left() reports it. A moment equal to a tick's
  // means before that tick ran.
  virtual void cancelled(const std::string& name, std::uint64_t id, std::int64_t unix_ms) = 0;
};

}  // namespace mm::actors
