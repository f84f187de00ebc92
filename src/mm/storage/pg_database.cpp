#include "mm/storage/pg_database.hpp"

#include <algorithm>
#include <stdexcept>

#include "mm/storage/player_store.hpp"

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer's built-in suppressions for the programs that use PostgreSQL.
// libpqxx 6.4 (Debian 12) leaks the PGresult of a statement whose connection
// breaks under it, before a pqxx::result owns what libpq made (216 bytes and
// its 2 KiB block per broken statement; seen about once in 15 ASan runs of
// the test that cuts a node's link to the database). The leak's stack often
// ends inside libpqxx, built without frame pointers, before any function
// name: a libpqxx function's name did not match it. So the pattern is libpq
// itself: memory libpq allocated that nobody freed. This code never calls
// libpq directly, and what it allocates itself (a leaked pqxx::connection,
// say) is allocated outside libpq and still reported.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpq.so\n";
}
#endif

namespace mm {

namespace {

// One key for "a matchmaker migrates this database" (an arbitrary constant:
// "mm schema" in ASCII), held for the migrating transaction only.
constexpr long long migration_lock = 0x6d6d20736368656dLL;

pqxx::connection connect(const std::string& url, const std::string& where) {
  try {
    return pqxx::connection(url);
  } catch (const pqxx::failure& e) {
    throw store_error("cannot connect to PostgreSQL database '" + where + "': " + e.what());
  } catch (const std::invalid_argument& e) {  // libpq's URL parser
    throw store_error("'" + where + "' is not a PostgreSQL URL: " + e.what());
  }
}

}  // namespace

const std::vector<migration>& postgres_migrations() {
  static const std::vector<migration> all =
      numbered_migrations(postgres_schema_files(), "schema/postgresql");
  return all;
}

pqxx::connection& pg_database::sql() {
  // libpqxx 6.4 restores a broken connection when a statement runs on it,
  // but a transaction's constructor asks the connection's encoding first,
  // which fails on a broken one ("Could not obtain client encoding: not
  // connected"): without this, a connection that broke once (PostgreSQL
  // restarted) failed every later call of its store for good. activate() is
  // the restore itself; libpqxx 7 drops it (and the automatic restore).
  if (!connection_.is_open()) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    connection_.activate();
#pragma GCC diagnostic pop
  }
  return connection_;
}

int pg_database::latest_schema_version() {
  return postgres_migrations().back().version;
}

pg_database::pg_database(const std::string& url)
    : where_(redacted_url(url)), connection_(connect(url, where_)) {
  migrate();
}

void pg_database::migrate() {
  const int latest = latest_schema_version();
  try {
    // Every connection a node opens comes here, while others may be paused
    // (SIGSTOP) or cut off: a database already at this build's version is
    // read without the lock, so a stalled node inside a migration cannot hold
    // the others' connections (a takeover's among them) back.
    {
      pqxx::nontransaction peek(connection_);
      if (!peek.exec1("SELECT to_regclass('schema_migrations') IS NULL")[0].as<bool>())
        version_ =
            peek.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0].as<int>();
    }
    if (version_ == latest) return;
    pqxx::work tx(connection_);
    // A migrator that stops between statements ends its transaction (and
    // frees the lock) after a minute instead of never.
    tx.exec0("SET LOCAL idle_in_transaction_session_timeout = '60s'");
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", migration_lock);
    tx.exec0(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
    version_ = tx.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0].as<int>();
    if (version_ > latest)
      throw store_error("PostgreSQL database '" + where_ + "' has schema version " +
                        std::to_string(version_) + ", newer than this build's " +
                        std::to_string(latest) +
                        ": run a newer matchmaker on it, or point this one at another database");
    // PostgreSQL's DDL is transactional: every migration and its record
    // commit together, or none does.
    for (const migration& m : postgres_migrations()) {
      if (m.version <= version_) continue;
      tx.exec0(std::string(m.sql));
      tx.exec_params0("INSERT INTO schema_migrations VALUES ($1, $2, $3)", m.version,
                      std::string(m.name), unix_ms_now());
    }
    tx.commit();
    version_ = std::max(version_, latest);
  } catch (const pqxx::failure& e) {
    throw store_error("cannot migrate PostgreSQL database '" + where_ + "' to schema version " +
                      std::to_string(latest) + ": " + e.what());
  }
}

}  // namespace mm
