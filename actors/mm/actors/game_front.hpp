// What a server publishes on its actor port: one actor that speaks both the
// routing client's interface (async matchmaking) and the session service's
// (tickets and lobbies), and passes each message on to the actor that serves
// it. A game connects once and holds the handle it needs: CAF checks on
// connect that the published interface includes the one asked for, so
// remote_actor<routing_client> and remote_actor<session_interfaces::service>
// both work against the same port. Answers go straight from the serving
// actor to the caller (delegation).
#pragma once

#include <caf/all.hpp>
#include <functional>
#include <tuple>
#include <vector>

#include "mm/actors/interface.hpp"
#include "mm/actors/session_forwarders.hpp"

namespace mm::actors {

template <class Profile>
using game_front_actor = typename interfaces<Profile>::routing_client::
    template extend_with<session_interfaces::service>::template extend<
        caf::replies_to<shards_atom>::with<served_resources>>;

// What this server serves now: the shards by index of the set, and whether
// it runs the session queues (what a cluster client routes by).
using served_now = std::function<served_resources()>;

template <class Profile>
typename game_front_actor<Profile>::behavior_type game_front(
    typename game_front_actor<Profile>::pointer self,
    typename interfaces<Profile>::routing_client client, session_interfaces::service sessions,
    served_now served) {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  using behavior = typename game_front_actor<Profile>::behavior_type;
  auto forward_sessions = session_forwarders(self, [sessions] { return &sessions; });
  return std::apply(
      [&](auto... session) {
        return behavior{
            [=](shards_atom) { return served(); },
            // The async matchmaker.
            [=](find_atom a, match_request<query>& r) {
              return self->delegate(client, a, std::move(r));
            },
            [=](find_atom a, std::vector<match_request<query>>& rs) {
              return self->delegate(client, a, std::move(rs));
            },
            [=](update_atom a, player_update<model>& u) { self->send(client, a, std::move(u)); },
            [=](update_atom a, std::vector<player_update<model>>& batch) {
              self->send(client, a, std::move(batch));
            },
            [=](enroll_atom a, player_id id) { return self->delegate(client, a, id); },
            [=](remove_atom a, player_id id) { return self->delegate(client, a, id); },
            [=](stats_atom a) { return self->delegate(client, a); },
            // Sessions and lobbies: to the session service (on a node of a
            // cluster, the switch in front of it).
            session...};
      },
      std::move(forward_sessions));
}

}  // namespace mm::actors
