#include "mm/actors/db_worker.hpp"

#include <random>

#include "mm/actors/errors.hpp"

namespace mm::actors {

namespace {
// The reply for a failed database call: its own cause when it is one of the
// project's errors (the storage library wraps SQLite's), else a database error.
caf::error database_error(const std::exception& e) {
  if (const auto* known = dynamic_cast<const error*>(&e))
    return make_error(known->code(), e.what());
  return make_error(errc::database, e.what());
}

std::unique_ptr<player_store> open_store(const db_worker_config& c) {
  std::unique_ptr<player_store> s =
      c.open ? c.open(c.path)
             : std::make_unique<sqlite_store>(c.path, database_options{c.busy_timeout_ms});
  if (!c.fence.empty()) s->set_write_fence(c.fence);
  return s;
}

// Runs f against the open database; a failure becomes an error reply and drops
// the connection, so the next request opens it afresh (a file that was locked
// or missing, or a server that restarted, may be usable again).
template <class F>
auto with_db(db_worker::stateful_pointer<db_worker_state> self, F f)
    -> decltype(f(std::declval<player_store&>())) {
  auto& st = self->state;
  try {
    if (!st.db) st.db = open_store(st.config);
    return f(*st.db);
  } catch (const std::exception& e) {
    st.db.reset();
    return database_error(e);
  }
}

// Runs f against the scanner (opened on first use); a failure becomes an error
// reply and drops the scanner, so the next request opens it afresh.
template <class F>
caf::result<scan_result> with_scanner(db_worker::stateful_pointer<db_worker_state> self, F f) {
  auto& st = self->state;
  try {
    if (!st.scanner) {
      // The scanner has a connection of its own; the store that opens it is
      // the worker's, opened first if need be.
      if (!st.db) st.db = open_store(st.config);
      st.scanner = st.db->open_scanner(
          {st.config.scan_source, st.seed, st.config.shard_count, st.config.shard_index});
    }
    return f(*st.scanner);
  } catch (const std::exception& e) {
    st.scanner.reset();
    return database_error(e);
  }
}
}  // namespace

db_worker::behavior_type db_worker_actor(db_worker::stateful_pointer<db_worker_state> self,
                                         db_worker_config config) {
  self->state.config = std::move(config);
  self->state.seed = self->state.config.seed ? self->state.config.seed : std::random_device{}();
  return {
      [=](scan_atom, std::uint32_t fetch, std::uint32_t batch) -> caf::result<scan_result> {
        return with_scanner(self, [&](row_scanner& s) { return s.scan(fetch, batch); });
      },
      [=](sample_atom, std::uint32_t wanted) -> caf::result<scan_result> {
        return with_scanner(self,
                            [&](row_scanner& s) { return s.sample(wanted, self->state.seed); });
      },
      [=](save_atom, const std::string& id, const stored_state& s) -> caf::result<std::uint64_t> {
        return with_db(self, [&](player_store& db) -> caf::result<std::uint64_t> {
          db.write_state(id, s);
          return static_cast<std::uint64_t>(s.payload.size());
        });
      },
      [=](load_atom, const std::string& id) -> caf::result<bool, stored_state> {
        return with_db(self, [&](player_store& db) -> caf::result<bool, stored_state> {
          auto s = db.read_state(id);
          if (!s) return {false, stored_state{}};
          return {true, std::move(*s)};
        });
      },
      [=](set_aside_atom, const std::string& id, const std::string& reason,
          std::int64_t now) -> caf::result<bool> {
        return with_db(self, [&](player_store& db) -> caf::result<bool> {
          db.set_aside_state(id, reason, now);
          return true;
        });
      },
      [=](fetch_atom, player_id id) -> caf::result<bool, player_row> {
        return with_db(self, [&](player_store& db) -> caf::result<bool, player_row> {
          auto row = db.find_player(id);
          if (!row) return {false, player_row{}};
          return {true, std::move(*row)};
        });
      },
  };
}

}  // namespace mm::actors
