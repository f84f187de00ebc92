// The session queues in partitions (docs/design.md, "Session queues over
// several nodes"): each partition is a session service of its own, with its
// own lease, so a cluster spreads the queues over its nodes. A queue's
// partition is a stable hash of its name, the same on every node and build.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mm/engine/stable_hash.hpp"

namespace mm::session {

// Which of `partitions` (at least 1) runs the queue `name`.
constexpr std::uint32_t queue_partition(std::string_view name, std::uint32_t partitions) {
  return static_cast<std::uint32_t>(
      reduce_range(mix64(fnv1a64(name)), partitions ? partitions : 1));
}

// The lease of partition `p`: "sessions" while there is one partition (as
// before partitions existed), else "sessions-0", "sessions-1"...
inline std::string partition_resource(std::uint32_t p, std::uint32_t partitions) {
  return partitions <= 1 ? std::string("sessions") : "sessions-" + std::to_string(p);
}

// The journal's service name of partition `p`: the server's own (`name`)
// while there is one partition, else "name/0", "name/1"... Their events are
// one stream, named `name` (ticket_journal.hpp, journal_batch::event_stream).
inline std::string partition_service(const std::string& name, std::uint32_t p,
                                     std::uint32_t partitions) {
  return partitions <= 1 ? name : name + "/" + std::to_string(p);
}

// The partition whose journal service is `service` (partition_service of
// `name`), or none when it is not one of the `partitions`.
inline std::optional<std::uint32_t> service_partition(std::string_view service,
                                                      std::string_view name,
                                                      std::uint32_t partitions) {
  if (service.size() <= name.size() + 1 || service.substr(0, name.size()) != name ||
      service[name.size()] != '/')
    return std::nullopt;
  std::uint32_t p = 0;
  for (const char c : service.substr(name.size() + 1)) {
    if (c < '0' || c > '9' || p >= partitions) return std::nullopt;
    p = p * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (p >= partitions) return std::nullopt;
  return p;
}

// The queue a name belongs to for partitioning: a shard ("coop.eu") goes
// with its queue ("coop"), so a sharded queue's shards share a partition.
constexpr std::string_view partitioned_name(std::string_view name) {
  return name.substr(0, name.find('.'));
}

// One partition's share of the queues: those whose name hashes to `index`
// (all of them when `count` is 1, as for a server alone).
struct partition_slice {
  std::uint32_t index = 0;
  std::uint32_t count = 1;

  constexpr bool holds(std::string_view queue) const {
    return count <= 1 || queue_partition(partitioned_name(queue), count) == index;
  }
};

// The services of the other partitions that run one of `queues`, besides
// partition `me` of `count` (a multi-queue ticket's guests), in the order
// of the queues, each once. `stream`: the services' common name.
inline std::vector<std::string> guest_services(const std::vector<std::string>& queues,
                                               const std::string& stream, partition_slice me) {
  std::vector<std::string> out;
  if (me.count <= 1) return out;
  for (const auto& q : queues) {
    const std::uint32_t p = queue_partition(partitioned_name(q), me.count);
    if (p == me.index) continue;
    std::string s = partition_service(stream, p, me.count);
    bool seen = false;
    for (const auto& o : out) seen = seen || o == s;
    if (!seen) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mm::session
