// The client side of an instance set (docs/design.md, Instances): what game actors talk to.
// Player updates and enrolments go to instance `player_id mod N` (instances
// own disjoint shards of the player ids); a query goes to a random instance
// first and, on NoneFound, to the next, until one finds an opponent or all were
// asked. A timeout or an instance that is down counts as "ask the next one":
// the caller always gets one answer, never a hang.
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <memory>
#include <vector>

#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"
#include "mm/engine/random.hpp"

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
  std::vector<typename interfaces<Profile>::matchmaker> instances;
  std::chrono::milliseconds timeout{250};
  rng random{1};
  client_stats stats;
  static inline const char* name = "mm.client";
};

template <class Profile>
using client_pointer = typename client_interface<Profile>::routing_type::template stateful_pointer<
    client_state<Profile>>;

template <class Profile>
std::size_t shard_of(const client_state<Profile>& st, player_id id) {
  return static_cast<std::size_t>(id % st.instances.size());
}

inline void count_answer(client_stats& s, match_type t) {
  switch (t) {
    case match_type::success:
      ++s.success;
      break;
    case match_type::none_found:
      ++s.none_found;
      break;
    case match_type::fake_opponent:
      ++s.fake_opponent;
      break;
    case match_type::invalid_request:
      ++s.invalid_request;
      break;
  }
}

// Asks instance (start + k) mod N; on NoneFound or failure, the next one.
// Only the last instance asked may answer with a fake opponent (when the
// caller's request allows one): a bot must not beat a real opponent that a
// later instance holds. `req` has fakes turned off; `fake_allowed` is the
// caller's own wish.
template <class Profile>
void find_from(client_pointer<Profile> self,
               caf::typed_response_promise<match_reply<typename Profile::model_type>> rp,
               std::shared_ptr<const match_request<typename Profile::query_type>> req,
               bool fake_allowed, std::size_t start, std::size_t k, bool someone_said_none) {
  using reply = match_reply<typename Profile::model_type>;
  const auto& all = self->state.instances;
  const std::size_t n = all.size();
  auto ask = [&](const match_request<typename Profile::query_type>& r) {
    return self->request(all[(start + k) % n], self->state.timeout, find_atom::value, r);
  };
  auto pending = [&] {
    if (!(fake_allowed && k + 1 == n)) return ask(*req);
    auto last = *req;
    last.allow_fake_opponent = true;
    return ask(last);
  }();
  pending.then(
      [=](reply& r) mutable {
        if (r.type == match_type::none_found && k + 1 < n) {
          find_from<Profile>(self, rp, req, fake_allowed, start, k + 1, true);
          return;
        }
        count_answer(self->state.stats, r.type);
        rp.deliver(std::move(r));
      },
      [=](caf::error& e) mutable {
        auto& stats = self->state.stats;
        ++stats.failed_requests;
        if (k + 1 < n) {
          find_from<Profile>(self, rp, req, fake_allowed, start, k + 1, someone_said_none);
        } else if (someone_said_none) {
          count_answer(stats, match_type::none_found);
          rp.deliver(reply{});  // NoneFound: those that answered found none
        } else {
          ++stats.unanswered;
          rp.deliver(std::move(e));  // nobody answered
        }
      });
}

template <class Profile>
typename client_interface<Profile>::routing_type::behavior_type client_actor(
    client_pointer<Profile> self, std::vector<typename interfaces<Profile>::matchmaker> instances,
    std::chrono::milliseconds timeout, std::uint64_t seed) {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  auto& st = self->state;
  st.instances = std::move(instances);
  st.timeout = timeout;
  st.random.reseed(seed);
  return {
      [=](find_atom, const match_request<query>& req) -> caf::result<match_reply<model>> {
        auto& s = self->state;
        if (s.instances.empty()) return make_error(errc::no_instances, "no matchmaker instances");
        ++s.stats.queries;
        auto rp = self->template make_response_promise<match_reply<model>>();
        auto without_fakes = std::make_shared<match_request<query>>(req);
        without_fakes->allow_fake_opponent = false;
        find_from<Profile>(self, rp, std::move(without_fakes), req.allow_fake_opponent,
                           static_cast<std::size_t>(s.random.below(s.instances.size())), 0, false);
        return rp;
      },
      [=](update_atom a, const player_update<model>& u) {
        auto& s = self->state;
        ++s.stats.updates;
        if (!s.instances.empty()) self->send(s.instances[shard_of(s, u.id)], a, u);
      },
      [=](enroll_atom a, player_id id) -> caf::result<bool> {
        auto& s = self->state;
        if (s.instances.empty()) return make_error(errc::no_instances, "no matchmaker instances");
        return self->delegate(s.instances[shard_of(s, id)], a, id);
      },
      [=](remove_atom a, player_id id) -> caf::result<bool> {
        auto& s = self->state;
        if (s.instances.empty()) return make_error(errc::no_instances, "no matchmaker instances");
        return self->delegate(s.instances[shard_of(s, id)], a, id);
      },
      [=](stats_atom) { return self->state.stats; },
  };
}

// Spawns a routing client over `instances`: requests time out after
// `timeout`; `seed` drives the choice of the first instance.
template <class Profile, class Spawner>
typename client_interface<Profile>::routing_type spawn_client(
    Spawner& spawner, std::vector<typename interfaces<Profile>::matchmaker> instances,
    std::chrono::milliseconds timeout, std::uint64_t seed) {
  return spawner.spawn(client_actor<Profile>, std::move(instances), timeout, seed);
}

}  // namespace mm::actors
