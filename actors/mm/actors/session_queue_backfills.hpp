// Backfill in a session queue actor (session_queue_actor.hpp): what its
// backfill messages do, what a tick's placements and expired reservations
// become, and the running matches a restarted queue takes back.
//
// Durability: every change of a running match (registered, updated, seats
// confirmed or released, stopped) is written to the journal, and the
// caller answered, only once written. A tick's placements and expiries go
// to the journal with the tick's outcomes, in one transaction: a ticket
// never leaves its queue matched into a running match without the
// reservation of its seats. As with tickets, the queue changes first and a
// failed write makes it start again from the store.
#pragma once

#include <string>
#include <vector>

#include "mm/actors/backfill_messages.hpp"
#include "mm/actors/session_queue_actor.hpp"

namespace mm::actors {

// Registers (`update` false) or updates a running match.
caf::result<backfill_state> backfill_register(session_queue_pointer self, backfill_registration& r,
                                              bool update);
caf::result<bool> backfill_stop(session_queue_pointer self, const std::string& match_id);
// Confirms (`joined`) or releases seats of a reservation of the match.
caf::result<backfill_state> backfill_seats(session_queue_pointer self, const seat_change& c,
                                           bool joined);
// The running matches, and one of them, as written: answered once the
// journal holds every change the queue sent it before the read.
caf::result<std::vector<backfill_state>> backfill_list(session_queue_pointer self);
caf::result<backfill_state> backfill_one(session_queue_pointer self, const std::string& match_id);

// The tick's placements as matches for the journal (running_match set),
// and the running matches it changed.
void backfill_tick(session_queue_pointer self, session::tick_result& r, tick_outcomes& out);

// The running matches of the store go back into the queue, with their
// reservations; one that no longer fits the config stops (its row deleted),
// a reservation that no longer fits is dropped (the row rewritten).
void take_back_backfills(session_queue_pointer self);

}  // namespace mm::actors
