// The routing client actor: one handle over an instance set (docs/design.md,
// Instances), for callers that hold a single handle, such as game nodes
// across the network or the HTTP API. It routes with a set_router and
// delegates: a query's answer goes from the instance that gives it straight
// back to the caller, never through this actor. Callers in the same process
// can skip this actor and route in their own context (router.hpp).
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <vector>

#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/router.hpp"

namespace mm::actors {

template <class Profile>
struct client_interface {
  // What a game holds: the same for the client and for one matchmaker.
  using type = typename interfaces<Profile>::client;
  // The client actor itself: that plus its own counts (stats_atom).
  using routing_type = typename interfaces<Profile>::routing_client;
};

template <class Profile>
struct client_state {
  // Not an aggregate: CAF would otherwise build the state from the actor pointer.
  client_state() = default;
  set_router<Profile> router;
  client_stats stats;
  static inline const char* name = "mm.client";
};

template <class Profile>
using client_pointer = typename client_interface<Profile>::routing_type::template stateful_pointer<
    client_state<Profile>>;

template <class Profile>
typename client_interface<Profile>::routing_type::behavior_type client_actor(
    client_pointer<Profile> self, std::vector<typename interfaces<Profile>::matchmaker> instances,
    std::uint64_t seed) {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  self->state.router = set_router<Profile>(std::move(instances), seed);
  auto none = [] { return make_error(errc::no_instances, "no matchmaker instances"); };
  return {
      // By reference: the request is moved into the routed message, not copied.
      [=](find_atom, match_request<query>& req) -> caf::result<match_reply<model>> {
        auto& s = self->state;
        if (s.router.empty()) return none();
        ++s.stats.queries;
        return s.router.delegate_find(self, std::move(req));
      },
      [=](update_atom, const player_update<model>& u) {
        auto& s = self->state;
        ++s.stats.updates;
        if (!s.router.empty()) s.router.update(self, u);
      },
      [=](enroll_atom a, player_id id) -> caf::result<bool> {
        auto& s = self->state;
        if (s.router.empty()) return none();
        return self->delegate(s.router.owner(id), a, id);
      },
      [=](remove_atom a, player_id id) -> caf::result<bool> {
        auto& s = self->state;
        if (s.router.empty()) return none();
        return self->delegate(s.router.owner(id), a, id);
      },
      [=](stats_atom) { return self->state.stats; },
  };
}

// Spawns a routing client over `instances` (an instance set, members told
// their next: spawn_instance_set); `seed` drives the choice of the first
// instance of each query.
template <class Profile, class Spawner>
typename client_interface<Profile>::routing_type spawn_client(
    Spawner& spawner, std::vector<typename interfaces<Profile>::matchmaker> instances,
    std::uint64_t seed) {
  return spawner.spawn(client_actor<Profile>, std::move(instances), seed);
}

}  // namespace mm::actors
