// A matchmaker database on PostgreSQL: the player table and the snapshots
// shared by several matchmakerd nodes. Opened from a libpq URL
// (postgresql://user[:password]@host[:port]/dbname) and migrated to this
// build's schema (schema/postgresql/*.sql, the same versions as SQLite's
// schema/*.sql, compiled in). Nodes that start together migrate once: the
// migrations run in one transaction under an advisory lock. A database whose
// schema is newer than this build is refused, never touched.
//
// Every call on its connection is bounded in time on both sides
// (pg_connection.hpp): the client's deadline and the server's limits are
// `io_timeout`, 30 s unless the opener says otherwise.
//
// Errors are store_error naming the database without its password; libpq's
// failures never leave the storage library as they are.
#pragma once

#include <chrono>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "mm/storage/database.hpp"
#include "mm/storage/migrations.hpp"
#include "mm/storage/pg_connection.hpp"

namespace mm {

// The PostgreSQL migrations, version 1, 2, 3..., one for each of SQLite's.
const std::vector<migration>& postgres_migrations();

// schema/postgresql/*.sql as (file name, SQL) pairs (cmake/EmbedFiles.cmake).
const std::vector<std::pair<std::string_view, std::string_view>>& postgres_schema_files();

class pg_database;

// Runs `f` on `db`: pg::failure (and the standard library's exceptions) become
// store_error naming `what` and the database without its password; the
// project's own errors (a refused fence, a store_error) pass as they are.
template <class F>
auto pg_guarded(const pg_database& db, const char* what, F&& f) -> decltype(f());

class pg_database {
 public:
  static constexpr std::chrono::milliseconds default_io_timeout{30'000};

  // Throws store_error when the server cannot be reached, refuses the login,
  // or holds a newer schema.
  explicit pg_database(const std::string& url,
                       std::chrono::milliseconds io_timeout = default_io_timeout);

  // The connection. A call on it after a failure connects again (a database
  // restarted, a link cut), with its settings and prepared statements; while
  // the server cannot be reached each call fails as broken or timed_out.
  pg::connection& sql() { return connection_; }
  // The URL without its password.
  const std::string& where() const { return where_; }
  int schema_version() const { return version_; }
  static int latest_schema_version();

 private:
  void migrate();

  std::string where_;
  pg::connection connection_;
  int version_ = 0;
};

// The same for a database named by `where` (its URL without the password).
template <class F>
auto pg_guarded_at(const std::string& where, const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const mm::error&) {
    throw;
  } catch (const std::exception& e) {
    throw store_error(std::string("cannot ") + what + " in PostgreSQL database '" + where +
                      "': " + e.what());
  }
}

template <class F>
auto pg_guarded(const pg_database& db, const char* what, F&& f) -> decltype(f()) {
  return pg_guarded_at(db.where(), what, std::forward<F>(f));
}

}  // namespace mm
