// Replaying a recording of the async traffic (docs/simulation.md,
// "Replay"): every engine call matchmakerd recorded (queries with their
// attacker, retries and exclusions; the game's cache updates, enrolments
// and removals) made again, at its recorded moment on a virtual clock, to
// engines of another (or the same) profile and options, which scan a player
// table given as it is, on their own scan tick. What the recording answered
// and what the replayed engines answer, side by side.
//
// A call goes to the engine of its recorded instance (mod the replayed
// instances). A query a recorded instance set passed on is one call per
// instance it reached, replayed as such. The table is not written: the
// game's writes to it while it was recorded are not in the recording.
// Deterministic for a seed and a table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mm/engine/generic_profile.hpp"
#include "mm/engine/options.hpp"
#include "mm/sim/figures.hpp"

namespace mm::sim {

struct recorded_call {
  enum class kind : std::uint8_t { query, update, enroll, remove } what = kind::query;
  std::uint32_t instance = 0;
  std::int64_t at_ms = 0;                        // since the replay's start
  match_request<generic_query> request;          // query
  match_type recorded = match_type::none_found;  // query: the recorded answer
  player_id recorded_opponent = invalid_player;  // query: success or fake
  player_id id = invalid_player;                 // update, remove
  std::vector<generic_model> models;             // update, enroll
};

struct async_replay_config {
  std::vector<recorded_call> calls;  // sorted by at_ms
  generic_profile_config profile;
  options engine;               // its random_seed is replaced by `seed`
  std::uint32_t instances = 1;  // engines: instance i owns the players with id mod N = i
  std::string database;         // the SQLite player table the engines scan (not written)
  // When the recorded engines started, cold (their sizing sample, then the
  // first scan after database_scan_first_delay); end_ms: the replay runs
  // (and scans) until then.
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  std::uint64_t seed = 1;
};

struct async_replay_figures {
  std::uint64_t queries = 0, success = 0, none_found = 0, fake = 0, invalid = 0;
  // |attacker's MMR - the opponent's MMR in the table| on success.
  distribution mmr_gap;
};

struct async_replay_row {
  std::int64_t hour = -1;  // since the replay's start; -1: the whole run
  async_replay_figures recorded, replayed;
};

struct async_replay_report {
  std::vector<async_replay_row> hours;
  async_replay_row totals;
  std::uint64_t same_opponent = 0;  // queries both answered with the same opponent
  std::uint64_t updates = 0;        // updates, enrolments and removals replayed
  std::uint64_t scans = 0, rows_scanned = 0;
  std::vector<match_type> replayed;  // per call (queries; others none_found)
  std::vector<player_id> opponents;  // per call: the replayed answer's opponent
  double wall_seconds = 0;
};

// Throws mm::config_error for unusable options, mm::error for the rest (a
// table that cannot be opened, calls not sorted).
async_replay_report replay_async(const async_replay_config& c);

}  // namespace mm::sim
