// The scopes of the configuration changed while the server runs
// (live_config.hpp; docs/operations.md, "Changing the configuration while it
// runs"):
// - "sessions": {"queues": [...]} as sessions.queues; a change that would
//   strand waiting tickets (one that no longer fits its queue fails; a queue
//   no longer configured is closed with its tickets in it) is counted from
//   the journal and refused unless forced; the session service takes it at
//   its next tick (mm/actors/session_reconfigure.hpp).
// - "profile": {"attributes", "mmr_window", "mmr_window_per_retry",
//   "mmr_window_max"} as profile.* reads them. The attributes' names and
//   order stay (the player table's columns and the API follow them); a
//   change of a rule, a weight or a window is judged from the next query; a
//   change of a bucketing or a tier width rebuilds the buckets (said in the
//   answer as "rebuild": the cache starts over and a scan refills it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "live_config.hpp"
#include "mm/engine/generic_profile.hpp"
#include "mm/session/queue_config.hpp"

namespace mm::server {

// The document of a set of queues: {"queues": [...]}.
json sessions_document(const std::vector<session::queue_config>& queues);
// The queues of a document, read and checked as the config file's are
// against the rest of `base`'s settings. Throws config_error naming the key.
std::vector<session::queue_config> read_sessions_document(const session_settings& base,
                                                          const json& document);
// The waiting tickets a change would strand: {"tickets": n, "queues": {name:
// {"no_longer_fit": n, "closed": n}}} (queues with none left out).
json count_stranded(const session_settings& base, const std::vector<session::queue_config>& now,
                    const std::vector<session::queue_config>& next, player_store& store,
                    const std::string& service_name);

// Puts a version's queues in force on this node: the running queues that changed.
using apply_queues_fn =
    std::function<std::uint32_t(std::int64_t version, const std::vector<session::queue_config>&)>;
config_scope sessions_config_scope(const server_config& c, std::string service_name,
                                   apply_queues_fn apply);

json profile_document(const generic_profile_config& p);
generic_profile_config read_profile_document(const generic_profile_config& base,
                                             const json& document);
// The attributes' keys whose change rebuilds the buckets (bucketing,
// tier_width), as "attributes.NAME.KEY"; empty: none.
std::vector<std::string> rebuild_keys(const generic_profile_config& a,
                                      const generic_profile_config& b);
// Puts a profile in force on this node: the matchmakers that took it.
using apply_profile_fn = std::function<std::uint32_t(const generic_profile_config&, bool rebuild)>;
config_scope profile_config_scope(const server_config& c, apply_profile_fn apply);

}  // namespace mm::server
