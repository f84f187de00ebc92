// The versions of the configuration changed while the server runs (schema
// version 8): per scope ("sessions", "profile"), version 1, 2, 3..., each a
// whole JSON document with who applied it, when and why. Versions are only
// ever added: the latest is in force, and a rollback is a new version that
// repeats an older document. Two writers who both read version N and try to
// add N + 1 cannot both succeed: the second is told so and writes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mm/storage/database.hpp"

namespace mm {

struct config_version {
  std::string scope;
  std::int64_t version = 0;  // 1 for a scope's first
  std::string document;      // JSON text
  std::string author;        // an identity's name; "file" for what a config file seeded
  std::int64_t created_unix_ms = 0;
  std::string comment;
};

// At most this many versions of a scope are listed at once.
inline constexpr std::size_t max_config_versions_listed = 1000;

std::optional<config_version> latest_config_version(database& db, const std::string& scope);
// Newest first, at most min(limit, max_config_versions_listed).
std::vector<config_version> config_versions(database& db, const std::string& scope,
                                            std::size_t limit);
// Adds `v` when `v.version` is the scope's latest + 1 (1 for a new scope);
// false, writing nothing, when it is not (another writer came first).
bool append_config_version(database& db, const config_version& v);

}  // namespace mm
