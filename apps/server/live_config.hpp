// The session queues' configuration as versioned, live data
// (docs/operations.md, "Changing the configuration while it runs").
//
// Each change is a version in the store (mm/storage/config_versions.hpp,
// scope "sessions"): the whole document {"queues": [...]}, read by the same
// reader and checks as the config file's sessions.queues; who applied it,
// when, and why. The latest version is in force on every node: each node
// looks for a newer one every second (and at once after its own change),
// and the node serving the session queues hands it to them (their next tick
// runs it: mm/actors/session_reconfigure.hpp). A start takes the latest.
//
// The config file seeds version 1; a start whose file's queues differ from
// the last version the file gave adds them as a new version by "file" (an
// edited file still takes effect), else the store's latest holds.
//
// A change that would strand waiting tickets (a ticket that no longer fits
// its queue fails; a queue no longer configured is closed with its tickets
// in it) is counted from the journal and refused unless forced.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "json_codec.hpp"
#include "mm/session/queue_config.hpp"
#include "mm/storage/player_store.hpp"
#include "server_config.hpp"

namespace mm::server {

inline constexpr const char* sessions_scope = "sessions";

// The document of a set of queues: {"queues": [...]}.
json sessions_document(const std::vector<session::queue_config>& queues);
// The queues of a document, read and checked as the config file's are
// against the rest of `base`'s settings. Throws config_error naming the key.
std::vector<session::queue_config> read_sessions_document(const session_settings& base,
                                                          const json& document);
// What differs from `from` to `to`: [{"key", "from", "to"}], lists of named
// objects matched by name ("queues.coop.rules.skill.max_difference"); at
// most `limit` entries.
json config_diff(const json& from, const json& to, std::size_t limit = 200);

// The waiting tickets a change would strand: {"tickets": n, "queues": {name:
// {"no_longer_fit": n, "closed": n}}} (queues with none left out).
json count_stranded(const session_settings& base, const std::vector<session::queue_config>& now,
                    const std::vector<session::queue_config>& next, player_store& store,
                    const std::string& service_name);

// A refused change: 409, with what it would strand.
struct stranding_refused {
  json stranded;
};

class live_config {
 public:
  // Hands a version's queues to the session service of this node (running
  // or not): the number of running queues that changed. Throws mm::error.
  using apply_fn =
      std::function<std::uint32_t(std::int64_t version, const std::vector<session::queue_config>&)>;

  // Seeds or follows the store (see above); `service_name` is the session
  // service's, for the journal the stranding count reads. Throws what the
  // store throws.
  live_config(const server_config& c, std::string service_name, apply_fn apply);
  ~live_config();

  // Starts following the store (every `poll_every`).
  void follow(std::chrono::milliseconds poll_every = std::chrono::seconds(1));

  // The version in force in the store, and the one this node applied.
  json current();
  json history(std::size_t limit);
  // A candidate's diff and stranding; throws config_error naming the key.
  json check(const json& document);
  // Adds the candidate as the next version and applies it here at once:
  // {"version", "diff", "stranded", "queues_changed"}. Throws config_error,
  // stranding_refused (unless `force`), or mm::error(conflict) when
  // `base_version` is given and is not the latest (or another writer came
  // first).
  json apply(const json& document, const std::string& author, const std::string& comment,
             bool force, std::optional<std::int64_t> base_version);
  // Applies an earlier version's document again, as a new version.
  json rollback(std::int64_t version, const std::string& author, const std::string& comment,
                bool force);
  std::int64_t applied_version() const;
  // The queues of the applied version.
  std::vector<session::queue_config> queues_in_force();

 private:
  // Applies the store's latest when newer than the applied one; the queues
  // changed (0 when nothing was newer).
  std::uint32_t adopt_latest();
  void seed_from_file();

  const server_config& config_;
  std::string service_name_;
  apply_fn apply_;
  std::unique_ptr<player_store> store_;  // a connection of its own
  std::mutex store_mutex_;               // the connection, and the order of adoptions
  std::int64_t applied_ = 0;
  std::vector<session::queue_config> applied_queues_;
  mutable std::mutex state_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread follower_;
};

}  // namespace mm::server
