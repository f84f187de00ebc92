// A matchmaker database on PostgreSQL: the player table and the snapshots
// shared by several matchmakerd nodes. Opened from a libpq URL
// (postgresql://user[:password]@host[:port]/dbname) and migrated to this
// build's schema (schema/postgresql/*.sql, the same versions as SQLite's
// schema/*.sql, compiled in). Nodes that start together migrate once: the
// migrations run in one transaction under an advisory lock. A database whose
// schema is newer than this build is refused, never touched.
//
// Errors are store_error naming the database without its password; libpqxx's
// exceptions never leave the storage library.
#pragma once

#include <exception>
#include <pqxx/pqxx>
#include <string>
#include <utility>
#include <vector>

#include "mm/storage/database.hpp"
#include "mm/storage/migrations.hpp"

namespace mm {

// The PostgreSQL migrations, version 1, 2, 3..., one for each of SQLite's.
const std::vector<migration>& postgres_migrations();

// schema/postgresql/*.sql as (file name, SQL) pairs (cmake/EmbedFiles.cmake).
const std::vector<std::pair<std::string_view, std::string_view>>& postgres_schema_files();

class pg_database;

// Runs `f` on `db`: libpqxx's (and the standard library's) exceptions become
// store_error naming `what` and the database without its password; the
// project's own errors (a refused fence, a store_error) pass as they are.
template <class F>
auto pg_guarded(const pg_database& db, const char* what, F&& f) -> decltype(f());

class pg_database {
 public:
  // Throws store_error when the server cannot be reached, refuses the login,
  // or holds a newer schema.
  explicit pg_database(const std::string& url);

  // The connection, reconnected first when it broke (a database restarted,
  // a link cut): throws pqxx::broken_connection while the server cannot be
  // reached. Its variables (set_variable) and prepared statements are
  // restored with it.
  pqxx::connection& sql();
  // The URL without its password.
  const std::string& where() const { return where_; }
  int schema_version() const { return version_; }
  static int latest_schema_version();

 private:
  void migrate();

  std::string where_;
  pqxx::connection connection_;
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
