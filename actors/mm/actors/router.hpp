// Routing over an instance set in the caller's own context (docs/design.md,
// Instances): a plain value a game actor keeps, with no actor of its own in
// the way. A query goes to a random member with a set_route; a member that
// finds none passes it to the next one itself, and whichever answers sends the
// reply straight back to the caller. So a query costs the caller one request,
// as a query to one matchmaker does. Updates, enrolments and removals go to
// the member that owns the player: `player_id mod N`.
//
// A node of a cluster runs only part of a set (set_part): its members own
// some of the `total` shards, and a player of a shard run elsewhere has no
// owner here (owner_of is null); its updates belong to that other node.
//
// Failures: a member whose instance is down (its supervisor restarting it)
// passes the query on; when none is left, the set answers NoneFound if some
// member found none, else an error. A member that never answers costs the
// caller its own request timeout: an error, never a hang.
#pragma once

#include <caf/timespan.hpp>
#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

#include "mm/actors/interface.hpp"
#include "mm/engine/random.hpp"

namespace mm::actors {

// Which shards of a set a node's members own: member k owns shard shards[k]
// of `total`. The default, total 0, is the whole set: member k owns shard k.
struct set_part {
  std::uint32_t total = 0;
  std::vector<std::uint32_t> shards;
};

template <class Profile>
class set_router {
 public:
  using matchmaker = typename interfaces<Profile>::matchmaker;
  using query = typename Profile::query_type;
  using model = typename Profile::model_type;

  set_router() = default;
  // `seed` drives the choice of the first member of each query.
  set_router(std::vector<matchmaker> members, std::uint64_t seed, const set_part& part = {})
      : members_(std::move(members)), random_(seed) {
    if (part.total == 0) return;
    assert(part.shards.size() == members_.size());
    slot_.assign(part.total, no_member);
    for (std::size_t k = 0; k < part.shards.size() && k < members_.size(); ++k)
      if (part.shards[k] < part.total) slot_[part.shards[k]] = static_cast<std::uint32_t>(k);
  }

  bool empty() const { return members_.empty(); }
  std::size_t size() const { return members_.size(); }
  const std::vector<matchmaker>& members() const { return members_; }

  // The member that owns a player: its updates, enrolments and removals go
  // there. Null when another node runs the player's shard.
  const matchmaker* owner_of(player_id id) const {
    assert(!empty());
    if (slot_.empty()) return &members_[static_cast<std::size_t>(id % members_.size())];
    const std::uint32_t k = slot_[static_cast<std::size_t>(id % slot_.size())];
    return k == no_member ? nullptr : &members_[k];
  }

  // The route a query starts with: through every member, fakes as the caller wishes.
  set_route first_route(const match_request<query>& req) const {
    return set_route{static_cast<std::uint32_t>(members_.size() - 1), req.allow_fake_opponent,
                     false};
  }

  // Asks the set from `self`; returns the request's handle (`.then(...)`,
  // `.receive(...)` or `.await(...)`, as for any CAF request). Needs a
  // non-empty set. Pass the request as an rvalue to move it into the message.
  template <class Self, class Request>
  auto find(Self* self, caf::timespan timeout, Request&& req) {
    assert(!empty());
    const set_route route = first_route(req);
    return self->request(pick_first(), timeout, find_atom::value, std::forward<Request>(req),
                         route);
  }

  // The same with no timeout: for a caller that keeps its own deadlines (a
  // CAF request timeout costs two trips through CAF's clock thread, answered
  // or not: query_bridge.hpp).
  template <class Self, class Request>
  auto find(Self* self, caf::infinite_t, Request&& req) {
    assert(!empty());
    const set_route route = first_route(req);
    return self->request(pick_first(), caf::infinite, find_atom::value, std::forward<Request>(req),
                         route);
  }

  // The same from inside a handler that answers a query of its own: the set's
  // answer goes to the sender of the current message (CAF delegation).
  template <class Self>
  auto delegate_find(Self* self, match_request<query>&& req) {
    assert(!empty());
    const set_route route = first_route(req);
    return self->delegate(pick_first(), find_atom::value, std::move(req), route);
  }

  // A random member's index: where a query (or a batch) starts.
  std::size_t pick_first_index() {
    return static_cast<std::size_t>(random_.below(members_.size()));
  }

  // A player's update goes to its owner; fire and forget. False when the
  // player is another node's.
  template <class Self>
  bool update(Self* self, const player_update<model>& u) const {
    const matchmaker* to = owner_of(u.id);
    if (to) self->send(*to, update_atom::value, u);
    return to != nullptr;
  }

  // A batch of updates: each to its owner, in order, one message per owner
  // (an update alone as itself). Returns how many were another node's.
  template <class Self>
  std::size_t update(Self* self, std::vector<player_update<model>>&& batch) const {
    std::vector<std::vector<player_update<model>>> per_member(members_.size());
    std::size_t elsewhere = 0;
    for (auto& u : batch) {
      const matchmaker* to = owner_of(u.id);
      if (!to) {
        ++elsewhere;
        continue;
      }
      per_member[static_cast<std::size_t>(to - members_.data())].push_back(std::move(u));
    }
    for (std::size_t m = 0; m < per_member.size(); ++m) {
      if (per_member[m].size() == 1)
        self->send(members_[m], update_atom::value, std::move(per_member[m].front()));
      else if (!per_member[m].empty())
        self->send(members_[m], update_atom::value, std::move(per_member[m]));
    }
    return elsewhere;
  }

 private:
  const matchmaker& pick_first() { return members_[pick_first_index()]; }

  static constexpr std::uint32_t no_member = ~std::uint32_t{0};
  std::vector<matchmaker> members_;
  std::vector<std::uint32_t> slot_;  // shard -> member, when a part; else empty
  rng random_{1};
};

}  // namespace mm::actors
