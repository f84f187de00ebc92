// The routing client actor: one handle over an instance set (docs/design.md,
// Instances), for callers that hold a single handle, such as game nodes
// across the network or the HTTP API. It routes with a set_router and
// delegates: a query's answer goes from the instance that gives it straight
// back to the caller, never through this actor. Callers in the same process
// can skip this actor and route in their own context (router.hpp).
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "mm/actors/batch_route.hpp"
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

// How long the client waits for one member's answer to a batch (instances
// answer in microseconds or crash; this only bounds a batch when something is
// wrong: the member is then passed over).
inline constexpr std::chrono::seconds batch_item_timeout{10};

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

// Counts a batch's answers (the game's view) and sends them, or its error.
template <class Profile>
void deliver_batch(
    client_pointer<Profile> self, batch_route<Profile>& job, const caf::error& e,
    caf::typed_response_promise<std::vector<match_reply<typename Profile::model_type>>>& promise) {
  if (e) {
    self->state.stats.batches.unanswered += job.open.size();
    promise.deliver(e);
    return;
  }
  for (const auto& r : job.replies) self->state.stats.batches.count(r.type);
  promise.deliver(std::move(job.replies));
}

template <class Profile>
typename client_interface<Profile>::routing_type::behavior_type client_actor(
    client_pointer<Profile> self, std::vector<typename interfaces<Profile>::matchmaker> instances,
    std::uint64_t seed, set_part part) {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  self->state.router = set_router<Profile>(std::move(instances), seed, part);
  auto none = [] { return make_error(errc::no_instances, "no matchmaker instances"); };
  auto elsewhere = [](player_id id) {
    return make_error(errc::not_owned_here, "player " + std::to_string(id) +
                                                " belongs to a shard that another node runs");
  };
  return {
      // By reference: the request is moved into the routed message, not copied.
      [=](find_atom, match_request<query>& req) -> caf::result<match_reply<model>> {
        auto& s = self->state;
        if (s.router.empty()) return none();
        ++s.stats.queries;
        return s.router.delegate_find(self, std::move(req));
      },
      // A batch goes to one member whole; the queries it found none for go
      // on, together, to the next member, until each is answered or every
      // member was asked. A few messages per batch, not two per query.
      [=](find_atom, std::vector<match_request<query>>& batch)
          -> caf::result<std::vector<match_reply<model>>> {
        auto& s = self->state;
        if (s.router.empty()) return none();
        if (batch.size() > max_batch_queries) return batch_too_large(batch.size());
        if (batch.empty()) return std::vector<match_reply<model>>{};
        s.stats.queries += batch.size();
        auto job =
            std::make_shared<batch_route<Profile>>(std::move(batch), s.router.pick_first_index());
        auto rp = self->template make_response_promise<std::vector<match_reply<model>>>();
        route_batch<Profile>(self, s.router.members(), job, 0, caf::duration(batch_item_timeout),
                             [self, job, rp](const caf::error& e) mutable {
                               deliver_batch<Profile>(self, *job, e, rp);
                             });
        return rp;
      },
      [=](update_atom, const player_update<model>& u) {
        auto& s = self->state;
        ++s.stats.updates;
        if (!s.router.empty() && !s.router.update(self, u)) ++s.stats.updates_elsewhere;
      },
      [=](update_atom, std::vector<player_update<model>>& batch) {
        auto& s = self->state;
        if (batch.size() > max_batch_updates) {
          s.stats.updates_refused += batch.size();
          return;
        }
        s.stats.updates += batch.size();
        if (s.router.empty()) return;
        s.stats.updates_elsewhere += s.router.update(self, std::move(batch));
      },
      [=](enroll_atom a, player_id id) -> caf::result<bool> {
        auto& s = self->state;
        if (s.router.empty()) return none();
        const auto* owner = s.router.owner_of(id);
        if (!owner) return elsewhere(id);
        return self->delegate(*owner, a, id);
      },
      [=](remove_atom a, player_id id) -> caf::result<bool> {
        auto& s = self->state;
        if (s.router.empty()) return none();
        const auto* owner = s.router.owner_of(id);
        if (!owner) return elsewhere(id);
        return self->delegate(*owner, a, id);
      },
      [=](stats_atom) { return self->state.stats; },
  };
}

// Spawns a routing client over `instances` (an instance set, members told
// their next: spawn_instance_set); `seed` drives the choice of the first
// instance of each query. `part`: the shards the instances own when they are
// a node's part of a larger set.
template <class Profile, class Spawner>
typename client_interface<Profile>::routing_type spawn_client(
    Spawner& spawner, std::vector<typename interfaces<Profile>::matchmaker> instances,
    std::uint64_t seed, set_part part = {}) {
  return spawner.spawn(client_actor<Profile>, std::move(instances), seed, std::move(part));
}

}  // namespace mm::actors
