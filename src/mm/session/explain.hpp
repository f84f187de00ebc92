// Why a waiting ticket (or a running match with open seats) still waits:
// what basic_session_queue::explain and explain_backfill answer. Read only:
// the queue is not changed, and the cost is bounded by the candidates asked
// for (docs/session.md, "Why is my ticket waiting?").
//
// Each candidate is judged as the match loop judges a pair: the older of the
// two is the seed (seeds are taken oldest first, so its group is where the
// two would meet), its rules' thresholds are those after its wait, and each
// ticket's datacenters are those within its own latency stage now. For a
// running match the match is the seed, with the thresholds after the time
// since it registered. A pair the loop admits may still not form a match
// (a rule that compares with the group's mean, team balance, or a third
// ticket's datacenters): the verdict says "enough players", never "will
// match".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mm/session/latency.hpp"
#include "mm/session/rules.hpp"
#include "mm/session/ticket.hpp"

namespace mm::session {

// What keeps one candidate out of the subject's match.
enum class refusal : std::uint8_t {
  none,        // nothing: the two could be in one match
  rule,        // a rule that filters now (candidate_explanation::rule says which)
  players,     // the parties together are more than a match holds (or the open seats)
  teams,       // the parties cannot be seated in the queue's teams together
  datacenter,  // no datacenter within both latency stages now (the match's, for backfill)
  already_in,  // backfill: a player of it is in the match or holds a seat there
};
const char* to_string(refusal r);

// The queue-level answer.
enum class wait_verdict : std::uint8_t {
  no_candidates,    // no other ticket waits in the queue
  too_few_players,  // fewer compatible players than the match needs
  enough_players,   // enough compatible players: the next tick tries a match
};
const char* to_string(wait_verdict v);

// Times in ms from now; -1 where there is none (a rule at its limit, a
// stage that never ends).
struct rule_explanation {
  std::string name;
  rule_kind kind = rule_kind::difference;
  double threshold = 0;  // difference and team_balance: now (the subject's); others 0
  bool filters = true;   // false once the rule became optional
  std::int64_t next_expansion_in_ms = -1;  // the threshold grows then
  std::int64_t optional_in_ms = -1;        // the rule stops filtering then
};

struct candidate_explanation {
  ticket_id ticket = 0;
  std::uint32_t players = 0;
  double mmr = 0;  // the party's mean
  std::int64_t waited_ms = 0;
  refusal why = refusal::none;
  std::int32_t rule = -1;  // the refusing rule's index (why == rule)
};

struct explanation {
  std::string queue;                 // the queue's name
  bool running_match = false;        // the subject: a running match, or a waiting ticket
  std::int64_t waited_ms = 0;        // a ticket's wait, or the time since a match registered
  std::int64_t gives_up_in_ms = -1;  // a ticket's give-up time
  // A ticket's latency stage (none without a latency policy, and for a
  // match), when it moves on, and the highest RTT it accepts now (-1: any).
  bool has_stage = false;
  latency_stage stage = latency_stage::ideal;
  std::int64_t next_stage_in_ms = -1;
  double max_rtt_ms = -1;
  // The datacenters it may play at now (the first `max_listed_datacenters`
  // by index) and how many there are.
  std::vector<std::string> datacenters;
  std::uint32_t datacenter_count = 0;
  std::vector<rule_explanation> rules;
  // The party's players (a match: its open seats), and the players a match
  // needs besides them (a match: 1, any ticket that fits).
  std::uint32_t players = 0;
  std::uint32_t players_needed = 0;
  // The other waiting tickets, and those judged: the nearest `limit` by the
  // queue's first difference rule (oldest first without one).
  std::uint64_t waiting = 0;
  std::uint64_t examined = 0;
  // Per rule, the candidates it refused; then the other refusals.
  std::vector<std::uint64_t> refused_by_rule;
  std::uint64_t refused_players = 0, refused_teams = 0, refused_datacenter = 0,
                refused_already_in = 0;
  // The candidates nothing refused, and their players.
  std::uint64_t compatible = 0, compatible_players = 0;
  // Where most of those players could play with it (the datacenter shared
  // with the most of them; "" without a latency policy), and how many.
  std::string best_datacenter;
  std::uint64_t best_datacenter_players = 0;
  // The first `max_listed` candidates judged, nearest first.
  std::vector<candidate_explanation> nearest;
  wait_verdict verdict = wait_verdict::no_candidates;
  std::string summary;  // the verdict in a sentence
};

// The refusal that kept out the most of an explanation's candidates (the
// first in the order rules, players, teams, datacenter, already_in on a
// tie): `count` 0 when none kept any out.
struct top_refusal {
  refusal why = refusal::none;
  std::int32_t rule = -1;  // the rule's index (why == rule)
  std::uint64_t count = 0;
};
top_refusal most_refused(const explanation& e);

// The main reason of an explanation, as a short label for counts and
// metrics: "rule:NAME" (a rule), "datacenter", "players", "teams",
// "already_in" (the refusal that kept out the most candidates), or, when
// none kept any out, "too_few_players", "no_candidates" or
// "enough_players" (the verdict).
std::string wait_reason(const explanation& e);

struct explain_options {
  std::size_t limit = 1000;     // candidates judged at most
  std::size_t max_listed = 10;  // of them listed
  std::size_t max_listed_datacenters = 16;
};

}  // namespace mm::session
