// What a server publishes on its actor port: one actor that speaks both the
// routing client's interface (async matchmaking) and the session service's
// (tickets and lobbies), and passes each message on to the actor that serves
// it. A game connects once and holds the handle it needs: CAF checks on
// connect that the published interface includes the one asked for, so
// remote_actor<routing_client> and remote_actor<session_interfaces::service>
// both work against the same port. Answers go straight from the serving
// actor to the caller (delegation).
//
// Every message is checked against the identity of the connection it came
// from (identity.hpp, permissions.hpp): async messages need role test (the
// counters and the shards map, view); session messages act as that identity
// (port_session_handlers.hpp). `(hello, token)` makes the connection the
// token's identity. Messages of the server's own actors act as `local`, an
// admin; without an identity book, every message does (a port in a test).
#pragma once

#include <caf/all.hpp>
#include <functional>
#include <tuple>
#include <vector>

#include "mm/actors/identity.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/port_session_handlers.hpp"

namespace mm::actors {

template <class Profile>
using game_front_actor = typename interfaces<Profile>::routing_client::
    template extend_with<session_interfaces::service>::template extend<
        caf::replies_to<shards_atom>::with<served_resources>,
        // The token's identity for this connection from now on: its name, or
        // errc::forbidden for a token the server does not know.
        caf::replies_to<hello_atom, std::string>::with<std::string>>;

// What this server serves now: the shards by index of the set, and whether
// it runs the session queues (what a cluster client routes by).
using served_now = std::function<served_resources()>;

template <class Profile>
typename game_front_actor<Profile>::behavior_type game_front(
    typename game_front_actor<Profile>::pointer self,
    typename interfaces<Profile>::routing_client client, session_interfaces::service sessions,
    served_now served, std::shared_ptr<identity_book> identities = nullptr) {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  using behavior = typename game_front_actor<Profile>::behavior_type;
  // The identity of the message being handled: its sender's node's.
  auto caller = [self, identities]() -> caller_identity {
    const auto& sender = self->current_sender();
    if (!identities) return {local_identity, role::admin};
    if (!sender) return {anonymous_identity, role::none};  // cannot be told apart
    if (sender->node() == self->home_system().node()) return {local_identity, role::admin};
    return identities->of(sender->node());
  };
  auto may = [caller](operation op) { return caller().granted >= needed(op); };
  auto forward_sessions = port_session_handlers(self, caller, [sessions] { return &sessions; });
  return std::apply(
      [&](auto... session) {
        return behavior{
            [=](shards_atom) -> caf::result<served_resources> {
              if (!may(operation::async_read)) return refused(operation::async_read, caller());
              return served();
            },
            [=](hello_atom, const std::string& token) -> caf::result<std::string> {
              const auto& sender = self->current_sender();
              if (!identities || !sender) return std::string(local_identity);
              auto who = identities->by_token(token);
              if (!who) return make_error(errc::forbidden, "token: not a token of this server");
              if (!identities->present(sender->node(), token))
                return make_error(errc::forbidden,
                                  "hello: only a connection of the port says hello");
              return who->name;
            },
            // The async matchmaker.
            [=](find_atom a, match_request<query>& r) -> caf::result<match_reply<model>> {
              if (!may(operation::find)) return refused(operation::find, caller());
              return self->delegate(client, a, std::move(r));
            },
            [=](find_atom a, std::vector<match_request<query>>& rs)
                -> caf::result<std::vector<match_reply<model>>> {
              if (!may(operation::find)) return refused(operation::find, caller());
              return self->delegate(client, a, std::move(rs));
            },
            // No answer to refuse with: a peer below test is ignored.
            [=](update_atom a, player_update<model>& u) {
              if (may(operation::player_write)) self->send(client, a, std::move(u));
            },
            [=](update_atom a, std::vector<player_update<model>>& batch) {
              if (may(operation::player_write)) self->send(client, a, std::move(batch));
            },
            [=](enroll_atom a, player_id id) -> caf::result<bool> {
              if (!may(operation::player_write)) return refused(operation::player_write, caller());
              return self->delegate(client, a, id);
            },
            [=](remove_atom a, player_id id) -> caf::result<bool> {
              if (!may(operation::player_write)) return refused(operation::player_write, caller());
              return self->delegate(client, a, id);
            },
            [=](stats_atom a) -> caf::result<client_stats> {
              if (!may(operation::async_read)) return refused(operation::async_read, caller());
              return self->delegate(client, a);
            },
            // Sessions and lobbies: to the session service (on a node of a
            // cluster, the switch in front of it).
            session...};
      },
      std::move(forward_sessions));
}

}  // namespace mm::actors
