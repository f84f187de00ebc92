// Replaying a recorded ticket stream through the session engine under
// another (or the same) configuration, on a virtual clock
// (docs/simulation.md, "Replay").
//
// The recorded tickets join at their recorded times, and each queue runs
// its match loop when the recorded one did, with its seed (when the
// recording has them and the tick is unchanged): the same configuration
// then gives the same matches. The players' own
// actions are replayed as they were: a ticket its owner cancelled is
// cancelled at the same moment if it still waits in the replay, and a
// player's newer ticket replaces one of theirs that still waits. Every
// other outcome (matched, expired, failed) is the replayed engine's own.
// What the recording cannot say is not simulated: tickets arrive when they
// did whatever the replay did to their players before (a player matched
// sooner does not queue again sooner), and running matches' backfill
// requests are not recorded, so a ticket placed into one is replayed as a
// ticket that waits for a new match.
//
// Deterministic for a seed; single-threaded; no wall clock read except to
// say how long the run took.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mm/session/latency.hpp"
#include "mm/session/queue_config.hpp"
#include "mm/session/ticket.hpp"
#include "mm/sim/figures.hpp"

namespace mm::sim {

// How a ticket ended, as recorded or as replayed.
struct ticket_end {
  // waiting: no outcome before the end (of the recording, of the replay).
  session::ticket_state state = session::ticket_state::waiting;
  std::int64_t at_ms = 0;    // since the replay's start
  std::string queue;         // where it ended (matched: the match's queue)
  double mmr_spread = 0;     // matched: the match's highest minus lowest MMR
  double worst_rtt_ms = -1;  // matched: the match's highest RTT (-1: no datacenter)
  bool bot = false;          // a bot match
  bool placed = false;       // placed into a running match (backfill)
  // Matched: the match's tickets, as recorded ids, sorted.
  std::vector<std::string> match;
  // Replayed: not empty when the replayed configuration (its routing, or a
  // queue's rules) refused the ticket: why, naming the field.
  std::string refused;
};

struct replay_ticket {
  std::string id;               // the recorded public id
  std::int64_t created_ms = 0;  // since the replay's start, >= 0
  // >= 0: the recorded queue ran a tick at this moment (at or after its
  // creation) before the ticket reached it; the replay adds it just after
  // that tick, as created at created_ms. -1: it joins at its creation.
  std::int64_t late_after_ms = -1;
  // >= 0 (recorded cancelled only): the recorded queue let the ticket go at
  // this moment on its owner's cancel, before its outcome was written at
  // recorded.at_ms; the replay cancels it then. -1: at recorded.at_ms.
  std::int64_t cancelled_ms = -1;
  // The queues it waits in, as the replayed configuration routes it (a
  // sharded queue's shard), the first being the one it was created for.
  std::vector<std::string> queues;
  session::ticket_request request;
  ticket_end recorded;
  // Not empty: the replayed configuration refuses the ticket (why, naming
  // the field); it is counted, not replayed.
  std::string refused;
};

// When the replay lets a ticket its owner cancelled go (if it still waits).
inline std::int64_t owner_cancel_ms(const replay_ticket& t) {
  return t.cancelled_ms >= 0 ? t.cancelled_ms : t.recorded.at_ms;
}

struct session_replay_config {
  // The replayed configuration of every queue a ticket names, and the
  // recorded one (for the stages of the recorded outcomes; a queue missing
  // there is classified with the replayed one).
  std::vector<session::queue_config> queues, recorded_queues;
  session::latency_model latency;
  std::vector<replay_ticket> tickets;  // sorted by created_ms
  std::int64_t end_ms = 0;             // the replay runs until then
  // Queues without a recorded seed get seed, seed + 1... in name order.
  std::uint64_t seed = 1;
  // By queue name: the moments the recorded queue ran its match loop
  // (sorted; the replay runs it then, and only then), and the seed it ran
  // with. A queue without recorded ticks runs on the grid of its tick
  // (multiples of it since 0).
  std::map<std::string, std::vector<std::int64_t>> ticks;
  std::map<std::string, std::uint64_t> seeds;
  // Called every few thousand steps of the replay (none: never): it throws
  // to stop a replay that has run past its budget (a dry run's CPU time).
  std::function<void()> check_budget;
};

// One side's figures over a set of tickets (those created in an hour, or for
// a queue, or all).
struct replay_figures {
  std::uint64_t tickets = 0;
  std::uint64_t matched = 0, cancelled = 0, expired = 0, failed = 0, waiting = 0, refused = 0;
  // Of the matched: by the latency stage reached, with bots, placed into
  // running matches.
  std::uint64_t ideal = 0, expand = 0, warm_body = 0, bot = 0, placed = 0;
  distribution time_to_match_s, mmr_spread, worst_rtt_ms;
};

struct replay_row {
  std::string queue;       // the queue the tickets were created for; empty: every queue
  std::int64_t hour = -1;  // since the replay's start; -1: the whole run
  replay_figures recorded, replayed;
};

struct session_replay_report {
  std::vector<replay_row> hours;   // every queue together, hour by hour
  std::vector<replay_row> queues;  // per queue, over the run
  replay_row totals;
  // Recorded matches (of new matches, not placements) whose tickets the
  // replay put together in one match again: how many of how many tickets.
  std::uint64_t same_match = 0, recorded_matched = 0;
  std::uint64_t replaced = 0;        // tickets a newer ticket of a player replaced in the replay
  std::vector<ticket_end> replayed;  // per ticket, in the config's order
  double wall_seconds = 0;
};

// Throws mm::config_error when a queue cannot run with the latency model,
// and mm::error (invalid_argument) when a ticket names a queue the config
// lacks or the tickets are not sorted.
session_replay_report replay_sessions(const session_replay_config& c);

// The latency stage a matched ticket reached after `waited` in a queue of
// config `q` ("ideal" without a latency policy).
session::latency_stage stage_of(const session::queue_config& q, session::time_ms waited);

}  // namespace mm::sim
