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
#include <vector>

#include "mm/actors/interface.hpp"

namespace mm::actors {

// The credential of every session ticket created over the actor port: a
// ticket's owner is the game server, and HTTP callers cannot read it.
inline constexpr const char* port_credential = "actor-port";

template <class Profile>
using game_front_actor = typename interfaces<Profile>::routing_client::
    template extend_with<session_interfaces::service>::template extend<
        caf::replies_to<shards_atom>::with<std::vector<std::uint32_t>>>;

// The shards this server serves now, by index of the set (what a cluster
// client routes updates by).
using served_shards = std::function<std::vector<std::uint32_t>()>;

template <class Profile>
typename game_front_actor<Profile>::behavior_type game_front(
    typename game_front_actor<Profile>::pointer self,
    typename interfaces<Profile>::routing_client client, session_interfaces::service sessions,
    served_shards served) {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  return {
      [=](shards_atom) { return served(); },
      // The async matchmaker.
      [=](find_atom a, match_request<query>& r) { return self->delegate(client, a, std::move(r)); },
      [=](find_atom a, std::vector<match_request<query>>& rs) {
        return self->delegate(client, a, std::move(rs));
      },
      [=](update_atom a, player_update<model>& u) { self->send(client, a, std::move(u)); },
      [=](enroll_atom a, player_id id) { return self->delegate(client, a, id); },
      [=](remove_atom a, player_id id) { return self->delegate(client, a, id); },
      [=](stats_atom a) { return self->delegate(client, a); },
      // Sessions.
      [=](create_atom a, std::string& queue, session_ticket& t, session_interfaces::owner& owner) {
        t.credential = port_credential;  // whatever the peer said
        return self->delegate(sessions, a, std::move(queue), std::move(t), std::move(owner));
      },
      [=](cancel_atom a, std::uint64_t id) { return self->delegate(sessions, a, id); },
      [=](cancel_atom a, std::uint64_t id, std::string& credential) {
        return self->delegate(sessions, a, id, std::move(credential));
      },
      [=](status_atom a, std::uint64_t id) { return self->delegate(sessions, a, id); },
      [=](info_atom a) { return self->delegate(sessions, a); },
      [=](inspect_atom a, std::string& queue, std::uint32_t offset, std::uint32_t limit) {
        return self->delegate(sessions, a, std::move(queue), offset, limit);
      },
      // Lobbies.
      [=](lobby_atom l, create_atom a, lobby_registration& r) {
        return self->delegate(sessions, l, a, std::move(r));
      },
      [=](lobby_atom l, update_atom a, std::string& id, std::uint32_t players) {
        return self->delegate(sessions, l, a, std::move(id), players);
      },
      [=](lobby_atom l, close_atom a, std::string& id) {
        return self->delegate(sessions, l, a, std::move(id));
      },
      [=](lobby_atom l, find_atom a, lobby_query& q) {
        return self->delegate(sessions, l, a, std::move(q));
      },
      [=](lobby_atom l, info_atom a) { return self->delegate(sessions, l, a); },
      [=](lobby_atom l, inspect_atom a) { return self->delegate(sessions, l, a); },
  };
}

}  // namespace mm::actors
