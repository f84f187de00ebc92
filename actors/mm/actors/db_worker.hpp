// The database worker: owns the database connections of one instance (one for
// snapshots and lookups, the scanner's own) and does the blocking work, so the
// instance's thread only applies results. The database is SQLite unless the
// config's opener says otherwise (a server opens PostgreSQL URLs with it). Spawn it detached in a
// server; tests spawn it on the deterministic scheduler instead.
#pragma once

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "mm/engine/player_row.hpp"
#include "mm/storage/player_store.hpp"

namespace mm {

// The CAF inspect functions of the worker's messages (local only: the worker
// never crosses the network).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, player_row& x) {
  return f(caf::meta::type_name("player_row"), x.id, x.mmr, x.attributes, x.payload, x.is_bot,
           x.updated_at_unix_ms);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scan_result& x) {
  return f(caf::meta::type_name("scan_result"), x.rows, x.unreadable, x.reports, x.batches, x.wraps,
           x.seconds);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stored_state& x) {
  return f(caf::meta::type_name("stored_state"), x.persisted_at_unix_ms, x.payload_version,
           x.payload);
}

}  // namespace mm

namespace mm::actors {

using scan_atom = caf::atom_constant<caf::atom("scan")>;
using save_atom = caf::atom_constant<caf::atom("save")>;
using load_atom = caf::atom_constant<caf::atom("load")>;
using set_aside_atom = caf::atom_constant<caf::atom("setaside")>;
using fetch_atom = caf::atom_constant<caf::atom("fetch")>;
using sample_atom = caf::atom_constant<caf::atom("sample")>;

// The database worker: blocking database work on its own thread.
using db_worker = caf::typed_actor<
    // Read about `fetch` rows in batches of `batch` through the scan pointers.
    caf::replies_to<scan_atom, std::uint32_t, std::uint32_t>::with<scan_result>,
    // Write an instance's snapshot in one transaction; replies its size.
    caf::replies_to<save_atom, std::string, stored_state>::with<std::uint64_t>,
    // Read an instance's snapshot: (found, state).
    caf::replies_to<load_atom, std::string>::with<bool, stored_state>,
    // Move an instance's snapshot to matchmaker_state_rejected with a reason.
    caf::replies_to<set_aside_atom, std::string, std::string, std::int64_t>::with<bool>,
    // Read one player row: (found, row).
    caf::replies_to<fetch_atom, player_id>::with<bool, player_row>,
    // About N rows spread over the whole table (the sizing sample of a cold start).
    caf::replies_to<sample_atom, std::uint32_t>::with<scan_result>>;

struct db_worker_config {
  std::string path;  // the SQLite file, or what `open` opens
  // Opens `path` (a connection per call); empty: a SQLite file.
  store_opener open;
  std::string scan_source = "players";  // table or view the scan reads
  std::uint64_t seed = 0;               // of the scan pointers; 0: drawn from the system
  int busy_timeout_ms = 5000;
  std::uint32_t shard_count = 1;  // scan only ids with id mod shard_count ==
  std::uint32_t shard_index = 0;  // shard_index (the instance's share of a set)
  // A node of a cluster: the lease the snapshot writes are fenced by
  // (player_store::set_write_fence); empty: not fenced.
  write_fence fence;
};

struct db_worker_state {
  // Not an aggregate: CAF would otherwise build the state from the actor pointer.
  db_worker_state() = default;
  db_worker_config config;
  std::uint64_t seed = 0;                // of the scan pointers and the sample (never 0)
  std::unique_ptr<player_store> db;      // opened on first use, reopened after errors
  std::unique_ptr<row_scanner> scanner;  // likewise
  static inline const char* name = "mm.db_worker";
};

db_worker::behavior_type db_worker_actor(db_worker::stateful_pointer<db_worker_state> self,
                                         db_worker_config config);

}  // namespace mm::actors
