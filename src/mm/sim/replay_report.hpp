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

#include "mm/sim/session_replay.hpp"

namespace mm::sim {

// queue,hour,utc, then each side's figures (recorded_*, replayed_*).
// `epoch_unix_ms`: the unix time of hour 0, for the utc column.
std::string replay_rows_csv(const std::vector<replay_row>& rows, std::int64_t epoch_unix_ms);

// Writes replay_hours.csv, replay_queues.csv, the charts and index.html
// into `dir` (created if missing) and returns the page's path. `settings`:
// what was replayed, as (setting, value) rows. Throws mm::error
// (invalid_argument) naming a file that cannot be written.
std::filesystem::path write_replay_report(
    const session_replay_report& r, std::int64_t epoch_unix_ms,
    const std::vector<std::pair<std::string, std::string>>& settings,
    const std::filesystem::path& dir);

}  // namespace mm::sim
