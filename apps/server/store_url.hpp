// The player store a server is configured with: PostgreSQL when database.url
// is set (and this build has libpqxx), else the SQLite file database.path.
#pragma once

#include <chrono>
#include <memory>

#include "mm/storage/player_store.hpp"
#include "server_config.hpp"

namespace mm::server {

// Whether this build can open PostgreSQL URLs.
bool postgres_built();

// Where the configured store is: the URL (with its password) or the file.
const std::string& store_location(const server_config& c);

// Opens `where`, a PostgreSQL URL (each call bounded by `io_timeout`) or a
// SQLite file. Throws store_error, or config_error for a URL this build
// cannot open.
std::unique_ptr<player_store> open_store_at(const std::string& where,
                                            std::chrono::milliseconds io_timeout);

// A connection to the configured store (each call opens one).
std::unique_ptr<player_store> open_configured_store(const server_config& c);

}  // namespace mm::server
