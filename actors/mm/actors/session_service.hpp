// Every session queue of a server behind one actor, the handle a game holds
// (session_interfaces::service). The service routes; it holds no ticket:
//
// - routing: a ticket goes to its queue by name (session_queue_registry: a
//   configured queue, a shard of a queue split by `shard_by`, or a queue
//   made on first use), and a cancel or status by the ticket's public id,
//   which the service's books map to its queues;
// - one player, one ticket: across every queue, a player waits in at most
//   one ticket (ticket_book). A second ticket is refused (errc::conflict,
//   naming the field) or, with replace_existing, replaces the first once its
//   cancel is durable. A multi-queue ticket waits in several queues and
//   leaves all of them at its first outcome (session::ticket_claims);
// - ids: public ids from the deployment's id source
//   (mm/session/public_id.hpp), never reused and not guessable; a ticket
//   belongs to the credential that created it;
// - durability: the queues write every record of their tickets' lives to
//   the journal (session_journal.hpp) before anyone is told; the journal
//   tells the service what it wrote, and the service then tells the owners,
//   keeps the outcomes for the retention, and drops the tickets from its
//   books;
// - supervision: each queue runs behind a supervisor
//   (session_queue_supervisor.hpp) that starts it again from the journal;
// - the lobbies: passed on to the lobbies actor, restarted empty after a crash.
#pragma once

#include <caf/all.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mm/actors/backfill_owners.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/request_bucket.hpp"
#include "mm/actors/restart_backoff.hpp"
#include "mm/actors/session_journal.hpp"
#include "mm/actors/session_lobbies_actor.hpp"
#include "mm/actors/session_queue_registry.hpp"
#include "mm/actors/session_queue_supervisor.hpp"
#include "mm/actors/session_reconfigure.hpp"
#include "mm/actors/ticket_book.hpp"
#include "mm/actors/ticket_event_feed.hpp"
#include "mm/actors/ticket_recorder.hpp"

namespace mm::actors {

struct session_service_config {
  std::vector<session::queue_config> queues;
  // Unset: only the configured queues exist. Set: a ticket for another name
  // makes a queue of that name with this config.
  std::optional<session::queue_config> default_queue;
  session::latency_model latency;  // the datacenters every queue uses
  std::size_t max_queues = 256;    // configured ones included
  // Which queues it runs when the queues are in partitions (each partition a
  // service of its own, mm/session/partitions.hpp); all of them by default.
  session::partition_slice partition;
  std::size_t max_queues_per_ticket = 8;
  std::uint64_t seed = 1;
  restart_backoff backoff;
  session::lobby_config lobbies;
  std::vector<lobby_registration> restored_lobbies;  // of an earlier run
  // Backfill's bounds per credential (session_service_backfills.hpp).
  std::size_t max_backfills_per_credential = 10'000;
  double backfill_requests_per_s = 100;
  double backfill_burst = 200;
  // Explanations a second, all callers together (session_service_explain.hpp);
  // as many at once after a quiet second.
  double explains_per_s = 100;
  // How often each queue samples why its tickets wait (0: never;
  // session_queue_actor_config::wait_reasons_every).
  std::chrono::milliseconds wait_reasons_every{5000};
  // The ticket stream's recording, if any (ticket_recorder.hpp).
  std::shared_ptr<ticket_recorder> recorder;

