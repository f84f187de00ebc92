// An instance set: N supervised instances, instance i owning the players with
// id mod N == i (its scan reads only those, routers send their updates to
// it). Each has its own id ("<base>-<i>") and so its own state row. Member i
// passes a routed query it cannot answer to member i + 1 (mod N).
#pragma once

#include <vector>

#include "mm/actors/client.hpp"
#include "mm/actors/router.hpp"
#include "mm/actors/supervisor.hpp"
#include "mm/engine/stable_hash.hpp"

namespace mm::actors {

template <class Profile>
instance_config<Profile> member_config(const instance_config<Profile>& base, std::uint32_t n,
                                       std::uint32_t i) {
  instance_config<Profile> c = base;
  c.id = base.id + "-" + std::to_string(i);
  c.database.shard_count = n;
  c.database.shard_index = i;
  // The scan pointers' seed: from random_seed when that is set (runs repeat),
  // else the worker draws one (every cold start walks other rows).
  if (c.opts.random_seed != 0) {
    c.opts.random_seed += i;
    c.database.seed = mix64(c.opts.random_seed);
  } else if (base.database.seed != 0) {
    c.database.seed = base.database.seed + i;
  }
  c.opts.name = c.id;
  return c;
}

// A node's part of a set of `part.total` instances: members for the shards
// in `part.shards` only, in that order, each passing what it cannot answer to
// the next of them. The ids and shards are those of the whole set, so nodes
// that share one database keep one snapshot row per instance.
template <class Profile, class Spawner>
std::vector<typename interfaces<Profile>::matchmaker> spawn_instance_part(
    Spawner& spawner, const set_part& part, const instance_config<Profile>& base,
    restart_backoff backoff = {}) {
  std::vector<typename interfaces<Profile>::supervisor> supervisors;
  for (const std::uint32_t i : part.shards)
    supervisors.push_back(
        spawner.spawn(supervisor_actor<Profile>, member_config(base, part.total, i), backoff));
  // Told before this returns: a local send is in the mailbox when it returns,
  // so no query can reach a member before its next does.
  const std::size_t n = supervisors.size();
  if (n > 1)
    for (std::size_t k = 0; k < n; ++k)
      caf::anon_send(supervisors[k], next_atom::value,
                     typename interfaces<Profile>::set_member{supervisors[(k + 1) % n]});
  return {supervisors.begin(), supervisors.end()};
}

// The whole set of `n` instances.
template <class Profile, class Spawner>
std::vector<typename interfaces<Profile>::matchmaker> spawn_instance_set(
    Spawner& spawner, std::uint32_t n, const instance_config<Profile>& base,
    restart_backoff backoff = {}) {
  set_part all{n, {}};
  for (std::uint32_t i = 0; i < n; ++i) all.shards.push_back(i);
  return spawn_instance_part<Profile>(spawner, all, base, backoff);
}

}  // namespace mm::actors
