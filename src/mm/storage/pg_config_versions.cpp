// The configuration's versions on PostgreSQL: the same rows and meaning as
// on SQLite (config_versions.cpp). Two nodes adding the same version number
// at once: the primary key lets one in, the other writes nothing.
#include <algorithm>
#include <pqxx/pqxx>

#include "mm/storage/pg_store.hpp"

namespace mm {

std::optional<config_version> pg_store::latest_config(const std::string& scope) {
  const auto list = config_history(scope, 1);
  if (list.empty()) return std::nullopt;
  return list.front();
}

std::vector<config_version> pg_store::config_history(const std::string& scope, std::size_t limit) {
  return pg_guarded(db_, "read the configuration's versions", [&] {
    pqxx::nontransaction tx(db_.sql());
    std::vector<config_version> out;
    for (const auto& r : tx.exec_params(
             "SELECT scope, version, document, author, created_unix_ms, comment "
             "FROM config_versions WHERE scope = $1 ORDER BY version DESC LIMIT $2",
             scope, static_cast<std::int64_t>(std::min(limit, max_config_versions_listed))))
      out.push_back({r[0].as<std::string>(), r[1].as<std::int64_t>(), r[2].as<std::string>(),
                     r[3].as<std::string>(), r[4].as<std::int64_t>(), r[5].as<std::string>()});
    return out;
  });
}

bool pg_store::append_config(const config_version& v) {
  return pg_guarded(db_, "write a configuration version", [&] {
    pqxx::work tx(db_.sql());
    const auto latest =
        tx.exec_params("SELECT COALESCE(MAX(version), 0) FROM config_versions WHERE scope = $1",
                       v.scope)[0][0]
            .as<std::int64_t>();
    if (latest + 1 != v.version) return false;
    const auto added = tx.exec_params(
        "INSERT INTO config_versions (scope, version, document, author, created_unix_ms, comment) "
        "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
        v.scope, static_cast<std::int64_t>(v.version), v.document, v.author,
        static_cast<std::int64_t>(v.created_unix_ms), v.comment);
    tx.commit();
    return added.affected_rows() == 1;
  });
}

}  // namespace mm
