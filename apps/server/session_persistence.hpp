// The session service's state across a restart, between the service's
// messages and the store's rows. Tickets are durable in the ticket journal
// (mm/actors/session_journal.hpp) from the moment they are acknowledged;
// lobbies are written at a graceful stop (mm/storage/session_state_table.hpp).
// Tickets that an earlier version kept in the session state table at its
// last graceful stop are moved into the journal once, under their ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mm/actors/session_journal.hpp"
#include "mm/actors/session_messages.hpp"
#include "mm/storage/player_store.hpp"
#include "session_config.hpp"

namespace mm::server {

// What a start takes back from the session state table, and what it drops.
struct restored_session {
  journal_batch tickets;  // for the journal, as created rows (an earlier version's)
  std::vector<actors::lobby_registration> lobbies;
  std::size_t past_give_up = 0;   // their give-up time passed while the server was down
  std::size_t unknown_queue = 0;  // no such queue now, and no queue_template
  std::size_t unreadable = 0;     // rows that no longer read as a ticket
};

restored_session restore_session_state(const session_state_rows& rows, const session_settings& s,
                                       std::int64_t now_unix_ms);

// The lobbies as the session state table keeps them.
session_state_rows session_state_of(const std::vector<actors::lobby_registration>& lobbies);

}  // namespace mm::server
