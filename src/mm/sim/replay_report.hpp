// The report of a replay (docs/simulation.md, "Replay"): what was recorded
// and what the replayed configuration did with the same tickets, side by
// side, over the run, per queue and hour by hour, as CSV files, SVG charts
// and one HTML page.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "mm/sim/async_replay.hpp"
#include "mm/sim/session_replay.hpp"

namespace mm::sim {

// queue,hour,utc, then each side's figures (recorded_*, replayed_*).
// `epoch_unix_ms`: the unix time of hour 0, for the utc column.
std::string replay_rows_csv(const std::vector<replay_row>& rows, std::int64_t epoch_unix_ms);

// hour,utc, then each side's query figures (recorded_*, replayed_*).
std::string async_replay_csv(const std::vector<async_replay_row>& rows, std::int64_t epoch_unix_ms);

// One replay for the page: its report, the unix time of its hour 0, and
// what was replayed as (setting, value) rows.
template <class Report>
struct replay_part {
  const Report* report = nullptr;  // null: not replayed
  std::int64_t epoch_unix_ms = 0;
  std::vector<std::pair<std::string, std::string>> settings;
};

// Writes the CSVs (replay_hours.csv, replay_queues.csv for sessions;
// replay_async_hours.csv), the charts and index.html into `dir` (created if
// missing) and returns the page's path. Throws mm::error (invalid_argument)
// naming a file that cannot be written.
std::filesystem::path write_replay_report(const replay_part<session_replay_report>& sessions,
                                          const replay_part<async_replay_report>& async,
                                          const std::filesystem::path& dir);

}  // namespace mm::sim
