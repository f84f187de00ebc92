// matchmakerd as a node of a cluster (docs/operations.md, "Several nodes"):
// the lease agent (mm/cluster/lease_agent.hpp) on a thread of its own, hooked
// to this node's supervisors of the async shards. Every node has a dormant
// supervisor for every shard; the agent starts one when the node takes its
// lease (fenced by the lease's epoch) and stops it, its last snapshot
// written, before the lease is freed; and the session queues ("sessions",
// or "sessions-k" for each partition with sessions.partitions): a
// partition's service started from its journal when the node takes its
// lease, stopped (queues stopped, journal written, lobbies kept) before it
// frees it. The node's serving deadline, shared
// with the supervisors, closes every shard at once when the heartbeat was
// not renewed in time.
#pragma once

#include <caf/actor_system.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "json_codec.hpp"
#include "mm/actors/interface.hpp"
#include "mm/cluster/serving_deadline.hpp"
#include "mm/engine/generic_profile.hpp"
#include "server_config.hpp"
#include "session_host.hpp"

namespace mm::server {

class cluster_node {
 public:
  using supervisor = actors::interfaces<generic_profile>::supervisor;

  // Joins the cluster and starts the agent. `supervisors[i]` stands for
  // shard i of c.cluster_total; the ports are those this node listens on
  // (advertised to the others). Throws when the database cannot be reached,
  // or config_error when this build has no PostgreSQL.
  cluster_node(caf::actor_system& sys, const server_config& c, std::vector<supervisor> supervisors,
               session_host& sessions, std::shared_ptr<cluster::serving_deadline> deadline,
               std::uint16_t http_port, int actor_port);
  // Leaves, as stop() does.
  ~cluster_node();

  // A graceful leave: every shard stopped (its last snapshot written) and
  // every lease freed, so the others take over at once. Idempotent.
  void stop();

  // GET /api/cluster: the nodes, their leases, who owns what, and this
  // node's counts.
  json report() const;
  // Whether this node serves `resource` now: it holds the lease and its
  // serving deadline is open.
  bool serves(const std::string& resource) const;
  // Whether it serves any partition of the session queues.
  bool serves_sessions() const;
  std::uint32_t shards() const;
  // The shards this node serves now, by index of the set.
  std::vector<std::uint32_t> served_shards() const;
  // Where the HTTP API of a resource's owner answers ("http://host:port"),
  // when another live node owns it.
  std::optional<std::string> owner_url(const std::string& resource) const;
  // The same, or else (this node is handing it over) the live node the plan
  // gives it to: where a follower told to leave should go.
  std::optional<std::string> heir_url(const std::string& resource) const;
  // What the plan gives this node that it does not hold (yet), for GET /readyz.
  std::vector<std::string> planned_not_held() const;
  // Takeovers and their durations, for /metrics.
  struct counts {
    std::uint64_t takeovers = 0, takes = 0, releases = 0, lost = 0, renew_failures = 0,
                  database_errors = 0, joins = 0;
    double takeover_seconds_total = 0, last_takeover_seconds = 0;
    std::size_t owned = 0, live_nodes = 0;
    bool serving = false;
  };
  counts metrics() const;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

// The resource name of async shard i: its instance's id, "mm-i".
std::string shard_resource(std::uint32_t i);
// The resource name of the session queues while they are one partition
// (session::partition_resource names each of several).
inline constexpr const char* sessions_resource = "sessions";
// The lease a node must hold to answer the session routes as a whole: the
// queues' one lease; none with partitions, whose requests each go to their
// partition's node (session_api.cpp) and whose events every node follows.
inline std::string session_routes_resource(std::uint32_t partitions) {
  return partitions <= 1 ? sessions_resource : "";
}

}  // namespace mm::server
