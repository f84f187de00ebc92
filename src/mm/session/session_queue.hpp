// One session queue: its waiting tickets and its match loop.
//
// Every tick the loop drops the tickets past their give-up time, then takes
// the waiting tickets oldest first (ties in a seeded random order), each as
// the seed of a group once: it ranks the others by their weighted distance to
// the seed, builds the group greedily nearest first (re-checking every rule
// against the group as it is at each addition), validates the whole group,
// and on success assigns teams and picks the datacenter. When no valid group
// forms it drops the last ticket added and tries the next candidate, up to
// the queue's backtracking budget. Leftovers wait for the next tick.
//
// Invariants: a ticket is in at most one match; a player is in at most one
// waiting ticket; a party is never split across matches (and across teams
// only where the queue allows it); every rule holds at the match's formation
// for the thresholds of that moment; the chosen datacenter is within every
// ticket's current latency threshold.
//
// Plain C++, single-threaded: the actor that owns a queue calls it. A game's
// plug-in (session_plugin.hpp) may fast-track or reject new tickets and build
// matches its own way; session_queue is the queue without one. The member
// definitions are in session_queue_impl.hpp, which a game with its own
// plug-in includes; session_queue itself is compiled once, in the library.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "mm/engine/random.hpp"
#include "mm/session/backfill.hpp"
#include "mm/session/explain.hpp"
#include "mm/session/id_map.hpp"
#include "mm/session/lane_index.hpp"
#include "mm/session/latency.hpp"
#include "mm/session/queue_config.hpp"
#include "mm/session/session_plugin.hpp"
#include "mm/session/teams.hpp"
#include "mm/session/ticket.hpp"
#include "mm/session/ticket_rows.hpp"
#include "mm/session/waiting_ticket.hpp"

namespace mm::session {

struct add_result {
  ticket_id id = 0;
  // Tickets cancelled because one of their players is in this one now
  // (replace_existing); their owners are to be told.
  std::vector<ticket_id> replaced;
};

struct tick_result {
  std::vector<formed_match> matches;
  std::vector<ticket_id> expired;  // past their give-up time
  std::vector<ticket_id> failed;   // latency stages ran out, no bots
  // Shared tickets whose claim was refused: another queue took them first.
  // They left this queue and their outcome is the other queue's to tell.
  std::vector<ticket_id> withdrawn;
  // Tickets placed into running matches (backfill), which left the queue
  // matched, and the reservations whose time ran out this tick.
  std::vector<backfill_placement> placed;
  std::vector<seat_reservation> reservations_expired;
};

// Claims shared tickets (ticket_request::shared) for an outcome in this
// queue: all of `ids` or none. Returns the ids another queue holds already
// (empty: all claimed). Called by the match loop before a match with a
// shared ticket forms, and before a shared ticket expires or fails.
using claim_hook = std::function<std::vector<ticket_id>(std::span<const ticket_id> ids)>;

struct queue_stats {
  std::uint64_t created = 0, matched = 0, cancelled = 0, expired = 0, failed = 0;
  std::uint64_t matches = 0, bot_matches = 0;
  std::uint64_t backtracks = 0;      // additions undone by the loop
  std::uint64_t fast_tracked = 0;    // tickets the plug-in fast-tracked
  std::uint64_t rejected_plans = 0;  // plug-in plans that failed the queue's check
  std::uint64_t withdrawn = 0;       // shared tickets another queue claimed first
  std::uint64_t backfilled = 0;      // tickets placed into running matches (also in matched)
  std::uint64_t placements = 0;      // reservations made
  std::uint64_t reservations_confirmed = 0, reservations_released = 0, reservations_expired = 0;
};

// A ticket ranked for a seed's group: its distance, then its tiebreak.
struct session_queue_candidate {
  double distance;
  std::uint64_t tiebreak;
  std::size_t ticket;  // index into the queue's waiting tickets
};

template <session_plugin Plugin>
class basic_session_queue {
 public:
  // Throws mm::config_error when the config cannot run.
  basic_session_queue(queue_config config, latency_model latency, std::uint64_t seed,
                      Plugin plugin = {});

