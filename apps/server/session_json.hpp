// JSON shapes of the session API (docs/api.md, "Sessions over HTTP"): strict
// readers for tickets, lobbies and lobby searches, with every size bounded
// before the engine sees it, and the answers' shapes. Errors are bad_request
// naming the field ("players[1].rtt_ms.paris must be a number >= 0").
#pragma once

#include <string>
#include <vector>

#include "json_codec.hpp"
#include "mm/actors/session_messages.hpp"

namespace mm::server {

// Bounds on what one ticket may carry (the engine bounds the party by the
// queue's max_party_size, and the body by http.max_body_bytes).
inline constexpr std::size_t max_ticket_players = 64;
inline constexpr std::size_t max_named_values = 32;  // per kind, per player
inline constexpr std::size_t max_name_bytes = 64;
inline constexpr std::size_t max_text_bytes = 256;
inline constexpr std::size_t max_set_items = 64;
inline constexpr std::size_t max_rtt_entries = 512;
inline constexpr std::int64_t max_give_up_after_ms = 86'400'000;
inline constexpr std::size_t max_ticket_queues = 8;  // a multi-queue ticket's queues
// Tickets in one POST /api/tickets {"tickets": [...]}.
inline constexpr std::size_t max_batch_tickets = 1000;

// {"queue" (or "queues": [name, ...], a multi-queue ticket), "players": [{"id", "mmr", "numbers"?:
// {name: x}, "strings"?: {name: text}, "sets"?: {name: [text]}, "rtt_ms"?: {datacenter: ms},
// "location"?: {"latitude", "longitude"}}], "give_up_after_ms"?,
// "replace_existing"?}
struct ticket_body {
  std::string queue;
  actors::session_ticket ticket;
};
ticket_body read_ticket_body(const json& body);
// One player of a ticket or of a running match, as above; `where` names it.
actors::session_player read_player(const json& v, const std::string& where);

// The writing side of read_ticket_body: the ticket as a body that reads back
// to it ("queue" for one queue, "queues" for several).
json ticket_body_json(const std::vector<std::string>& queues, const actors::session_ticket& t);

json outcome_json(const actors::ticket_outcome& o);
json queue_report_json(const actors::session_queue_report& r);
json waiting_view_json(const actors::waiting_ticket_view& v);

// {"id", "mode", "datacenter", "max_players", "players"?}
actors::lobby_registration read_lobby_body(const json& body);
// {"players"}
std::uint32_t read_lobby_players(const json& body);
// {"modes", "party_size"?, "region"?, "rtt_ms"?, "location"?, "prevent_auto_create"?}
actors::lobby_query read_lobby_query(const json& body);

json placement_json(const actors::lobby_placement& p);
json lobby_json(const actors::lobby_registration& l);
json lobbies_report_json(const actors::lobbies_report& r);

}  // namespace mm::server
