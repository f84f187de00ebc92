// Session tickets and outcomes as bytes for the ticket journal
// (mm/storage/ticket_journal.hpp): a version byte, then CAF's binary format
// of the message types (session_messages.hpp). A row that does not decode
// (another version, damage) is reported, never trusted.
#pragma once

#include <optional>
#include <string>

#include "mm/actors/session_messages.hpp"

namespace mm::actors {

inline constexpr char ticket_codec_version = 1;

std::string encode_ticket(const session_ticket& t);
std::optional<session_ticket> decode_ticket(const std::string& bytes);

std::string encode_outcome(const ticket_outcome& o);
std::optional<ticket_outcome> decode_outcome(const std::string& bytes);

}  // namespace mm::actors