  // A new waiting ticket created at `now`. Throws mm::error (invalid_argument)
  // with the offending field first in the message ("players[1].mmr: ...");
  // a ticket the plug-in rejects fails the same way, with its field.
  add_result add(const ticket_request& request, time_ms now);
  // The same with the caller's id (a server gives every ticket a public id
  // unique across its queues). Throws mm::error naming "id" when the id is 0
  // or waits already.
  add_result add(const ticket_request& request, time_ms now, ticket_id id);
  // Whether add() would take the ticket, but for its players waiting here
  // already: the same refusals (mm::error naming the field), nothing changed.
  // A server checks a replacing ticket before it cancels the ones it
  // replaces, so a refused request has no side effect.
  void check(const ticket_request& request, time_ms now);

  // A ticket handed over from an earlier run of this queue (restarted after
  // a crash): its own id and creation time, checked as add() checks a new
  // one. Later ids follow the highest restored. Throws mm::error naming "id"
  // when the id is 0 or waits already.
  add_result restore(const ticket_request& request, time_ms created, ticket_id id);

  // Cancels a waiting ticket; false when it is not waiting.
  bool cancel(ticket_id id);
  // Drops a shared ticket that left through another queue (counted as
  // withdrawn, not cancelled); false when it is not waiting.
  bool withdraw(ticket_id id);
  // The waiting ticket, or null.
  const waiting_ticket* find(ticket_id id) const {
    const std::uint64_t* at = index_.find(id);
    return at ? &tickets_[*at] : nullptr;
  }

  bool is_waiting(ticket_id id) const { return index_.contains(id); }
  std::size_t waiting() const { return tickets_.size(); }
  // The waiting tickets, in no particular order (for views and counts).
  const std::vector<waiting_ticket>& tickets() const { return tickets_; }
  // The waiting ticket a player is in, or 0.
  ticket_id ticket_of(player_id p) const;

  // One round of the match loop at `now`.
  tick_result tick(time_ms now);

  // Where shared tickets are claimed; unset: every claim succeeds.
  void set_claim_hook(claim_hook hook) { claim_ = std::move(hook); }

  // Backfill (backfill.hpp, session_queue_backfill.hpp). Errors are
  // mm::error naming the field first ("teams[1][0].mmr: ..."):
  // (invalid_argument) for a bad request, (conflict) when the match
  // backfills already (one request per match at a time), (limit_reached)
  // at the queue's max_backfills, (not_found) for a match or a reservation
  // the queue does not hold.
  void add_backfill(const backfill_request& request, time_ms now);
  // The players in the match now (its datacenter, priority and server may
  // change too): those holding a reserved seat who are listed have joined.
  void update_backfill(const backfill_request& request, time_ms now);
  // Stops backfilling (the match ends or is full for good): the match
  // leaves with its reservations, which are returned; nothing when the
  // queue does not hold it.
  std::optional<std::vector<seat_reservation>> stop_backfill(const std::string& match_id);
  // Players of a reservation joined the match (confirm) or will not
  // (release: their seats open again); `players` empty: all of them.
  void confirm_reservation(reservation_id id, const std::vector<player_id>& players);
  void release_reservation(reservation_id id, const std::vector<player_id>& players);
  // A match handed over from an earlier run with its reservations (ids and
  // times kept) and the players who joined it through confirmed seats
  // (`joined`: its players, team_of and mmr), checked as add_backfill()
  // checks a new one. Returns the reservations whose seats are no longer
  // open (the queue's teams shrank since, or their players are in the
  // match), which are dropped; joined players without a seat are left out.
  std::vector<seat_reservation> restore_backfill(const backfill_request& request,
                                                 time_ms registered,
                                                 std::vector<seat_reservation> reservations,
                                                 const seat_reservation& joined = {});
  const backfill_book& backfills() const { return backfills_; }
  // Where reservation ids come from (a server's public ids); unset: 1, 2...
  void set_reservation_ids(std::function<reservation_id()> next) {
    reservation_ids_ = std::move(next);
  }

  // Why waiting ticket `id` still waits at `now` (explain.hpp): nothing
  // when it is not waiting. Why running match `match_id` still has open
  // seats: nothing when the queue does not hold it. Read only; the cost is
  // one pass over the waiting tickets and options.limit candidates judged.
  std::optional<explanation> explain(ticket_id id, time_ms now,
                                     const explain_options& options = {}) const;
  std::optional<explanation> explain_backfill(const std::string& match_id, time_ms now,
                                              const explain_options& options = {}) const;

