// Configuration as versioned, live data (docs/operations.md, "Changing the
// configuration while it runs"): one scope each, "sessions" (the session
// queues) and "profile" (the async profile's tunables); config_scopes.hpp
// says what each reads, checks and changes.
//
// Each change is a version in the store (mm/storage/config_versions.hpp):
// the whole document, read and checked by the config file's own readers; who
// applied it, when, and why. The latest version is in force on every node:
// each node looks for a newer one every second (and at once after its own
// change) and puts it in force here (config_scope::apply). A start takes
// the latest.
//
// The config file seeds version 1; a start whose file differs from the last
// version the file gave adds it as a new version by "file" (an edited file
// still takes effect), else the store's latest holds.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "json_codec.hpp"
#include "mm/storage/player_store.hpp"
#include "server_config.hpp"

namespace mm::server {

// The author of the versions the config file gives.
inline constexpr const char* file_author = "file";

// What differs from `from` to `to`: [{"key", "from", "to"}], lists of named
// objects matched by name ("queues.coop.rules.skill.max_difference"); at
// most `limit` entries.
json config_diff(const json& from, const json& to, std::size_t limit = 200);

// One scope's rules.
struct config_scope {
  std::string name;       // the store's scope and the routes' segment
  std::string component;  // of its log lines
  std::string file_keys;  // the config file's keys it covers, for the log
  json file_document;     // what the config file gives
  // The document read and checked as the config file's keys are, in its
  // full form. Throws config_error naming the key.
  std::function<json(const json& document)> read;
  // What a change from `now` to `next` would do besides its diff, as keys
  // of the answer ({"stranded": ...} refuses the change unless forced when
  // its "tickets" is not 0). `store` is the scope's own connection.
  std::function<json(const json& now, const json& next, player_store& store)> assess;
  // Puts version `version` in force on this node, `before` the document it
  // replaces: what changed here, as keys of the answer. Throws what refused.
  std::function<json(std::int64_t version, const json& before, const json& next)> apply;
};

// A refused change: 409, with what it would strand.
struct stranding_refused {
  json stranded;
};

class live_config {
 public:
  // Seeds or follows the store (see above) and puts its latest in force.
  // Throws what the store throws.
  live_config(const server_config& c, config_scope scope);
  ~live_config();

  // Starts following the store (every `poll_every`).
  void follow(std::chrono::milliseconds poll_every = std::chrono::seconds(1));

  // The version in force in the store, and the one this node applied.
  json current();
  json history(std::size_t limit);
  // A candidate's diff and assessment; throws config_error naming the key.
  json check(const json& document);
  // Adds the candidate as the next version and applies it here at once:
  // {"version", "unchanged", "diff", ...assessment, ...what changed}. Throws
  // config_error, stranding_refused (unless `force`), or mm::error(conflict)
  // when `base_version` is given and is not the latest (or another writer
  // came first).
  json apply(const json& document, const std::string& author, const std::string& comment,
             bool force, std::optional<std::int64_t> base_version);
  // Applies an earlier version's document again, as a new version.
  json rollback(std::int64_t version, const std::string& author, const std::string& comment,
                bool force);
  std::int64_t applied_version() const;
  // The document of the applied version (the file's before any).
  json applied_document() const;
  const std::string& scope() const { return scope_.name; }

 private:
  // Applies the store's latest when newer than the applied one: what
  // changed here (empty when nothing was newer).
  json adopt_latest();
  void seed_from_file();

  config_scope scope_;
  std::unique_ptr<player_store> store_;  // a connection of its own
  std::mutex store_mutex_;               // the connection, and the order of adoptions
  std::int64_t applied_ = 0;
  json applied_document_;
  mutable std::mutex state_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread follower_;
};

}  // namespace mm::server
