// Session tickets, outcomes and backfills as bytes for the ticket journal
// (mm/storage/ticket_journal.hpp): a version byte, then CAF's binary format
// of the message types (session_messages.hpp, backfill_messages.hpp). A row
// that does not decode (an unknown version, damage) is reported, never
// trusted.
//
// Version 2 added backfill to an outcome's match (running_match, server,
// reserved_until_ms) and the outcome's to_game_server; rows of version 1
// (written before) still decode, with those fields empty.
#pragma once

#include <optional>
#include <string>

#include "mm/actors/backfill_messages.hpp"
#include "mm/actors/session_messages.hpp"

namespace mm::actors {

inline constexpr char ticket_codec_version = 2;

std::string encode_ticket(const session_ticket& t);
std::optional<session_ticket> decode_ticket(const std::string& bytes);

std::string encode_outcome(const ticket_outcome& o);
std::optional<ticket_outcome> decode_outcome(const std::string& bytes);

std::string encode_backfill(const backfill_state& b);
std::optional<backfill_state> decode_backfill(const std::string& bytes);

}  // namespace mm::actors