  // Whether the loop finds candidates through its index (the default) or by
  // scoring every waiting ticket against every seed: the same candidates,
  // for the tests and the benchmark's reference.
  void use_candidate_index(bool on) { use_index_ = on; }

  const queue_config& config() const { return config_; }
  const latency_model& latency() const { return latency_; }
  const queue_stats& stats() const { return stats_; }

  Plugin& plugin() { return plugin_; }

 private:
  // A group being built around a seed: its tickets and what the rules need of
  // it, kept up to date as tickets join.
  struct group {
    std::vector<std::size_t> members;  // indices into tickets_, the seed first
    // The seed's index (no_ticket for a running match's group) and the
    // running match's players (its anchor: what a seed is to other groups,
    // and the first of its values in `sums`), or null.
    std::size_t seed = 0;
    const waiting_ticket* anchor = nullptr;
    // A running match's place among the tick's anchors (lane_index::
    // place_anchors), whose walks start where the index placed it; none:
    // its walks search for their start.
    std::size_t anchor_slot = value_lane::npos;
    std::uint32_t players = 0;
    std::uint32_t count = 0;   // the members, and the anchor: the divisor of a group mean
    std::vector<double> sums;  // per rule: the members' numbers, summed (group means)
    // The datacenters within every member's threshold, those to which every
    // member's RTT is finite, and those within every member's ideal RTT
    // (read only under a latency policy): a bit each (ticket_rows' masks).
    std::vector<std::uint64_t> dcs, finite, ideal;
    // Per datacenter: the highest RTT of any member, kept up to date only
    // where a latency rule reads it (latency_rule_), and then only for those
    // in `dcs`, the only ones read.
    std::vector<double> worst_rtt;
    // At the seed's wait, per rule: its threshold and whether it filters; and
    // the seed's highest RTT (infinite without a policy).
    std::vector<double> threshold;
    std::vector<char> filters;
    double seed_max_rtt = 0;
  };

  // Whether the plug-in builds its own matches (hides build_match).
  static constexpr bool custom_build =
      !std::is_same_v<decltype(&Plugin::build_match), decltype(&standard_plugin::build_match)>;
  using candidate = session_queue_candidate;

  waiting_ticket compile(const ticket_request& r, time_ms now);
  // The players' values into `t`: ids, MMRs, RTTs per datacenter (missing
  // ones infinite when `needs_rtt`, else 0) and each rule's party value.
  // `field(i, rest)` names player i's field in an error.
  template <class Field>
  void compile_party(const std::vector<ticket_player>& party, const Field& field, bool needs_rtt,
                     waiting_ticket& t);
  // A record at its defaults, with spare buffers when there are some (no
  // allocation for its players, MMRs, values and RTTs while they fit).
  waiting_ticket fresh_record();
  // The buffers of `t`, which leaves, to the spare ones.
  void keep_buffers(waiting_ticket& t);
  // add() and restore(): `id` 0 takes the next one.
  // A request compiled and judged by the plug-in, or refused; the queue unchanged.
  waiting_ticket admit(const ticket_request& request, time_ms now);
  add_result add_as(const ticket_request& request, time_ms now, ticket_id id);
  std::uint32_t intern(const std::string& s);
  void remove_at(std::size_t i);
  // cancel() and withdraw(): the waiting ticket `id` removed and `counter`
  // counted; false when it is not waiting.
  bool remove_counted(ticket_id id, std::uint64_t& counter);
  // remove_at() without the lookups: the ticket at `i` leaves tickets_ and
  // rows_, the last one taking its place.
  void move_out(std::size_t i);
  // The highest RTT a ticket created at `created` accepts at `now` (infinite
  // without a policy).
  double max_rtt(time_ms created, time_ms now) const;

