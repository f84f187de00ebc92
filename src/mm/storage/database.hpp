// A matchmaker SQLite database: opened with WAL, a busy timeout and foreign keys
// on, and migrated to this build's schema (schema/*.sql, compiled in). A file
// whose schema is newer than this build is refused, never touched.
#pragma once

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "mm/engine/error.hpp"

namespace mm {

// The database failed: the message names the file and what was being done.
class store_error : public error {
 public:
  explicit store_error(const std::string& what) : error(errc::database, what) {}
};

struct database_options {
  int busy_timeout_ms = 5000;
  bool read_only = false;  // read-only connections never migrate
  // The connection is only ever used by one thread at a time: SQLite can skip
  // its per-call mutex.
  bool single_thread = false;
};

class database {
 public:
  // Throws store_error with the path and the reason when the file cannot be
  // opened, is not a SQLite database, or has a newer schema.
  explicit database(const std::string& path, database_options o = {});

  SQLite::Database& sql() { return db_; }
  const std::string& path() const { return path_; }
  int schema_version() const { return version_; }
  static int latest_schema_version();

  // SQLite's quick_check (every page and index entry read once, linear in the
  // file's size): the first problem it reports, or nothing when the file is
  // sound. A damaged file opens without error and fails later, so a server
  // checks at start instead of serving an empty cache over it.
  std::optional<std::string> integrity_problem();

  // Runs f; a SQLite exception becomes a store_error saying "cannot <what> in
  // '<path>'": SQLite's exceptions never leave the storage library.
  template <class F>
  auto guarded(const char* what, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const SQLite::Exception& e) {
      throw store_error(std::string("cannot ") + what + " in '" + path_ + "': " + e.what());
    }
  }

 private:
  int read_version();
  void migrate();

  std::string path_;
  SQLite::Database db_;
  int version_ = 0;
};

std::int64_t unix_ms_now();

}  // namespace mm
