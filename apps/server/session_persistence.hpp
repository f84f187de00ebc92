// The session service's state across a graceful restart, between the
// service's messages and the session state table's rows
// (mm/storage/session_state_table.hpp): tickets stored as the JSON the HTTP
// API takes, with their creation time; lobbies as registered.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mm/actors/session_service.hpp"
#include "mm/storage/session_state_table.hpp"
#include "session_config.hpp"

namespace mm::server {

// What a start takes back, and what it drops.
struct restored_session {
  std::vector<actors::saved_ticket> tickets;  // created_ms relative to `now_unix_ms`
  std::vector<actors::lobby_registration> lobbies;
  std::size_t past_give_up = 0;   // their give-up time passed while the server was down
  std::size_t unknown_queue = 0;  // no such queue now, and no queue_template
  std::size_t unreadable = 0;     // rows that no longer read as a ticket
};

restored_session restore_session_state(const session_state_rows& rows, const session_settings& s,
                                       std::int64_t now_unix_ms);

// `saved.now_ms` (the service's clock) is `now_unix_ms`.
session_state_rows session_state_of(const actors::saved_tickets& saved,
                                    const std::vector<actors::lobby_registration>& lobbies,
                                    std::int64_t now_unix_ms);

}  // namespace mm::server
