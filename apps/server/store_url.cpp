#include "store_url.hpp"

#ifdef MM_HAVE_POSTGRES
#include "mm/storage/pg_store.hpp"
#endif

namespace mm::server {

namespace {
bool is_postgres_url(const std::string& where) {
  return where.rfind("postgresql://", 0) == 0 || where.rfind("postgres://", 0) == 0;
}
}  // namespace

bool postgres_built() {
#ifdef MM_HAVE_POSTGRES
  return true;
#else
  return false;
#endif
}

const std::string& store_location(const server_config& c) {
  return c.database_url.empty() ? c.database_path : c.database_url;
}

std::unique_ptr<player_store> open_store_at(const std::string& where,
                                            [[maybe_unused]] std::chrono::milliseconds io_timeout) {
  if (!is_postgres_url(where)) return std::make_unique<sqlite_store>(where);
#ifdef MM_HAVE_POSTGRES
  return std::make_unique<pg_store>(where, io_timeout);
#else
  throw config_error(
      "config key 'database.url': this matchmakerd was built without PostgreSQL "
      "(install libpqxx-dev and build again), so it cannot open '" +
      redacted_url(where) + "'");
#endif
}

std::unique_ptr<player_store> open_configured_store(const server_config& c) {
  return open_store_at(store_location(c), c.store_io_timeout());
}

}  // namespace mm::server
