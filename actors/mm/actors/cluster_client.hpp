// A game process's client over the nodes of a cluster (docs/operations.md,
// Several nodes): matchmakerd processes that each run part of one set of
// instances over one shared database. Spawned in the game's process over the
// nodes' actor ports (connect_actor), it speaks the same interface as one
// node's client, so a game actor does not know how many nodes there are.
//
// - A query goes to a random node. A node that finds none answers NoneFound,
//   and the query goes on to the next node, until one answers or every node
//   was asked: the whole player base is searched, as in one set. A node that
//   fails or does not answer within `node_timeout` is passed over the same
//   way. Fake opponents only from the last node asked, as the caller wishes.
//   Queries sent to a node while one is in flight to it go together as one
//   batch when it answers (query_coalescer.hpp).
// - Updates, enrolments and removals go to the node that runs the player's
//   shard (id mod total). Which node that is the client learns from the
//   nodes themselves: every `refresh_every` it asks each node which shards
//   it serves now (a node of a cluster with leases answers from its leases),
//   so after a takeover or a hand-over the updates follow the new owner
//   within one refresh. The shards given at spawn are the map until the
//   first answers, and stay it for a node that cannot tell (an older
//   server). Updates that arrive together (in one burst of the client's
//   mailbox) go to each node as one batch (flush_updates()); anything else
//   the game sends after them reaches the nodes after them.
// - A batch goes to one node whole (its queries are not passed between nodes).
// - Session requests (tickets, lobbies: the same handle answers
//   session_interfaces::service) go to the nodes that run session queues,
//   learnt with the shards at each refresh: to one, and on not_owned_here to
//   the next (with the queues in partitions, each node runs some; a request
//   for another's partition costs a hop per node asked before it). Until a
//   node says it runs some (just after spawn, or while they are being taken
//   over) a session request is answered errc::not_owned_here: retry.
#pragma once

#include <algorithm>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <chrono>
#include <iterator>
#include <memory>
#include <vector>

#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/query_coalescer.hpp"
#include "mm/actors/session_forwarders.hpp"
#include "mm/engine/random.hpp"