  // The loop's steps.
  group make_group(const std::vector<std::size_t>& members, time_ms now) const;
  // Asks the memory for what ranking seed `i`'s candidates reads first.
  void prefetch_seed(std::size_t i) const;
  // `g` emptied (its memory kept) and holding only the seed.
  void start_group(group& g, std::size_t seed, time_ms now) const;
  // `g` emptied, its rules' thresholds those after a wait from `since`.
  void relax(group& g, time_ms since, time_ms now) const;
  void join(group& g, std::size_t ticket, time_ms now) const;
  // Whether some datacenter is within every member's threshold (always, with
  // no latency policy).
  bool has_datacenter(const group& g) const {
    return !config_.latency ||
           std::any_of(g.dcs.begin(), g.dcs.end(), [](std::uint64_t w) { return w != 0; });
  }
  // Row i's datacenters within its threshold at `now` (ticket_rows::within).
  const std::uint64_t* within(std::size_t i, time_ms now) const {
    return rows_.within(i, config_.latency ? stage_after(*config_.latency, now - rows_[i].created)
                                           : latency_stage::warm_body);
  }
  // Where a group plays: a datacenter (the count of datacenters when there
  // is none) and its members' worst RTT there.
  struct placement {
    std::size_t datacenter;
    double worst_rtt;
  };
  // The `want` nearest candidates of `seed`, nearest first, into `best`.
  void rank_candidates(std::size_t seed, time_ms now, std::size_t want,
                       std::vector<candidate>& best);
  // The same for group `g` as it starts (its seed or its anchor alone),
  // whose value of the first difference rule is `v`.
  void rank_around(const group& g, double v, time_ms now, std::size_t want,
                   std::vector<candidate>& best);
  // Whether waiting ticket `c` may join `g` now; its distance to the group.
  bool admits(const group& g, std::size_t c, time_ms now, double* distance) const {
    return refused_by(g, c, now, distance) == admitted;
  }
  // The same with what refuses it: admitted, over_size, no_datacenter, or
  // the index of the rule.
  static constexpr std::int32_t admitted = -1, over_size = -2, no_datacenter = -3;
  std::int32_t refused_by(const group& g, std::size_t c, time_ms now, double* distance) const;
  std::vector<party_seat> seats(const group& g) const;
  bool teams_fit(const group& g, std::size_t ticket) const;
  // The whole group's check: its size, its teams (the team of each player, in
  // member order) and their balance. Nothing when it is not a valid match.
  std::optional<std::vector<std::uint32_t>> assign(const group& g, time_ms now) const;
  placement pick_datacenter(const group& g);
  // Claims the shared tickets among `members` (indices); when another queue
  // holds one, those leave as withdrawn and nothing forms.
  bool claim(const std::vector<std::size_t>& members, tick_result& out);
  // Ticket i is in a match, expired, failed or withdrawn this tick: the loop
  // passes over it from now on, in its lane entries too.
  void take(std::size_t i);
  formed_match make_match(const group& g, const std::vector<std::uint32_t>& team_of, placement at,
                          time_ms now);
  bool form(std::size_t seed, time_ms now, tick_result& out);
  // The loop's own build from ranked candidates: greedy, then backtracking;
  // or only the first greedy pass, which must fill the match.
  bool build_greedy(std::size_t seed, const std::vector<candidate>& candidates, time_ms now,
                    tick_result& out, bool first_pass_only);
  // A plug-in's plan for `seed`: the group, or nothing when it fails the check.
  bool form_planned(std::size_t seed, const std::vector<candidate>& candidates,
                    const build_decision& plan, time_ms now, tick_result& out);
  // Backfill's steps (session_queue_backfill.hpp).
  static constexpr std::size_t no_ticket = static_cast<std::size_t>(-1);
  running_match compile_match(const backfill_request& r, time_ms now);
  void start_anchor(group& g, const running_match& m, time_ms now) const;
  // Reservations that ran out, then each match with open seats in turn.
  void fill_backfills(time_ms now, tick_result& out);
  // Match `m`'s `want` nearest candidates, into candidates_ (`slot`: its
  // place in the tick's fill order, where its walks start).
  void rank_fill(const running_match& m, std::size_t slot, time_ms now, std::size_t want);
  bool fill(running_match& m, std::size_t slot, time_ms now, tick_result& out);
  // Greedy, nearest first: the tickets of `candidates` that take `m`'s
  // `open` seats (into fill_members_, in order); the players seated.
  std::size_t seat_candidates(const running_match& m, const std::vector<candidate>& candidates,
                              std::uint32_t open, time_ms now);
  // The team of each player of waiting tickets `members` (in order) in
  // `m`, or nothing when they do not fit its open seats or break its team
  // balance.
  std::optional<std::vector<std::uint32_t>> seat_parties(const running_match& m,
                                                         const std::vector<std::size_t>& members,
                                                         time_ms now) const;
  // Whether a player of waiting ticket `c` is in `m` or holds a seat there.
  bool already_in(const running_match& m, std::size_t c) const;

