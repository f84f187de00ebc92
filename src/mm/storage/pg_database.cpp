#include "mm/storage/pg_database.hpp"

#include <algorithm>
#include <stdexcept>

#include "mm/storage/player_store.hpp"

namespace mm {

namespace {

// One key for "a matchmaker migrates this database" (an arbitrary constant:
// "mm schema" in ASCII), held for the migrating transaction only.
constexpr long long migration_lock = 0x6d6d20736368656dLL;

}  // namespace

const std::vector<migration>& postgres_migrations() {
  static const std::vector<migration> all =
      numbered_migrations(postgres_schema_files(), "schema/postgresql");
  return all;
}

int pg_database::latest_schema_version() {
  return postgres_migrations().back().version;
}

pg_database::pg_database(const std::string& url, std::chrono::milliseconds io_timeout)
    : where_(redacted_url(url)),
      connection_(pg::with_client_limits(url, io_timeout), io_timeout,
                  pg::server_limits(io_timeout)) {
  try {
    connection_.open();
  } catch (const pg::failure& e) {
    throw store_error("cannot connect to PostgreSQL database '" + where_ + "': " + e.what());
  }
  migrate();
}

void pg_database::migrate() {
  const int latest = latest_schema_version();
  try {
    // Every connection a node opens comes here, while others may be paused
    // (SIGSTOP) or cut off: a database already at this build's version is
    // read without the lock, so a stalled node inside a migration cannot hold
    // the others' connections (a takeover's among them) back.
    if (!connection_.exec("SELECT to_regclass('schema_migrations') IS NULL").boolean(0, 0))
      version_ = static_cast<int>(
          connection_.exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").int64(0, 0));
    if (version_ == latest) return;
    // A migration may rewrite a large table: its statements get ten minutes
    // each, on both sides, where the stores' calls get `io_timeout`.
    pg::longer_calls longer(connection_, std::chrono::minutes(10));
    pg::transaction tx(connection_);
    tx.exec("SET LOCAL statement_timeout = '10min'");
    // A migrator that stops between statements ends its transaction (and
    // frees the lock) after a minute instead of never.
    tx.exec("SET LOCAL idle_in_transaction_session_timeout = '60s'");
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", static_cast<std::int64_t>(migration_lock));
    tx.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
    version_ = static_cast<int>(
        tx.exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").int64(0, 0));
    if (version_ > latest)
      throw store_error("PostgreSQL database '" + where_ + "' has schema version " +
                        std::to_string(version_) + ", newer than this build's " +
                        std::to_string(latest) +
                        ": run a newer matchmaker on it, or point this one at another database");
    // PostgreSQL's DDL is transactional: every migration and its record
    // commit together, or none does.
    for (const migration& m : postgres_migrations()) {
      if (m.version <= version_) continue;
      tx.exec(m.sql);
      tx.exec_params("INSERT INTO schema_migrations VALUES ($1, $2, $3)", m.version,
                     std::string(m.name), unix_ms_now());
    }
    tx.commit();
    version_ = std::max(version_, latest);
  } catch (const pg::failure& e) {
    throw store_error("cannot migrate PostgreSQL database '" + where_ + "' to schema version " +
                      std::to_string(latest) + ": " + e.what());
  }
}

}  // namespace mm
