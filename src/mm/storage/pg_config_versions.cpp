// The configuration's versions on PostgreSQL: the same rows and meaning as
// on SQLite (config_versions.cpp). Two nodes adding the same version number
// at once: the primary key lets one in, the other writes nothing.
#include <algorithm>

#include "mm/storage/pg_store.hpp"

namespace mm {

std::optional<config_version> pg_store::latest_config(const std::string& scope) {
  const auto list = config_history(scope, 1);
  if (list.empty()) return std::nullopt;
  return list.front();
}

std::vector<config_version> pg_store::config_history(const std::string& scope, std::size_t limit) {
  return pg_guarded(db_, "read the configuration's versions", [&] {
    std::vector<config_version> out;
    const auto r = db_.sql().exec_params(
        "SELECT scope, version, document, author, created_unix_ms, comment "
        "FROM config_versions WHERE scope = $1 ORDER BY version DESC LIMIT $2",
        scope, static_cast<std::int64_t>(std::min(limit, max_config_versions_listed)));
    for (std::size_t i = 0; i < r.size(); ++i)
      out.push_back(
          {r.text(i, 0), r.int64(i, 1), r.text(i, 2), r.text(i, 3), r.int64(i, 4), r.text(i, 5)});
    return out;
  });
}

bool pg_store::append_config(const config_version& v) {
  return pg_guarded(db_, "write a configuration version", [&] {
    pg::transaction tx(db_.sql());
    const auto latest =
        tx.exec_params("SELECT COALESCE(MAX(version), 0) FROM config_versions WHERE scope = $1",
                       v.scope)
            .int64(0, 0);
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
