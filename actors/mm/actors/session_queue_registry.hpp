// The session service's queues by name: the configured ones, the shards of a
// queue split by a ticket attribute (`shard_by`: "coop.eu", made on first
// use), and queues made on first use from the default config, up to
// `max_queues` in all. With the queues in partitions (mm/session/partitions.hpp)
// it holds only its partition's: the others' configs are left out, and a
// ticket naming one is refused. Plain C++: the service starts an actor for each slot
// this hands out.
#pragma once

#include <caf/expected.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/session_messages.hpp"
#include "mm/session/partitions.hpp"
#include "mm/session/queue_config.hpp"

namespace mm::actors {

class session_queue_registry {
 public:
  session_queue_registry(const std::vector<session::queue_config>& queues,
                         std::optional<session::queue_config> default_queue, std::size_t max_queues,
                         session::partition_slice partition = {});

  // The slot of the queue a ticket for `name` goes to: a configured queue,
  // its shard for this ticket, or a new queue from the default config. An
  // error names `field` (or the shard attribute's field). `made` is set when
  // the slot is new: the caller starts it.
  caf::expected<std::size_t> place(const std::string& name, const session_ticket& t,
                                   const std::string& field, bool& made);
  // A queue by its full name (a shard's included), made when it may be: for
  // the tickets of an earlier run.
  std::optional<std::size_t> find_or_make(const std::string& full_name, bool& made);
  std::optional<std::size_t> find(const std::string& full_name) const;

  // Whether this partition runs the queue (every queue without partitions).
  bool holds(const std::string& name) const { return partition_.holds(name); }
  // A queue another partition runs, as a multi-queue ticket names it: no
  // error when it is configured there, or may be made from the default
  // config; else the error naming `field`. What that queue itself refuses
  // of a ticket is its partition's to say.
  std::optional<caf::error> check_elsewhere(const std::string& name,
                                            const std::string& field) const;

  // A new configuration (session_reconfigure.hpp): the slots whose config
  // changed, which their queues are to take. A slot whose queue is no longer
  // configured keeps its config and is closed to new tickets; one configured
  // again opens. A shard or a queue made from the template takes its base's
  // or the template's config.
  std::vector<std::size_t> reconfigure(const std::vector<session::queue_config>& queues,
                                       std::optional<session::queue_config> default_queue);
  bool closed(std::size_t slot) const { return closed_[slot]; }

  const session::queue_config& config(std::size_t slot) const { return slots_[slot]; }
  std::size_t size() const { return slots_.size(); }
  std::size_t max_queues() const { return max_queues_; }

 private:
  std::optional<session::queue_config> config_for_new(const std::string& name) const;
  std::size_t add(session::queue_config c);

  // The config of a queue named `name` under the current configuration.
  std::optional<session::queue_config> config_of(const std::string& name) const;

  std::vector<session::queue_config> slots_;
  std::vector<bool> closed_;  // by slot: no longer configured
  // The configured queues that are not split, by name.
  std::unordered_map<std::string, session::queue_config> configured_;
  std::unordered_map<std::string, std::size_t> by_name_;
  // Configured queues split by a ticket attribute: no slot of their own.
  std::unordered_map<std::string, session::queue_config> sharded_;
  // The configured queues (split or not) the other partitions run.
  std::unordered_map<std::string, bool> elsewhere_;
  std::optional<session::queue_config> default_queue_;
  std::size_t max_queues_;
  session::partition_slice partition_;
};

}  // namespace mm::actors
