// A dry run of a candidate configuration of the session queues
// (docs/operations.md, "A dry run before applying"): the queues' recorded
// tickets of the last hour (or another window) replayed under the version in
// force and under the candidate, side by side, with what really happened.
//
// The replays are mmsim replay's own (mm/sim/session_replay.hpp, the
// recording read as apps/server/recording_reader.hpp reads it, seed 1), so a
// dry run and `mmsim replay` of the same recording and candidate give the
// same figures. They never slow the live queues down: one dry run at a time,
// on a thread of its own at the lowest CPU priority (nice 19), stopped when
// it has used its CPU budget (both replays together, the reading included)
// or three times that in wall time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "json_codec.hpp"
#include "mm/sim/session_replay.hpp"
#include "server_config.hpp"

namespace mm::server {

struct dry_run_request {
  session_settings current, candidate;  // the candidate: the current with other queues
  std::int64_t current_version = 0;
  std::chrono::seconds window{3600};  // the tickets created in the recording's last window
};

// One side's figures, as mmsim replay reports them.
json replay_figures_json(const sim::replay_figures& f);

class dry_runner {
 public:
  // `flush`: writes what the recording holds to its files first (none: nothing).
  dry_runner(const server_config& c, std::function<void()> flush);

  // {"recording": {...}, "current": {...}, "candidate": {...}, "recorded": {...},
  //  "cpu_seconds", "wall_seconds"}. Throws mm::error: not_found without a
  // recording (sessions.record), limit_reached while another dry run runs or
  // when this one passes its budget, invalid_argument for a recording that
  // cannot be read.
  json run(const dry_run_request& r);

  std::chrono::milliseconds cpu_budget{20'000};

 private:
  json replay(const dry_run_request& r, const std::function<void()>& check_budget);

  const server_config& config_;
  std::function<void()> flush_;
  std::mutex running_;
};

}  // namespace mm::server
