// JSON shapes of backfill over HTTP (docs/session.md, "Backfill"): strict
// readers for a running match and a change of its seats, with every size
// bounded before the engine sees it, and the answers' shape. Errors are
// bad_request naming the field ("teams[1][0].mmr must be a number").
#pragma once

#include <string>
#include <vector>

#include "json_codec.hpp"
#include "mm/actors/backfill_messages.hpp"

namespace mm::server {

// Bounds of a running match's body (the queue bounds its teams by its own
// sizes, and the body by http.max_body_bytes).
inline constexpr std::size_t max_backfill_teams = 64;
inline constexpr std::size_t max_backfill_players = 1000;
inline constexpr std::size_t max_match_id_bytes = 128;
inline constexpr std::size_t max_server_bytes = 1024;

// {"queue", "match_id", "teams": [[player, ...], ...], "datacenter"?, "priority"?, "server"?}
// (a player as in a ticket). With `update`: no "queue" nor "match_id" (the
// path names the match).
actors::backfill_registration read_backfill_body(const json& body, bool update);
// {"players"?: [id, ...]}: none, all of the reservation's.
std::vector<player_id> read_seat_players(const json& body);

json backfill_json(const actors::backfill_state& b);

}  // namespace mm::server
