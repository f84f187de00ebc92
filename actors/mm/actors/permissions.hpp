// Who may do what: one table for every door (HTTP, its WebSocket, the actor
// port). Each operation needs a role (identity.hpp); what it reads or
// changes is further limited to the caller's own (its scope) unless the
// caller is an admin. docs/security.md prints this table with each door's
// message or route; a test holds the two to each other.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "mm/actors/identity.hpp"

namespace mm::actors {

enum class operation : std::uint8_t {
  find,            // async: find an opponent, test-query
  player_write,    // async over the actor port: update, enroll, remove a player
  async_read,      // async: the client's counters, the shards a node serves
  ticket_create,   // a session ticket (replace_existing: only the caller's own)
  ticket_cancel,   // own tickets
  ticket_read,     // status and explanation of own tickets
  queue_read,      // queue counts; waiting tickets (others' without ids and players)
  backfill_write,  // register, update, confirm, release, stop own running matches
  backfill_read,   // status, list and explanation of own running matches
  lobby_write,     // register, update, close own lobbies
  lobby_find,      // a lobby for a party (a lobby it creates is the caller's)
  lobby_read,      // lobby counts and listing
  events_read,     // the ticket event feed: own tickets' events
};

struct permission {
  operation op;
  std::string_view name;
  role needed;
};

inline constexpr permission permissions[] = {
    {operation::find, "find", role::test},
    {operation::player_write, "player_write", role::test},
    {operation::async_read, "async_read", role::view},
    {operation::ticket_create, "ticket_create", role::test},
    {operation::ticket_cancel, "ticket_cancel", role::test},
    {operation::ticket_read, "ticket_read", role::view},
    {operation::queue_read, "queue_read", role::view},
    {operation::backfill_write, "backfill_write", role::test},
    {operation::backfill_read, "backfill_read", role::view},
    {operation::lobby_write, "lobby_write", role::test},
    {operation::lobby_find, "lobby_find", role::test},
    {operation::lobby_read, "lobby_read", role::view},
    {operation::events_read, "events_read", role::view},
};

constexpr const permission& permission_of(operation op) {
  return permissions[static_cast<std::size_t>(op)];
}
constexpr role needed(operation op) {
  return permission_of(op).needed;
}

// The table lists each operation once, in enum order.
constexpr bool permissions_in_order() {
  for (std::size_t i = 0; i < std::size(permissions); ++i)
    if (static_cast<std::size_t>(permissions[i].op) != i) return false;
  return std::size(permissions) == static_cast<std::size_t>(operation::events_read) + 1;
}
static_assert(permissions_in_order());

// The credential an admin acts with on what others own: "" (every one's).
inline std::string acting_credential(const caller_identity& who) {
  return who.granted == role::admin ? std::string() : who.name;
}

}  // namespace mm::actors
