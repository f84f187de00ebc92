// An instance set: N supervised instances, instance i owning the players with
// id mod N == i (its scan reads only those, routers send their updates to
// it). Each has its own id ("<base>-<i>") and so its own state row. Member i
// passes a routed query it cannot answer to member i + 1 (mod N).
#pragma once

#include <vector>

#include "mm/actors/client.hpp"
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

template <class Profile, class Spawner>
std::vector<typename interfaces<Profile>::matchmaker> spawn_instance_set(
    Spawner& spawner, std::uint32_t n, const instance_config<Profile>& base,
    restart_backoff backoff = {}) {
  std::vector<typename interfaces<Profile>::supervisor> supervisors;
  for (std::uint32_t i = 0; i < n; ++i)
    supervisors.push_back(
        spawner.spawn(supervisor_actor<Profile>, member_config(base, n, i), backoff));
  // Told before this returns: a local send is in the mailbox when it returns,
  // so no query can reach a member before its next does.
  if (n > 1)
    for (std::uint32_t i = 0; i < n; ++i)
      caf::anon_send(supervisors[i], next_atom::value,
                     typename interfaces<Profile>::set_member{supervisors[(i + 1) % n]});
  return {supervisors.begin(), supervisors.end()};
}

}  // namespace mm::actors
