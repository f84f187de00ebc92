// The session matchmaker's state across a graceful restart (docs/session.md,
// Persistence): the waiting tickets and running lobbies a server held when it
// stopped, written in one transaction that replaces whatever that server
// wrote before, and taken back (read and deleted, in one transaction) when it
// starts. Rows are keyed by the writing server's name, so cluster nodes that
// share a database take back only their own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mm/storage/database.hpp"

namespace mm {

struct stored_session_ticket {
  std::uint64_t id = 0;  // below 2^63
  std::string queue;
  std::int64_t created_unix_ms = 0;
  std::string ticket;  // its JSON, as the HTTP API takes it
};

struct stored_lobby {
  std::string id, mode, datacenter;
  std::uint32_t max_players = 0, players = 0;
  bool created_by_find = false;
  std::string owner;  // the identity that registered it ("": unknown, an admin's to change)
};

struct session_state_rows {
  std::vector<stored_session_ticket> tickets;  // by id
  std::vector<stored_lobby> lobbies;           // by id
};

void write_session_state(database& db, const std::string& service, const session_state_rows& s,
                         std::int64_t now_unix_ms);
session_state_rows take_session_state(database& db, const std::string& service);

}  // namespace mm
