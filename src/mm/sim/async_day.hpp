// A simulated day of async matchmaking, run as production runs it: a player
// table in a SQLite file, the engine fed by the database scan on its tick
// (the scanner of mm/storage) and by the game's state updates, attacks
// answered by the real engine (mm/engine/engine.hpp) — all on a virtual
// clock, single-threaded, deterministic for a seed.
//
// The game around it: attackers arrive on the diurnal curve of where they
// live; a real opponent's fight is won or lost by the players' hidden skills
// and moves both MMRs (Elo); the defender gets a shield, during which the
// game's update has taken it out of the cache and the scan's view of the
// table leaves it out; new players join, some players stop playing (churn)
// and stay in the table as defenders. The same day is then run again with
// every opponent chosen uniformly among the eligible players (no shield, a
// possible match under the game's rule at the request's widest window)
// instead of by the engine, fights and shields included: the reference the
// offer fairness is compared with.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "mm/engine/generic_profile.hpp"
#include "mm/engine/options.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/sim/figures.hpp"
#include "mm/sim/population.hpp"

namespace mm::sim {

struct async_day_config {
  std::vector<place> places;          // where players live
  diurnal_curve curve;                // when they attack, by local hour
  std::uint32_t players = 20'000;     // in the table at the start
  double attacks_per_player_day = 4;  // by an active player, on a mean day
  double joins_per_day = 1'000;       // new players
  double churn_per_day = 0.02;        // share of active players who stop attacking
  double days = 1;
  // Simulated before the first reported hour (attacks, shields, joins,
  // churn, scans), so that the day starts with the shields and the cache of a
  // day already under way; nothing of it is counted.
  std::chrono::seconds warm_up{0};
  std::chrono::seconds shield{2 * 3600};  // after being attacked
  double elo_k = 32;
  // MMRs at the start and hidden skills: normal distributions. New players
  // start at new_player_mmr whatever their skill.
  double mmr_mean = 1500, mmr_stddev = 300, skill_stddev = 300;
  double new_player_mmr = 1500;
  std::uint32_t retries = 2;  // num_retries of each attack's request
  // The engine's options (cache size, buckets, scan tick...) and the game's
  // match rule (matchmakerd's demo profile: region must be equal, never the
  // own guild, another hero preferred). The seed of the options is replaced
  // by `seed`.
  options engine;
  generic_profile_config profile = demo_profile_config();
  // The values of each generic attribute (attr0..attr3), drawn uniformly for
  // each player whatever its place (0 or 1: always 0). The demo's: 4
  // regions, 2,000 guilds, 20 heroes, 8 leagues.
  std::array<std::uint32_t, generic_attribute_count> attribute_values{4, 2000, 20, 8};
  // The SQLite file to create (in a temporary directory), and beside it the
  // reference day's ("<database>.uniform"); neither may exist.
  std::string database;
  std::uint64_t seed = 1;
};

// The engine's options the default async day runs with: a cache of a fifth of
// the table, fake opponents on, the production scan tick (30 s).
options default_async_options(std::uint32_t players);

struct async_hour {
  std::uint32_t hour = 0;
  std::uint64_t attacks = 0, success = 0, none_found = 0, fake = 0;
  // FakeOpponent or NoneFound while the table held an eligible opponent (one
  // the uniform reference could have offered): what the cache missed.
  std::uint64_t missed = 0;
  distribution mmr_gap;        // attacker to defender, on Success
  std::uint64_t cached = 0;    // players in the cache at the hour's end
  double fill = 0;             // the cache's overall bucket fill then
  std::uint64_t shielded = 0;  // players under a shield then
  std::uint64_t joins = 0, churned = 0;
  std::uint64_t table_rows = 0;  // players in the table then
};

// How evenly offers went to defenders: over every player in the table at the
// end, offered or not.
struct offer_fairness {
  std::uint64_t offers = 0;
  double max_over_mean = 0;  // the most-offered player's offers / the mean
  double gini = 0;
  double never_offered = 0;  // share of players never offered
  // The Lorenz curve: the share of all offers that went to the least-offered
  // 0%, 5%, ..., 100% of players (21 points; the diagonal is perfect equality).
  std::vector<double> lorenz;
};

// The bucket fill at one moment: overall and over the buckets.
struct fill_sample {
  double at_s = 0;
  std::uint64_t buckets = 0, players = 0;
  double overall = 0, lowest = 0, median = 0, highest = 0;
};

struct async_day_report {
  std::vector<async_hour> hours;
  async_hour totals;
  // The engine's offers, and those of the reference day's uniform choice.
  offer_fairness engine, uniform;
  std::vector<fill_sample> fill;  // every 10 minutes
  std::uint64_t players = 0;      // in the table at the end
  std::uint64_t scans = 0, rows_scanned = 0, rebalances = 0;
  double player_seconds = 0;     // players in the table x simulated time
  double wall_seconds = 0;       // the day through the engine
  double reference_seconds = 0;  // the reference day
  // Of the wall time: in the engine (queries, updates, applying scans and
  // rebalancing), and in SQLite (writing the table, reading the scans).
  double engine_seconds = 0, database_seconds = 0;
};

// Throws mm::config_error for unusable options, mm::error for the rest
// (invalid values, a database that cannot be created).
async_day_report run_async_day(const async_day_config& c);

}  // namespace mm::sim
