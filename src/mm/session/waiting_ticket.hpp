// A waiting ticket as a session queue's match loop sees it: the party's
// players and the values its rules compare, compiled once when the ticket is
// added. Game plug-ins (session_plugin.hpp) read it.
#pragma once

#include <cstdint>
#include <vector>

#include "mm/session/ticket.hpp"

namespace mm::session {

struct waiting_ticket {
  ticket_id id = 0;
  time_ms created{0}, give_up_at{0};
  std::uint64_t tiebreak = 0;  // seeded: shuffles tickets created at the same time
  std::vector<player_id> players;
  std::vector<double> player_mmr;
  double mmr = 0;  // the party's mean
  // Per rule, the party's value: a number (difference), an interned label
  // (equality) or a sorted set of interned items (intersection). `labels`
  // is empty when the queue has no equality rule, `sets` when it has no
  // intersection rule.
  std::vector<double> numbers;
  std::vector<std::uint32_t> labels;
  std::vector<std::vector<std::uint32_t>> sets;
  std::vector<double> rtt;  // per datacenter: the party's worst RTT
  // Fast-tracked by the game's plug-in: the party is a match by itself and
  // never joins another ticket's group. `team_of` is the team of each player
  // (in `players` order) the plug-in chose, or empty for the queue's own.
  bool fast_track = false;
  std::vector<std::uint32_t> team_of;
  // Waits in other queues too (ticket_request::shared).
  bool shared = false;
  bool new_matches_only = false;  // ticket_request::new_matches_only
};

}  // namespace mm::session
