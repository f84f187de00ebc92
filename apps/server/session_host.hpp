// The session services of a server, behind a switch whose handle never
// changes (mm/actors/session_switch.hpp): one, or one per partition of the
// queues (sessions.partitions, mm/session/partitions.hpp). A server alone
// starts them at its start and stops them at its stop; a node of a cluster
// starts a partition's when it takes its lease ("sessions", or "sessions-k"
// with partitions) and stops it before it frees the lease
// (docs/operations.md, "Several nodes").
//
// With partitions the services share the store's player claims (one
// waiting ticket per player across every partition, whatever node runs it)
// and one event stream; the feed follows that stream in the store
// (event_stream.hpp), so every node's feed holds every partition's events.
//
// A start reads back what the last owner left: the waiting tickets and kept
// outcomes from the ticket journal, the events for their followers, and the
// lobbies of the last graceful stop. Its journal writes are fenced by the
// lease: once another node has taken the sessions over, this node's late
// writes (a match, a cancel, a new ticket) are refused, so no ticket is
// matched twice and no caller is told of a write that was not kept.
// A stop stops the queues (every ticket is durable already), has the journal
// write what it holds, keeps the lobbies for the next owner and stops the
// service; until the next start, requests get errc::not_owned_here.
#pragma once

#include <atomic>
#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mm/actors/event_stream.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/session_journal.hpp"
#include "mm/actors/session_switch.hpp"
#include "mm/actors/ticket_event_feed.hpp"
#include "mm/session/public_id.hpp"
#include "mm/storage/player_store.hpp"
#include "partition_news.hpp"
#include "server_config.hpp"

namespace mm::server {

// The recording of sessions.record's queues (ticket_recording.hpp), or null
// when none is configured. Throws mm::error (invalid_config) naming
// sessions.record.dir when it cannot be written: called before the actor
// system starts, so that a bad directory stops the start.
std::shared_ptr<ticket_recording> open_recording(const server_config& c);

class session_host {
 public:
  // The journal and lobbies are kept under `service_name` (one per server
  // alone, one per cluster; "name/k" per partition). `events` is the
  // server's feed of ticket events.
  // `recording`: where the ticket stream is recorded (open_recording), or null.
  session_host(caf::actor_system& sys, const server_config& c, std::string service_name,
               std::shared_ptr<actors::ticket_event_feed> events,
               std::shared_ptr<ticket_recording> recording = nullptr);
  ~session_host();

  // The handle games and the HTTP API hold: passes to the running service.
  actors::session_interfaces::service handle() const { return handle_; }

  std::uint32_t partition_count() const { return partitions_->count(); }
  // Starts partition `p`'s service under `fence` (empty for a server
  // alone). Throws when the store cannot be read.
  void start(std::uint32_t p, const write_fence& fence);
  // Every partition's, unfenced: a server alone.
  void start_all();
  // Stops partition p's service (idempotent); `served_by` names who serves
  // it now, for the errors until the next start.
  void stop(std::uint32_t p, const std::string& served_by = {});
  void stop_all();
  // Stops it at once, saving nothing: the lease was taken away, and the
  // journal's late writes would be refused. Every acknowledged ticket is in
  // the journal already, where the new owner reads it.
  void abandon(std::uint32_t p);
  bool running(std::uint32_t p) const;
  // The names of the configured queues in force (a node of a cluster lists
  // them by partition, GET /api/cluster).
  std::vector<std::string> queue_names() const;
  // The running service, for a thread that reads its books (ticket polls).
  std::shared_ptr<const actors::session_partitions> partitions() const { return partitions_; }
  // Whether partition p's running journal's last write to the store failed
  // (its batch or its prune; the next one that succeeds clears it).
  bool journal_write_failed(std::uint32_t p) const {
    return runs_.at(p).health->last_write_failed.load();
  }
  // The ticket stream's recording (sessions.record), or null.
  const ticket_recording* recording() const { return recording_.get(); }
  // The queues of configuration version `version` (live_config.hpp): the
  // running services run them from now on (each its partition's), and each
  // start runs them. The number of running queues that changed. Throws
  // mm::error when a service refuses them (it keeps its queues; those
  // asked before it run the new ones).
  std::uint32_t apply_queues(std::int64_t version, std::vector<session::queue_config> queues);

 private:
  caf::actor_system& sys_;
  const server_config& config_;
  std::string name_;
  std::shared_ptr<actors::ticket_event_feed> events_;
  std::shared_ptr<ticket_recording> recording_;  // none without sessions.record.queues
  std::shared_ptr<actors::session_partitions> partitions_;
  actors::session_interfaces::service handle_;
  // A partition's ids carry its index: one source per partition, for the
  // life of the process, whichever starts it serves.
  std::vector<std::shared_ptr<session::id_source>> ids_;
  // With partitions: what the stream tells the partitions running here of
  // their multi-queue tickets (before the follower, which posts to it).
  partition_news news_;
  // With partitions: the feed follows the event stream in the store.
  std::unique_ptr<actors::stream_follower> follower_;
  std::string service_of(std::uint32_t p) const;
  void name_queues();  // names_ from queues_
  struct partition_run {
    std::shared_ptr<actors::journal_health> health = std::make_shared<actors::journal_health>();
    write_fence fence;   // of the running service
    caf::actor service;  // invalid while stopped
  };
  // start, stop, abandon and apply_queues, which come from other threads
  // (the cluster node's, the configuration's follower). A start (journal
  // load) or a stop (save) holds it for long: running() and queue_names()
  // never take it, so GET /api/cluster and the readiness check do not wait
  // behind them.
  mutable std::mutex mutex_;
  // By partition: set once its service is spawned, cleared when it stops.
  std::unique_ptr<std::atomic<bool>[]> running_;
  mutable std::mutex names_mutex_;             // guards names_ only, held briefly
  std::vector<std::string> names_;             // of queues_
  std::vector<partition_run> runs_;            // by partition
  std::vector<session::queue_config> queues_;  // in force
  std::int64_t queues_version_ = 0;            // their configuration version; 0: the file's
};

}  // namespace mm::server