  // Durability (session_journal.hpp).
  // The journal's own connection; none: tickets are not durable (benchmarks).
  std::shared_ptr<player_store> store;
  std::shared_ptr<journal_health> journal_writes;  // its last write, for readiness; may be null
  std::string service_name = "matchmakerd";
  std::int64_t unix_epoch_ms = 0;  // unix time of the service's start (engine time 0)
  std::shared_ptr<session::id_source> ids;
  session_journal_contents restored;  // what load_session_journal read at the start
  std::chrono::milliseconds outcome_retention{600'000};
  std::size_t max_outcomes = 100'000;
  std::size_t journal_batch = 4096;
  // Other services share the store and its players (the session queues in
  // partitions): one waiting ticket per player holds across all of them
  // through claims in the store (session_journal_config::claims). A new
  // ticket is then taken into its queue once written, one transaction later
  // than alone. Off: this service's books keep the rule.
  bool shared_claims = false;
  // The event sequence it shares with the other partitions
  // (session_journal_config::event_stream); empty: its own.
  std::string event_stream;
  // With shared claims and an event stream, each new running match's id is
  // claimed across the partitions too (by the journal, claim_atom), so an
  // id names one match whatever partition holds it and any node finds
  // which; otherwise this service's books keep the ids unique.
  bool detached_journal = true;  // false on the deterministic test scheduler
  // Where every committed event goes, for those who follow them (none: nobody).
  std::shared_ptr<ticket_event_feed> events;
  // Called after each commit that wrote events (may be empty): with an event
  // stream the server's feed follows the stream in the store instead, and
  // this tells its follower to read now (on the service's thread: it must
  // only post work elsewhere).
  std::function<void()> events_committed;
  // The books, when another thread reads them too (ticket_book.hpp: the
  // HTTP server's ticket polls); none: the service makes its own. Open from
  // the end of the restore to the service's exit.
  std::shared_ptr<ticket_book> book;
};

using session_restart_atom = caf::atom_constant<caf::atom("sesrestart")>;
using session_save_atom = caf::atom_constant<caf::atom("sessave")>;
using elsewhere_atom = caf::atom_constant<caf::atom("elsewhere")>;

// The service actor: the game-facing service, the journal's listener, the
// lobbies' restart timer, and a graceful stop.
using session_service_actor = session_interfaces::service::extend_with<journal_listener>::extend<
    caf::reacts_to<session_restart_atom>,
    // A graceful stop: every queue stops (none restarts) and the journal
    // writes what it holds; true once done. The lobbies keep serving.
    caf::replies_to<session_save_atom>::with<bool>,
    // A new configuration (session_reconfigure.hpp): the number of queues
    // that changed, once each runs under its new config; or the error
    // naming the key, nothing changed.
    caf::replies_to<configure_atom, queue_set>::with<std::uint32_t>>::
    extend<
        // With partitions (session_service_guests.cpp), from the node's reader of
        // the event stream: tickets of other partitions that also wait in this
        // one's queues (by public id), new since its start; and outcomes of the
        // multi-queue tickets this partition holds that another wrote.
        caf::reacts_to<guest_atom, std::vector<std::uint64_t>>,
        caf::reacts_to<elsewhere_atom, std::vector<ticket_outcome>>>;

struct session_service_state {
  session_service_state() = default;  // not an aggregate (CAF)
  session_service_config config;
  caf::actor_clock::time_point epoch;  // every queue's time 0
  std::unique_ptr<session_queue_registry> registry;
  std::vector<session_queue_supervisor_actor> slots;  // by registry slot
  std::shared_ptr<ticket_book> book;
  std::shared_ptr<session::ticket_claims> claims;
  session_journal_actor journal;
  // Which tickets wait in the queues of other partitions too.
  contested_tickets contest;
  // Guests read while one of their players had a create of its own here on
  // its way to the store (which refuses one of the two): asked again soon,
  // at most max_guest_retries times (session_service_guests.cpp).
  std::unordered_map<std::uint64_t, std::uint32_t> guest_retries;
  // Owners of waiting tickets, monitored while they have any.
  std::unordered_map<caf::actor_addr, std::size_t> owners;
  // The lobbies actor (invalid while it restarts; it restarts empty, and a
  // game server whose update is refused registers its lobby again).
  session_interfaces::lobbies_actor lobbies;
  std::uint32_t lobby_crashes_in_a_row = 0;
  caf::actor_clock::time_point lobbies_started;
  bool saving = false;
  // The running matches (backfill): their owners and bounds per credential.
  backfill_owners backfills;
  // The explanations every caller may still ask for now (explains_per_s):
  // each costs its queue a pass over its waiting tickets.
  request_bucket explain_rate;
  static inline const char* name = "mm.session_service";
};

using session_service_pointer = session_service_actor::stateful_pointer<session_service_state>;

// Starts the queue of registry slot `slot` behind its supervisor, with the
// waiting tickets and running matches of an earlier run (the service's own
// step, shared with session_service_backfills.cpp).
void start_slot(session_service_pointer self, std::size_t slot,
                std::vector<durable_ticket> restored, std::vector<backfill_state> backfills);

// The service's clock in unix milliseconds.
std::int64_t unix_now(session_service_pointer self);

// The waiting tickets of the last run (the partition's own and its guests)
// go back into the books and their queues, whose supervisors start
// (session_service_guests.cpp).
void take_back(session_service_pointer self);

// A ticket that left, its outcome written (by this partition or another):
// out of the books, its other queues here told, its owner told, its
// outcome kept. Nothing when the books hold its outcome already.
void ticket_left(session_service_pointer self, ticket_outcome& ev);

// Multi-queue tickets over partitions (session_service_guests.cpp): the
// tickets of other partitions that wait in this one's queues too, taken in
// (at the start, `restored` is each slot's list to add them to; later they
// are sent to their queues); the new ones among ids, read from the store;
// outcomes another partition wrote; and matches that lost a ticket to such
// an outcome, whose other tickets wait again.
void take_in_guests(session_service_pointer self, std::vector<durable_ticket> guests,
                    std::vector<std::vector<durable_ticket>>* restored);
void ask_for_guests(session_service_pointer self, const std::vector<std::uint64_t>& ids);
void left_elsewhere(session_service_pointer self, std::vector<ticket_outcome>& outcomes);
void matches_lost(session_service_pointer self, const std::vector<ticket_outcome>& outcomes);

// The service's step of a new configuration (session_service_control.cpp).
caf::result<std::uint32_t> reconfigure_queues(session_service_pointer self, queue_set& next);
// A graceful stop: every queue stops, then the journal writes what it holds.
caf::result<bool> save_and_stop_queues(session_service_pointer self);

// Every queue config (and the default) is tried at the start: one that
// cannot run makes the service exit at once with mm::config_error, naming
// the key. Check them before spawning (session::validate) to report them.
session_service_actor::behavior_type session_service(session_service_pointer self,
                                                     session_service_config config);

}  // namespace mm::actors