  // Explain's steps (session_queue_explain.hpp): the subject's rules and
  // stage after its wait from `since`; the other waiting tickets nearest
  // to value `v` of the first difference rule, at most `limit`, nearest
  // first (`pool`: how many wait besides `skip`; `backfill`: for a running
  // match, which never takes a ticket placed into new matches only); one
  // candidate's refusal counted into `e`; the verdict.
  void explain_subject(explanation& e, time_ms since, time_ms now) const;
  std::vector<std::size_t> nearest_to(double v, std::size_t skip, std::size_t limit,
                                      std::uint64_t& pool, bool backfill = false) const;
  void count_refusal(explanation& e, std::size_t c, refusal why, std::int32_t rule,
                     const explain_options& options, time_ms now) const;
  void explain_verdict(explanation& e, const std::vector<std::uint64_t>& players_at) const;

  // The team of each player of `members` (in order) from teams given by
  // player id, or nothing when they are not the queue's teams (their count,
  // their exact sizes) of exactly these players, each once.
  std::optional<std::vector<std::uint32_t>> planned_teams(
      const std::vector<const waiting_ticket*>& members,
      const std::vector<std::vector<player_id>>& teams) const;

  queue_config config_;
  latency_model latency_;
  Plugin plugin_;
  rng rng_;
  std::vector<waiting_ticket> tickets_;
  // The buffers of tickets that left (their players, MMRs, values, RTTs),
  // kept for the next ones: a tick that matches most of a queue frees
  // nothing, and the adds that follow allocate nothing. Waiting tickets and
  // spare buffers together never exceed the most tickets that ever waited
  // at once (peak_waiting_).
  struct spare_buffers {
    std::vector<player_id> players;
    std::vector<double> player_mmr, numbers, rtt;
  };
  std::vector<spare_buffers> spare_;
  std::size_t peak_waiting_ = 0;
  ticket_rows rows_;      // what the loop reads of tickets_, row for row
  id_map index_;          // ticket id -> its place in tickets_
  id_map player_ticket_;  // player id -> the ticket id it waits in
  std::unordered_map<std::string, std::uint32_t> interned_;
  ticket_id next_ticket_ = 1;
  std::uint64_t next_match_ = 1;
  int primary_ = -1;  // the first difference rule: the candidates' index
  // A rule of kind latency orders candidates by the RTT they would play at:
  // only then do groups keep their worst RTTs as tickets join.
  bool latency_rule_ = false;
  // The queue's only rule is the index's: a seed's candidates are ranked
  // from the lane entries alone, without reading their tickets.
  bool rank_from_lane_ = false;
  bool use_index_ = true;
  // Per tick, the candidates' index (lane_index.hpp); inactive without it,
  // and until the tick's lanes are built.
  lane_index lanes_;
  // Per ticket: the seed that considered it last (when a ticket may be in
  // more than one of the lanes a seed walks).
  std::vector<std::uint32_t> seen_;
  std::vector<char> taken_;  // per ticket: take() was called this tick
  // The ids and players of the tickets that leave at the end of a tick.
  std::vector<std::uint64_t> gone_ids_, gone_players_;
  std::uint32_t stamp_ = 0;
  // The groups of the seed in hand, reused from seed to seed: ranking its
  // candidates, and building its match.
  group rank_group_, build_group_;
  // The seed in hand's lane walks, its candidates, the positions of the
  // candidates in its group: their memory reused from seed to seed.
  std::vector<lane_index::walk> walks_;
  // The tick's seeds, in the order they are taken: oldest first, then by
  // tiebreak.
  struct seed_key {
    time_ms::rep created;
    std::uint64_t tiebreak;
    std::size_t ticket;
  };
  std::vector<seed_key> seeds_, seeds_scratch_;
  std::vector<candidate> candidates_;
  std::vector<std::size_t> chosen_;
  // The backfill step's: the tickets a running match's seats take, and
  // each match's anchor value, in fill order.
  std::vector<std::size_t> fill_members_;
  std::vector<double> anchor_values_;
  queue_stats stats_;
  claim_hook claim_;
  backfill_book backfills_;
  std::function<reservation_id()> reservation_ids_;
};

// The queue as configured, without a game's plug-in.
using session_queue = basic_session_queue<standard_plugin>;
extern template class basic_session_queue<standard_plugin>;

}  // namespace mm::session