namespace mm::actors {

// One node as the game sees it: its client (its actor port) and the shards
// it runs (its cluster.owned).
template <class Profile>
struct cluster_node {
  typename interfaces<Profile>::client client;
  std::vector<std::uint32_t> owned;
};

template <class Profile>
struct cluster_client_state {
  cluster_client_state() = default;  // not an aggregate (see client_state)
  std::vector<typename interfaces<Profile>::client> nodes;
  std::vector<session_interfaces::service> session_handles;  // the same nodes' session side
  std::vector<coalescer_ptr<Profile>> coalescers;            // per node: its single queries
  std::vector<std::uint32_t> node_of_shard;                  // shard -> node, or no_node
  // Per node: whether it runs session queues (all of them, or some of
  // their partitions), as its last answer to shards_atom said.
  std::vector<bool> runs_sessions;
  // Nodes whose actor went down (their process died, or the connection to it
  // was lost): never asked again; the game spawns a new client with fresh
  // handles to reach a restarted node.
  std::vector<bool> down;
  std::chrono::milliseconds node_timeout{1000};
  bool overdue_timer = false;  // an overdue_atom is on its way (arm_overdue_timer)
  std::chrono::milliseconds refresh_every{1000};
  rng random{1};
  client_stats stats;  // queries, updates, updates_elsewhere (no node runs the shard)
  // Per node: the updates of this burst, sent together (flush_updates()).
  std::vector<std::vector<player_update<typename Profile::model_type>>> held_updates;
  bool flush_queued = false;  // a flush_updates_atom is on its way
  static constexpr std::uint32_t no_node = ~std::uint32_t{0};
  static inline const char* name = "mm.cluster_client";
};

// Its own timer: queries in flight past node_timeout fail (query_coalescer.hpp).
using overdue_atom = caf::atom_constant<caf::atom("overdue")>;
// The end of a burst of updates: the ones held go to their nodes.
using flush_updates_atom = caf::atom_constant<caf::atom("flushupd")>;

// The cluster client's own type: the routing client's messages, the session
// service's, its refresh tick and its overdue timer.

template <class Profile>
using cluster_client_type = typename interfaces<Profile>::routing_client::template extend_with<
    session_interfaces::service>::template extend<caf::reacts_to<shards_atom>,
                                                  caf::reacts_to<overdue_atom>,
                                                  caf::reacts_to<flush_updates_atom>>;

template <class Profile>
using cluster_client_pointer =
    typename cluster_client_type<Profile>::template stateful_pointer<cluster_client_state<Profile>>;

// Asks every node what it serves now and moves the map: a shard a node
// answers for is that node's; a node that says it serves none of its former
// shards loses them; the same for the session queues. A node that does not
// answer keeps its entries (it may only be slow; a dead one's shards move
// when their new owner says so).
template <class Profile>
void refresh_shard_map(cluster_client_pointer<Profile> self) {
  using member = typename interfaces<Profile>::cluster_member;
  auto& st = self->state;
  for (std::size_t k = 0; k < st.nodes.size(); ++k)
    if (!st.down[k])
      self->request(caf::actor_cast<member>(st.nodes[k]), st.node_timeout, shards_atom::value)
          .then(
              [self, k](const served_resources& served) {
                auto& s = self->state;
                auto& map = s.node_of_shard;
                const auto node = static_cast<std::uint32_t>(k);
                for (auto& owner : map)
                  if (owner == node) owner = cluster_client_state<Profile>::no_node;
                for (const auto shard : served.shards)
                  if (shard < map.size()) map[shard] = node;
                s.runs_sessions[node] = served.sessions;
              },
              [](caf::error&) {});
}

// Asks `candidates[i]` (a node's session side) for `msg`; on not_owned_here
// asks the next, and answers `rp` with the first other answer, or the last
// node's not_owned_here. The nodes' answers come back in the order asked,
// so requests a game sends in a row reach a node in that order.
template <class Answer, class Self>
void relay_session(Self self, std::shared_ptr<std::vector<caf::actor>> candidates, std::size_t i,
                   caf::message msg, caf::typed_response_promise<Answer> rp) {
  const auto to = (*candidates)[i];
  self->request(to, self->state.node_timeout * 10, msg)
      .then([rp](Answer& a) mutable { rp.deliver(std::move(a)); },
            [self, candidates, i, msg, rp](caf::error& e) mutable {
              if (error_code_of(e) == errc::not_owned_here && i + 1 < candidates->size())
                relay_session<Answer>(self, std::move(candidates), i + 1, std::move(msg), rp);
              else
                rp.deliver(std::move(e));
            });
}

// A query on its way through the nodes.
template <class Profile>
struct cluster_hop {
  match_request<typename Profile::query_type> request;
  bool allow_fake = false;  // the caller's wish, for the last node
  std::size_t first = 0, asked = 0;
  bool someone_said_none = false;
  caf::typed_response_promise<match_reply<typename Profile::model_type>> promise;
};

// Sends the updates held for each node: one alone as itself, more as
// batches of up to max_batch_updates. Runs when the flush message queued
// behind a burst comes up, and before anything else goes to the nodes, so
// that a game's query never overtakes an update the game sent before it.
template <class Profile>
void flush_updates(cluster_client_pointer<Profile> self) {
  using update = player_update<typename Profile::model_type>;
  auto& st = self->state;
  for (std::size_t k = 0; k < st.held_updates.size(); ++k) {
    auto& held = st.held_updates[k];
    if (held.size() == 1) self->send(st.nodes[k], update_atom::value, std::move(held.front()));
    for (std::size_t from = 0; held.size() > 1 && from < held.size(); from += max_batch_updates) {
      const std::size_t to = std::min(held.size(), from + max_batch_updates);
      std::vector<update> batch(std::make_move_iterator(held.begin() + from),
                                std::make_move_iterator(held.begin() + to));
      ++st.stats.coalesced_update_batches;
      st.stats.coalesced_updates += batch.size();
      self->send(st.nodes[k], update_atom::value, std::move(batch));
    }
    held.clear();
  }
}

// Holds an update for node k until the burst it came in ends (or the
// node's batch is full).
template <class Profile>
void hold_update(cluster_client_pointer<Profile> self, std::size_t k,
                 player_update<typename Profile::model_type>&& u) {
  auto& st = self->state;
  st.held_updates[k].push_back(std::move(u));
  if (st.held_updates[k].size() >= max_batch_updates) flush_updates<Profile>(self);
  if (!st.flush_queued) {
    st.flush_queued = true;
    self->send(self, flush_updates_atom::value);
  }
}

// Whether node k is to be asked (not seen to go down).
template <class Profile>
bool node_alive(const cluster_client_state<Profile>& st, std::size_t k) {
  return !st.down[k];
}

// One timer for every query in flight, not a CAF request timeout each: it
// fires every node_timeout while queries are in flight.
template <class Profile>
void arm_overdue_timer(cluster_client_pointer<Profile> self) {
  auto& st = self->state;
  if (st.overdue_timer) return;
  st.overdue_timer = true;
  self->delayed_send(self, st.node_timeout, overdue_atom::value);
}

template <class Profile>
void ask_next_node(cluster_client_pointer<Profile> self,
                   std::shared_ptr<cluster_hop<Profile>> hop) {
  using model = typename Profile::model_type;
  auto& st = self->state;
  const std::size_t n = st.nodes.size();
  const auto at = [&](std::size_t asked) { return (hop->first + asked) % n; };
  // A node seen to go down is passed over at once.
  while (hop->asked < n && !node_alive(st, at(hop->asked))) ++hop->asked;
  if (hop->asked == n) {  // nobody left to ask
    if (hop->someone_said_none)
      hop->promise.deliver(match_reply<model>{});
    else
      hop->promise.deliver(make_error(errc::no_instances, "no node of the cluster is up"));
    return;
  }
  std::size_t after = hop->asked + 1;
  while (after < n && !node_alive(st, at(after))) ++after;
  const bool last = after == n;  // no live node after this one
  auto req = hop->request;       // kept whole for the next node
  req.allow_fake_opponent = last && hop->allow_fake;
  const std::size_t k = at(hop->asked);
  ++hop->asked;
  // Through the node's coalescer: alone when nothing is in flight to it, else
  // in the next batch (query_coalescer.hpp).
  arm_overdue_timer<Profile>(self);
  coalesced_find<Profile>(self, st.coalescers[k], st.nodes[k], std::move(req),
                          [self, hop, last](caf::expected<match_reply<model>> r) {
                            if (r) {
                              if (r->type == match_type::none_found && !last) {
                                hop->someone_said_none = true;
                                ask_next_node<Profile>(self, hop);
                                return;
                              }
                              hop->promise.deliver(std::move(*r));
                              return;
                            }
                            if (!last) {
                              ask_next_node<Profile>(self, hop);
                              return;
                            }
                            // Every node was asked: NoneFound if one found none, else the error.
                            if (hop->someone_said_none)
                              hop->promise.deliver(match_reply<model>{});
                            else
                              hop->promise.deliver(std::move(r.error()));
                          });
}

template <class Profile>
typename cluster_client_type<Profile>::behavior_type cluster_client_actor(
    cluster_client_pointer<Profile> self, std::vector<cluster_node<Profile>> nodes,
    std::uint32_t total, std::chrono::milliseconds node_timeout, std::uint64_t seed,
    std::chrono::milliseconds refresh_every) {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  using state = cluster_client_state<Profile>;
  auto& st = self->state;
  st.node_timeout = node_timeout;
  st.refresh_every = refresh_every;
  st.random = rng(seed);
  st.node_of_shard.assign(total, state::no_node);
  st.held_updates.resize(nodes.size());
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    st.nodes.push_back(nodes[k].client);
    st.session_handles.push_back(caf::actor_cast<session_interfaces::service>(nodes[k].client));
    st.coalescers.push_back(std::make_shared<query_coalescer<Profile>>());
    self->monitor(nodes[k].client);
    for (auto shard : nodes[k].owned)
      if (shard < total) st.node_of_shard[shard] = static_cast<std::uint32_t>(k);
  }
  auto none = [] { return make_error(errc::no_instances, "no matchmaker nodes"); };
  // The node running a player's shard, or null.
  auto owner_node = [self](player_id id) -> std::uint32_t {
    auto& s = self->state;
    if (s.node_of_shard.empty()) return state::no_node;
    return s.node_of_shard[static_cast<std::size_t>(id % s.node_of_shard.size())];
  };
  auto owner = [self, owner_node](player_id id) -> const typename interfaces<Profile>::client* {
    const auto k = owner_node(id);
    return k == state::no_node ? nullptr : &self->state.nodes[k];
  };
  auto nobody = [](player_id id) {
    return make_error(errc::not_owned_here,
                      "no node of the cluster runs the shard of player " + std::to_string(id));
  };
  st.down.assign(nodes.size(), false);
  // A node that goes down is passed over from now on, and what it ran is
  // nobody's until another node says it runs it.
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& s = self->state;
    for (std::size_t k = 0; k < s.nodes.size(); ++k) {
      if (s.nodes[k].address() != dm.source) continue;
      s.down[k] = true;
      // Its queries in flight will not be answered: they go on to the next node.
      fail_in_flight<Profile>(self, s.coalescers[k], s.node_timeout, true,
                              make_error(errc::instance_down, "the node went away"));
      for (auto& runner : s.node_of_shard)
        if (runner == k) runner = state::no_node;
      s.runs_sessions[k] = false;
    }
  });
  if (refresh_every.count() > 0) self->send(self, shards_atom::value);
  st.runs_sessions.assign(nodes.size(), false);
  // A session request goes to the nodes that run session queues, one after
  // another, until one answers other than not_owned_here: with the queues
  // in partitions each node runs some of them, and a node answers
  // not_owned_here for the others'.
  auto relay = [self](auto answer, auto&&... xs) {
    using answer_type = typename decltype(answer)::type;
    auto& s = self->state;
    auto candidates = std::make_shared<std::vector<caf::actor>>();
    for (std::size_t k = 0; k < s.nodes.size(); ++k)
      if (s.runs_sessions[k] && !s.down[k])
        candidates->push_back(caf::actor_cast<caf::actor>(s.session_handles[k]));
    if (candidates->empty())
      return caf::result<answer_type>(make_error(
          errc::not_owned_here,
          "no node serves the session queues now (being taken over): retry in a moment"));
    auto rp = self->template make_response_promise<answer_type>();
    relay_session<answer_type>(self, std::move(candidates), 0,
                               caf::make_message(std::forward<decltype(xs)>(xs)...), rp);
    return caf::result<answer_type>(rp);
  };
  using behavior = typename cluster_client_type<Profile>::behavior_type;
  return std::apply(
      [&](auto... session) {
        return behavior{
            [=](shards_atom) {
              refresh_shard_map<Profile>(self);
              self->delayed_send(self, self->state.refresh_every, shards_atom::value);
            },
            [=](find_atom, match_request<query>& req) -> caf::result<match_reply<model>> {
              flush_updates<Profile>(self);
              auto& s = self->state;
              if (s.nodes.empty()) return none();
              ++s.stats.queries;
              auto hop = std::make_shared<cluster_hop<Profile>>();
              hop->allow_fake = req.allow_fake_opponent;
              hop->request = std::move(req);
              hop->first = static_cast<std::size_t>(s.random.below(s.nodes.size()));
              hop->promise = self->template make_response_promise<match_reply<model>>();
              auto rp = hop->promise;
              ask_next_node<Profile>(self, std::move(hop));
              return rp;
            },
            [=](find_atom a, std::vector<match_request<query>>& batch)
                -> caf::result<std::vector<match_reply<model>>> {
              flush_updates<Profile>(self);
              auto& s = self->state;
              if (s.nodes.empty()) return none();
              s.stats.queries += batch.size();
              // A random node that is up.
              std::vector<std::size_t> up;
              for (std::size_t k = 0; k < s.nodes.size(); ++k)
                if (node_alive(s, k)) up.push_back(k);
              if (up.empty()) return none();
              return self->delegate(s.nodes[up[s.random.below(up.size())]], a, std::move(batch));
            },
            // Updates wait for the end of their burst and go per node together.
            [=](update_atom, player_update<model>& u) {
              auto& s = self->state;
              ++s.stats.updates;
              if (const auto k = owner_node(u.id); k != state::no_node)
                hold_update<Profile>(self, k, std::move(u));
              else
                ++s.stats.updates_elsewhere;
            },
            [=](update_atom, std::vector<player_update<model>>& batch) {
              auto& s = self->state;
              if (batch.size() > max_batch_updates) {
                s.stats.updates_refused += batch.size();
                return;
              }
              s.stats.updates += batch.size();
              for (auto& u : batch)
                if (const auto k = owner_node(u.id); k != state::no_node)
                  hold_update<Profile>(self, k, std::move(u));
                else
                  ++s.stats.updates_elsewhere;
            },
            [=](flush_updates_atom) {
              self->state.flush_queued = false;
              flush_updates<Profile>(self);
            },
            [=](enroll_atom a, player_id id) -> caf::result<bool> {
              flush_updates<Profile>(self);
              if (const auto* to = owner(id)) return self->delegate(*to, a, id);
              return nobody(id);
            },
            [=](remove_atom a, player_id id) -> caf::result<bool> {
              flush_updates<Profile>(self);
              if (const auto* to = owner(id)) return self->delegate(*to, a, id);
              return nobody(id);
            },
            [=](overdue_atom) {
              auto& s = self->state;
              s.overdue_timer = false;
              bool waiting = false;
              for (std::size_t k = 0; k < s.nodes.size(); ++k)
                waiting |= fail_in_flight<Profile>(
                    self, s.coalescers[k], s.node_timeout, false,
                    make_error(caf::sec::request_timeout,
                               "no answer from the node within " +
                                   std::to_string(s.node_timeout.count()) + " ms"));
              if (waiting) arm_overdue_timer<Profile>(self);
            },
            [=](stats_atom) {
              client_stats out = self->state.stats;
              for (const auto& c : self->state.coalescers) {
                out.coalesced_batches += c->batches;
                out.coalesced_queries += c->batched_queries;
              }
              return out;
            },
            session...};
      },
      session_handlers(relay));
}

// Spawns a cluster client over `nodes` (each with the shards it serves at
// first: its cluster.owned, or none) of a set of `total` instances.
// `node_timeout` bounds one node's answer before the query goes on; `seed`
// drives the choice of the first node; every `refresh_every` the client asks
// the nodes which shards they serve now (0: never, the map stays as given).
template <class Profile, class Spawner>
typename interfaces<Profile>::routing_client spawn_cluster_client(
    Spawner& spawner, std::vector<cluster_node<Profile>> nodes, std::uint32_t total,
    std::chrono::milliseconds node_timeout = std::chrono::milliseconds(1000),
    std::uint64_t seed = 1,
    std::chrono::milliseconds refresh_every = std::chrono::milliseconds(1000)) {
  return caf::actor_cast<typename interfaces<Profile>::routing_client>(spawner.spawn(
      cluster_client_actor<Profile>, std::move(nodes), total, node_timeout, seed, refresh_every));
}

}  // namespace mm::actors
