// matchmakerd's parts and their lifetimes, in one object: each member is
// declared in the order it starts (the store, the actor system, the async
// instances, the session service, the actor port, the demo's traffic, the
// HTTP API, the cluster node), so that whoever changes a part while the
// server runs (a token list, a queue's rules) finds its single owner here.
// The stop goes the other way round, with the exceptions stop() names.
#pragma once

#include <caf/all.hpp>
#include <memory>
#include <mutex>
#include <optional>

#include "cluster_node.hpp"
#include "config_scopes.hpp"
#include "dry_run.hpp"
#include "http_api.hpp"
#include "live_config.hpp"
#include "mm/actors/admin_bridge.hpp"
#include "mm/actors/game_front.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/actors/query_bridge.hpp"
#include "mm/actors/remote.hpp"
#include "mm/actors/session_bridge.hpp"
#include "mm/session/partitions.hpp"
#include "query_recording.hpp"
#include "resp_commands.hpp"
#include "resp_server.hpp"
#include "server_config.hpp"
#include "session_host.hpp"

namespace mm::server {

class server_process {
 public:
  using profile = generic_profile;
  using iface = actors::interfaces<profile>;

  // Opens the store (the demo's players written into an empty one), the
  // recordings, the actor system, the async instances and the session
  // service (started on a server alone). Throws what cannot be opened.
  explicit server_process(const server_config& c);
  // Stops what runs (stop()).
  ~server_process();
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  // Opens the doors: the actor port, the demo's traffic, the HTTP API and,
  // in a cluster, the node's membership. Prints why and returns false when
  // one cannot open; what started is stopped again.
  bool open();
  // Long-polls answered, the HTTP API closed, the cluster's leases handed
  // over, the actor port closed, the sessions saved (every ticket is durable
  // already; the lobbies are kept), then every instance writes its snapshot.
  // Idempotent.
  void stop();
  // Reads the config file's tokens again and puts them in force at every
  // door (server_config.hpp, reread_tokens); answers the names and roles
  // now in force. Throws config_error naming the key, the old tokens kept.
  json reload_tokens();

 private:
  void stop_actors();
  // Puts a profile in force in every matchmaker here (config_scopes.hpp).
  std::uint32_t apply_profile(const generic_profile_config& p, bool rebuild);
  void add_readiness_checks();

  const server_config& config_;
  std::unique_ptr<player_store> db_;
  // The profile's configuration versions, followed in the store: before
  // the instances, which start with the latest.
  std::optional<live_config> live_profile_;
  std::shared_ptr<ticket_recording> recording_;
  std::shared_ptr<query_recording> query_recording_;
  caf::actor_system_config actor_config_;
  caf::actor_system sys_;
  caf::scoped_actor self_;
  // The async half: the instances (each a supervisor; in a cluster a dormant
  // one per shard, run while the lease is held), the engines they share with
  // the query bridge, the routing client and the bridges of the HTTP API.
  std::shared_ptr<cluster::serving_deadline> deadline_;  // in a cluster only
  std::shared_ptr<actors::engine_slots<profile>> slots_;
  std::vector<iface::matchmaker> set_;
  iface::routing_client client_;
  std::optional<actors::admin_bridge<profile>> bridge_;
  std::optional<actors::query_bridge<profile>> queries_;
  // The session half.
  std::shared_ptr<actors::ticket_event_feed> events_;
  std::optional<session_host> sessions_;
  // The session queues' configuration versions, followed in the store.
  std::optional<live_config> live_sessions_;
  // Candidates replayed on the recording before they are applied.
  std::optional<dry_runner> dry_run_;
  // Who the callers are, at every door (mm/actors/identity.hpp); its tokens
  // are replaced by reload_tokens.
  std::shared_ptr<actors::identity_book> identities_;
  // The actor port, and the cluster node it asks what is served here.
  std::shared_ptr<std::atomic<const cluster_node*>> cluster_ref_;
  actors::game_front_actor<profile> front_;
  std::unique_ptr<actors::published_port> actor_port_;
  // The demo's own traffic.
  caf::actor query_load_;
  caf::actor session_load_;
  // The HTTP API, and what GET /readyz checks.
  std::unique_ptr<player_store> read_db_;
  std::optional<actors::session_bridge> session_bridge_;
  std::optional<http_context> http_context_;
  readiness_probe readiness_;
  std::unique_ptr<http_server> http_;
  // The RESP port (resp.port): the same routes as http_, by command names.
  std::unique_ptr<resp_commands> resp_commands_;
  std::unique_ptr<resp_server> resp_;
  // A node of a cluster: joins once the ports are known.
  std::unique_ptr<cluster_node> node_;
  std::mutex reload_mutex_;
  bool actors_stopped_ = false;
};

}  // namespace mm::server
