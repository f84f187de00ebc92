// The session service of a server, behind a switch whose handle never
// changes (mm/actors/session_switch.hpp): a server alone starts it at its
// start and stops it at its stop; a node of a cluster starts it when it takes
// the "sessions" lease and stops it before it frees the lease
// (docs/operations.md, "Several nodes").
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

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mm/actors/interface.hpp"
#include "mm/actors/session_journal.hpp"
#include "mm/actors/session_switch.hpp"
#include "mm/actors/ticket_event_feed.hpp"
#include "mm/session/public_id.hpp"
#include "mm/storage/player_store.hpp"
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
  // alone, one per cluster). `events` is the server's feed of ticket events.
  // `recording`: where the ticket stream is recorded (open_recording), or null.
  session_host(caf::actor_system& sys, const server_config& c, std::string service_name,
               std::shared_ptr<actors::ticket_event_feed> events,
               std::shared_ptr<ticket_recording> recording = nullptr);
  ~session_host();

  // The handle games and the HTTP API hold: passes to the running service.
  actors::session_interfaces::service handle() const { return handle_; }

  // Starts the service under `fence` (empty for a server alone). Throws when
  // the store cannot be read.
  void start(const write_fence& fence);
  // Stops it (idempotent); `served_by` names who serves the sessions now,
  // for the errors until the next start.
  void stop(const std::string& served_by = {});
  // Stops it at once, saving nothing: the lease was taken away, and the
  // journal's late writes would be refused. Every acknowledged ticket is in
  // the journal already, where the new owner reads it.
  void abandon();
  bool running() const { return static_cast<bool>(service_); }
  // The running service, for a thread that reads its books (ticket polls).
  std::shared_ptr<const actors::session_partitions> partitions() const { return partitions_; }
  // Whether the running journal's last write to the store failed (its
  // batch or its prune; the next one that succeeds clears it).
  bool journal_write_failed() const { return journal_health_->last_write_failed.load(); }
  // The ticket stream's recording (sessions.record), or null.
  const ticket_recording* recording() const { return recording_.get(); }
  // The queues of configuration version `version` (live_config.hpp): the
  // service runs them from now on, and each start runs them. The number of
  // running queues that changed. Throws mm::error when the service refuses
  // them (it keeps its queues).
  std::uint32_t apply_queues(std::int64_t version, std::vector<session::queue_config> queues);

 private:
  caf::actor_system& sys_;
  const server_config& config_;
  std::string name_;
  std::shared_ptr<actors::ticket_event_feed> events_;
  std::shared_ptr<ticket_recording> recording_;  // none without sessions.record.queues
  std::shared_ptr<actors::session_partitions> partitions_;
  actors::session_interfaces::service handle_;
  std::shared_ptr<session::id_source> ids_;
  actors::session_target& target() { return partitions_->target(0); }
  std::shared_ptr<actors::journal_health> journal_health_ =
      std::make_shared<actors::journal_health>();
  // start, stop, abandon and apply_queues, which come from other threads
  // (the cluster node's, the configuration's follower).
  std::mutex mutex_;
  std::vector<session::queue_config> queues_;  // in force
  std::int64_t queues_version_ = 0;            // their configuration version; 0: the file's
  write_fence fence_;                          // of the running service
  caf::actor service_;                         // invalid while stopped
};

}  // namespace mm::server
