#include "mm/storage/database.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "mm/storage/migrations.hpp"

namespace mm {

namespace {
int open_flags(const database_options& o) {
  return (o.read_only ? SQLite::OPEN_READONLY : SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) |
         (o.single_thread ? SQLite::OPEN_NOMUTEX : 0);
}

// Turning a new file to WAL needs it alone for a moment: while another
// connection is opening the same new file, SQLite answers SQLITE_BUSY at once,
// without its busy handler. Tried again every millisecond within the busy
// timeout, as the handler would.
void use_wal(SQLite::Database& db, int busy_timeout_ms) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  for (;;) {
    try {
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (const SQLite::Exception& e) {
      if (e.getErrorCode() != SQLITE_BUSY || std::chrono::steady_clock::now() >= give_up) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

SQLite::Database open(const std::string& path, const database_options& o) {
  try {
    return SQLite::Database(path, open_flags(o), o.busy_timeout_ms);
  } catch (const SQLite::Exception& e) {
    throw store_error("cannot open database '" + path + "': " + e.what());
  }
}
}  // namespace

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<migration> numbered_migrations(
    const std::vector<std::pair<std::string_view, std::string_view>>& files,
    const std::string& dir) {
  std::vector<migration> out;
  for (const auto& [name, sql] : files) {
    int version = 0;
    const auto digits = name.substr(0, 3);
    const bool numbered = name.size() > 4 && name[3] == '_' &&
                          digits.find_first_not_of("0123456789") == std::string_view::npos;
    if (numbered) version = std::stoi(std::string(digits));
    if (!numbered || version != static_cast<int>(out.size()) + 1)
      throw std::logic_error(dir + "/" + std::string(name) + ": expected migration " +
                             std::to_string(out.size() + 1) + " next, named NNN_name.sql");
    out.push_back({version, name, sql});
  }
  return out;
}

const std::vector<migration>& migrations() {
  static const std::vector<migration> all = numbered_migrations(schema_files(), "schema");
  return all;
}

int database::latest_schema_version() {
  return migrations().back().version;
}

database::database(const std::string& path, database_options o) : path_(path), db_(open(path, o)) {
  try {
    if (!o.read_only) {
      use_wal(db_, o.busy_timeout_ms);
      // FULL: a committed transaction survives a power cut, not only a crash.
      db_.exec("PRAGMA synchronous = FULL");
    }
    db_.exec("PRAGMA foreign_keys = ON");
    // Pages read through a shared memory map rather than copied by read(),
    // and up to 16 MiB of them cached per connection (SQLite's default, 2 MiB,
    // made the ticket journal's writer re-read its tables' pages under load).
    db_.exec("PRAGMA mmap_size = 268435456");
    db_.exec("PRAGMA cache_size = -16384");
    version_ = read_version();
  } catch (const SQLite::Exception& e) {
    throw store_error("cannot use database '" + path + "': " + e.what());
  }
  if (version_ > latest_schema_version())
    throw store_error("database '" + path + "' has schema version " + std::to_string(version_) +
                      ", newer than this build's " + std::to_string(latest_schema_version()) +
                      ": run a newer matchmaker on it, or point this one at another file");
  if (!o.read_only && version_ < latest_schema_version()) migrate();
}

std::optional<std::string> database::integrity_problem() {
  try {
    SQLite::Statement q(db_, "PRAGMA quick_check(1)");
    if (!q.executeStep()) return "quick_check returned nothing";
    const std::string verdict = q.getColumn(0).getString();
    if (verdict == "ok") return std::nullopt;
    return verdict;
  } catch (const SQLite::Exception& e) {
    return std::string(e.what());
  }
}

int database::read_version() {
  if (!db_.tableExists("schema_migrations")) return 0;
  SQLite::Statement q(db_, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  q.executeStep();
  return q.getColumn(0).getInt();
}

void database::migrate() {
  try {
    db_.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    for (const migration& m : migrations()) {
      if (m.version <= version_) continue;
      // Each migration and its record commit together, or not at all.
      SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
      // Another connection may have applied it since this one read the
      // version (two processes opening a new file at once): read it again
      // under the write lock, which is held from here to the commit.
      version_ = read_version();
      if (m.version <= version_) continue;  // the transaction ends unused
      db_.exec(std::string(m.sql));
      SQLite::Statement rec(db_, "INSERT INTO schema_migrations VALUES (?, ?, ?)");
      rec.bind(1, m.version);
      rec.bind(2, std::string(m.name));
      rec.bind(3, static_cast<int64_t>(unix_ms_now()));
      rec.exec();
      tx.commit();
      version_ = m.version;
    }
  } catch (const SQLite::Exception& e) {
    throw store_error("cannot migrate database '" + path_ + "' to schema version " +
                      std::to_string(version_ + 1) + ": " + e.what());
  }
}

}  // namespace mm
