// One session queue's configuration: match and team sizes, parties, rules,
// the staged latency policy and the match loop's budget. Checked as a whole
// at start; every problem names its key.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mm/session/latency.hpp"
#include "mm/session/rules.hpp"

namespace mm::session {

struct queue_config {
  std::string name;  // the queue key's config name, for errors and reports
  // Players per match. With teams, max_players is teams x team_size.
  std::uint32_t min_players = 2;
  std::uint32_t max_players = 2;
  // Teams: `teams` of `team_size` players each; 0 teams means no teams (a
  // free-for-all or co-op group).
  std::uint32_t teams = 2;
  std::uint32_t team_size = 1;
  std::uint32_t max_party_size = 1;
  // Whether a party may be split across teams (never across matches).
  bool split_parties = false;
  std::vector<rule> rules;
  // The staged latency policy; unset: latency neither filters nor orders and
  // the datacenter is the one with the lowest worst RTT.
  std::optional<latency_stages> latency;
  // Whether a ticket whose latency stages ran out gets a bot match instead
  // of failing.
  bool bots = false;
  std::chrono::milliseconds tick{1000};
  std::chrono::milliseconds give_up_after{60'000};  // a ticket's default
  // The match loop's budget per seed: candidates ranked (0: four per seat
  // of a match, at least 8), and additions undone and retried (backtracking)
  // before the next seed.
  std::uint32_t candidates = 0;
  std::uint32_t backtrack_steps = 32;
  // Backfill (backfill.hpp): how long a seat placed into a running match is
  // held for its player before it opens again, and the most running matches
  // the queue holds at once.
  std::chrono::milliseconds reservation_timeout{30'000};
  std::uint32_t max_backfills = 100'000;
  // For a server: the queue is split into one queue (and actor) per value
  // of this string attribute of its tickets (players' `strings`, the same
  // for every player of a party), named "<name>.<value>": a hot queue whose
  // tickets could never match across values (a region, a platform) spreads
  // over the cores. Empty: one queue. The engine itself ignores it.
  std::string shard_by;
  // Every field the same (a running queue takes a new config only when
  // it differs: session_reconfigure.hpp).
  bool operator==(const queue_config&) const = default;
};

// Whether `name` may name a queue in a server: 1 to 64 of a-z, 0-9, _ and -
// (it goes into URL paths and metric labels).
bool valid_queue_name(const std::string& name);

// The candidates a seed ranks: `candidates`, or its default.
std::uint32_t candidates_per_seed(const queue_config& c);

// Every problem of `c`, each naming its key under `prefix` (for example
// "queues.ranked."); empty when the queue can run.
std::vector<std::string> check(const queue_config& c, const std::string& prefix);

// Throws mm::config_error with every problem of `c`, one per line.
void validate(const queue_config& c, const std::string& prefix);

}  // namespace mm::session
