// Tickets: one party waiting in a session queue, as the game submits it, and
// what becomes of it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mm/engine/types.hpp"
#include "mm/session/latency.hpp"

namespace mm::session {

using ticket_id = std::uint64_t;
// Engine time: milliseconds since an epoch the caller chooses (a virtual
// clock in tests and in the simulator, the steady clock in the server).
using time_ms = std::chrono::milliseconds;

// One player of a party.
struct ticket_player {
  player_id id = 0;
  double mmr = 0;
  // Attributes the queue's rules read by name.
  std::vector<std::pair<std::string, double>> numbers;
  std::vector<std::pair<std::string, std::string>> strings;
  std::vector<std::pair<std::string, std::vector<std::string>>> sets;
  // RTTs the game measured, by datacenter name; where one is missing the
  // queue estimates it from `location` (latency_model).
  std::vector<std::pair<std::string, double>> rtt_ms;
  std::optional<geo_point> location;
};

// A party asking for a match: 1 .. max_party_size players.
struct ticket_request {
  std::vector<ticket_player> players;
  // Unset: the queue's give_up_after.
  std::optional<std::chrono::milliseconds> give_up_after;
  // A player who already waits in a ticket: refuse (false) or cancel that
  // ticket and wait in this one (true).
  bool replace_existing = false;
  // The party also waits in other queues (a multi-queue ticket): its match,
  // expiry or failure here must first be claimed (claim_hook), so that it
  // leaves every queue at its first outcome and is never in two matches.
  bool shared = false;
  // Placed only into a new match, never into a running one (backfill): a
  // ticket that also waits in another partition's queues, whose match may
  // lose to that partition's at the commit and be undone, which a running
  // match's reservation cannot be.
  bool new_matches_only = false;
};

enum class ticket_state : std::uint8_t {
  waiting,
  matched,
  cancelled,  // by its owner, or replaced by a newer ticket of one of its players
  expired,    // its give-up time passed
  failed,     // its latency stages ran out (and the queue has no bots)
};

const char* to_string(ticket_state s);

// A match the loop formed.
struct formed_match {
  std::uint64_t id = 0;
  // Index into the queue's datacenters (their count when it has none).
  std::size_t datacenter = 0;
  // Players by team; without teams, one list.
  std::vector<std::vector<player_id>> teams;
  std::vector<ticket_id> tickets;  // oldest (the seed) first
  std::vector<time_ms> created;    // per ticket, in the same order: when it was created
  time_ms formed_at{0};
  double mmr_spread = 0;    // highest minus lowest player MMR
  double worst_rtt_ms = 0;  // the highest RTT to the chosen datacenter
  bool bot_match = false;   // one ticket whose latency stages ran out, with bots
};

}  // namespace mm::session
