// The database worker: owns the SQLite connections of one instance (one for
// snapshots and lookups, the scanner's read-only one) and does the blocking
// work, so the instance's thread only applies results. Spawn it detached in a
// server; tests spawn it on the deterministic scheduler instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "database.hpp"
#include "interface.hpp"
#include "player_scanner.hpp"

namespace mm::actors {

struct db_worker_config {
  std::string path;                    // the SQLite file
  std::string scan_source = "players"; // table or view the scan reads
  std::uint64_t seed = 0;              // of the scan pointers; 0: drawn from the system
  int busy_timeout_ms = 5000;
  std::uint32_t shard_count = 1;  // scan only ids with id mod shard_count ==
  std::uint32_t shard_index = 0;  // shard_index (the instance's share of a set)
};

struct db_worker_state {
  // Not an aggregate: CAF would otherwise build the state from the actor pointer.
  db_worker_state() = default;
  db_worker_config config;
  std::uint64_t seed = 0;                   // of the scan pointers and the sample (never 0)
  std::unique_ptr<database> db;             // opened on first use, reopened after errors
  std::unique_ptr<player_scanner> scanner;  // likewise
  static inline const char* name = "mm.db_worker";
};

db_worker::behavior_type db_worker_actor(db_worker::stateful_pointer<db_worker_state> self,
                                         db_worker_config config);

}  // namespace mm::actors
