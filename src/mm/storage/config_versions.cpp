#include "mm/storage/config_versions.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>

namespace mm {

namespace {

constexpr const char* columns =
    "SELECT scope, version, document, author, created_unix_ms, comment "
    "FROM config_versions WHERE scope = ? ORDER BY version DESC";

config_version read_version(SQLite::Statement& q) {
  return {q.getColumn(0).getString(), q.getColumn(1).getInt64(), q.getColumn(2).getString(),
          q.getColumn(3).getString(), q.getColumn(4).getInt64(), q.getColumn(5).getString()};
}

}  // namespace

std::optional<config_version> latest_config_version(database& db, const std::string& scope) {
  const auto list = config_versions(db, scope, 1);
  if (list.empty()) return std::nullopt;
  return list.front();
}

std::vector<config_version> config_versions(database& db, const std::string& scope,
                                            std::size_t limit) {
  return db.guarded("read the configuration's versions", [&] {
    std::vector<config_version> out;
    SQLite::Statement q(db.sql(), std::string(columns) + " LIMIT ?");
    q.bind(1, scope);
    q.bind(2, static_cast<int64_t>(std::min(limit, max_config_versions_listed)));
    while (q.executeStep()) out.push_back(read_version(q));
    return out;
  });
}

bool append_config_version(database& db, const config_version& v) {
  return db.guarded("write a configuration version", [&] {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement latest(
        db.sql(), "SELECT COALESCE(MAX(version), 0) FROM config_versions WHERE scope = ?");
    latest.bind(1, v.scope);
    latest.executeStep();
    if (latest.getColumn(0).getInt64() + 1 != v.version) return false;
    SQLite::Statement add(db.sql(),
                          "INSERT INTO config_versions (scope, version, document, author, "
                          "created_unix_ms, comment) VALUES (?, ?, ?, ?, ?, ?)");
    add.bind(1, v.scope);
    add.bind(2, static_cast<int64_t>(v.version));
    add.bind(3, v.document);
    add.bind(4, v.author);
    add.bind(5, static_cast<int64_t>(v.created_unix_ms));
    add.bind(6, v.comment);
    add.exec();
    tx.commit();
    return true;
  });
}

}  // namespace mm
