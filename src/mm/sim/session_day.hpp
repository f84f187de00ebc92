// A simulated day of session matchmaking: players join as the population
// model says, alone or in parties, queue in the product's real session queue
// (the engine of mm/session/session_queue.hpp, ticked on a virtual clock
// exactly as its actor ticks it), play their match, and after it either
// queue again or leave. A match may lose a party before its end; with
// backfill, the match then registers its open seats with the queue, which
// fills them in its ticks (the placed players join at once) until the match
// ends. Deterministic for a seed; single-threaded; no wall clock is read
// except to report how long the run took.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "mm/session/latency.hpp"
#include "mm/session/queue_config.hpp"
#include "mm/sim/figures.hpp"
#include "mm/sim/population.hpp"

namespace mm::sim {

struct session_day_config {
  session::queue_config queue;     // the queue every player joins, alone
  session::latency_model latency;  // datacenters, maps, distance estimate
  // Arrivals, sorted by time. Those before 0 fall in the warm-up.
  std::vector<join> joins;
  double days = 1;  // simulated length; the report has 24 hours a day
  // Simulated before the first reported hour, so that the day does not
  // start empty: the warm-up's joins have negative times (schedule_joins
  // with start_s = -warm_up). Nothing of it is reported except the tickets
  // it hands over (carried_in).
  std::chrono::seconds warm_up{0};
  std::chrono::seconds match_length{300};
  double play_again = 0.75;  // share of parties that queue again after a match
  std::chrono::seconds between_matches{30};
  // Each join is a party of 1, 2, 3... players with these weights (index 0:
  // alone), who queue, play and leave together; its players are near each
  // other in MMR. Empty: everyone alone. At most the queue's
  // max_party_size (and 8) players.
  std::vector<double> party_sizes;
  // The chance that a match loses one of its parties before its end, at a
  // moment drawn uniformly within the match: its players leave the game.
  double leave_rate = 0;
  // Whether a match that lost a party registers its open seats for backfill
  // (and stops backfilling at its end).
  bool backfill = false;
  // MMR of players whose join gives none: a normal distribution.
  double mmr_mean = 1500, mmr_stddev = 300;
  // Attributes the queue's rules read, drawn for each player when it joins:
  // a string among `values` (each equally likely), a number from a normal
  // distribution.
  struct string_attribute {
    std::string name;
    std::vector<std::string> values;
  };
  struct number_attribute {
    std::string name;
    double mean = 0, stddev = 0;
  };
  std::vector<string_attribute> strings;
  std::vector<number_attribute> numbers;
  std::uint64_t seed = 1;
};

// One hour of the run (or, as `totals`, the whole run). Tickets are counted
// in the hour they end, players in the hour they join.
struct session_hour {
  std::uint32_t hour = 0;  // since the start; hour of day = hour % 24
  std::uint64_t joins = 0;
  std::uint64_t tickets = 0;  // created (joins and players queueing again)
  std::uint64_t matches = 0, bot_matches = 0;
  std::uint64_t matched_players = 0;  // players in this hour's matches
  // Online players (waiting, playing or between matches), sampled every
  // minute: their mean and the highest sample.
  double concurrent_mean = 0;
  std::uint64_t concurrent_peak = 0;
  distribution time_to_match_s;  // of the tickets matched
  distribution rtt_ms;           // each matched player's RTT to the chosen datacenter
  // Tickets that ended, by the latency stage they had reached: matched while
  // ideal, while expanded, as warm bodies; failed (latency stages ran out,
  // or gave up); given a bot match.
  std::uint64_t ideal = 0, expand = 0, warm_body = 0, failed = 0, bot = 0;
  // Matches formed with fewer players than the queue's max_players.
  std::uint64_t underfilled_matches = 0;
  // Seats opened by parties that left a running match, those filled again
  // (backfill) before the match ended, and the time each took to fill.
  std::uint64_t seats_opened = 0, seats_refilled = 0;
  distribution refill_s;
  // Of the seats of running matches, the share empty, sampled every minute
  // (a seat is empty from its party's leaving until a placed player joins).
  double empty_seat_share = 0;

  std::uint64_t ended() const { return ideal + expand + warm_body + failed + bot; }
};

struct session_day_report {
  std::vector<session_hour> hours;
  session_hour totals;              // concurrent_* over the whole run
  double peak_at_s = 0;             // when the most players were online (first time)
  std::uint64_t still_waiting = 0;  // tickets waiting when the run ended
  // Tickets created in the warm-up that ended in the day or still wait: the
  // day's tickets + carried_in = those ended + still_waiting.
  std::uint64_t carried_in = 0;
  std::uint64_t players = 0;  // who joined in the day (not in the warm-up)
  double player_seconds = 0;  // simulated online time of all players in the day
  double wall_seconds = 0;    // how long the run took
  double engine_seconds = 0;  // of which in the session queue (add, tick)
};

// Throws mm::config_error when the queue cannot run with the latency model,
// and mm::error (invalid_argument) when it refuses a simulated player's
// ticket (a rule reads an attribute the players were not given).
session_day_report run_session_day(const session_day_config& c);

}  // namespace mm::sim
