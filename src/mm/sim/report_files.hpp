// The simulator's report: a CSV per table, an SVG per chart and one HTML page
// that shows the summary, the charts (inlined) and links the CSVs.
//
// Every CSV is deterministic for a seed: it holds simulated figures only,
// never the wall-clock time a run took (the page and the console say that).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mm/sim/async_day.hpp"
#include "mm/sim/session_day.hpp"

namespace mm::sim {

// The session day again with one setting changed.
struct sensitivity_run {
  std::string changed;  // "play_again=0.50", "ideal_ms=30"
  double play_again = 0;
  double ideal_ms = 0;
  session_day_report report;
};

struct sim_outputs {
  std::optional<session_day_report> session;
  std::vector<sensitivity_run> sensitivity;
  // The same day without backfill (when the day had backfill and parties
  // that leave their matches): the report shows the two side by side.
  std::optional<session_day_report> without_backfill;
  std::optional<async_day_report> async;
  // What was simulated, as (setting, value) rows for the page.
  std::vector<std::pair<std::string, std::string>> session_settings, async_settings;
};

std::string session_hours_csv(const session_day_report& r);
std::string sensitivity_csv(const std::vector<sensitivity_run>& runs);
// The backfill figures of the day, and of the day without backfill.
std::string backfill_csv(const session_day_report& with, const session_day_report* without);
std::string async_hours_csv(const async_day_report& r);
std::string async_fill_csv(const async_day_report& r);
std::string async_fairness_csv(const async_day_report& r);

// Writes `text` to `p`; throws mm::error (invalid_argument) naming a file
// that cannot be written.
void write_report_file(const std::filesystem::path& p, const std::string& text);
// The report's HTML page: `title`, a paragraph of `intro` (plain text),
// then `body` (HTML).
std::string report_page(const std::string& title, const std::string& intro,
                        const std::string& body);

// Writes the report into `dir` (created if missing) and returns the page's
// path. Throws mm::error (invalid_argument) naming a file that cannot be
// written.
std::filesystem::path write_report(const sim_outputs& o, const std::filesystem::path& dir);

}  // namespace mm::sim
