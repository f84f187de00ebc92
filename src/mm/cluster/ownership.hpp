// Who should own what: the one plan every node of a cluster computes from the
// same list of live nodes (docs/design.md, "Leases"). Plain C++: no database,
// no actors.
//
// - A resource pinned by a live node (its cluster.owned) goes to that node.
// - The others are shared out kind by kind (the name before its first '-':
//   the async shards "mm-i", the session queues' partitions "sessions-k"),
//   so each kind spreads over the nodes, not only their sum: each resource
//   of a kind goes, in name order, to the live node that ranks it highest (a
//   hash of the node's name and the resource's: rendezvous hashing) among
//   those below floor(kind's resources / nodes); what is left of the kind
//   then goes to those below one more, the least loaded overall first.
//
// So the plan is balanced (each kind's loads, and the totals, differ by one
// at most, pins aside),
// stable (a node that comes back under the same name gets the same
// resources), and a node that joins or leaves moves only a few resources.
// Names, not incarnations, are hashed: a restart does not reshuffle.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mm::cluster {

struct planned_node {
  std::string id;    // the node's id (an incarnation): what the plan names
  std::string name;  // what is hashed
  std::vector<std::string> pinned;
};

// resource -> the id of the node that should own it; a resource is missing
// when there is no live node.
std::map<std::string, std::string> plan_ownership(const std::vector<std::string>& resources,
                                                  std::vector<planned_node> nodes);

// The kind of a resource: its name before the first '-' ("mm", "sessions").
std::string resource_kind(const std::string& resource);

// The fair share: ceil(resources / nodes), 0 with no node.
std::size_t fair_share(std::size_t resources, std::size_t nodes);

}  // namespace mm::cluster
