// Imports players from CSV into the player table, for the demo and for teams
// bringing their own players. Columns, in order:
//   id, mmr[, attr0[, attr1[, attr2[, attr3[, is_bot]]]]]
// An optional header line starting with "id" is skipped, as are empty lines and
// lines starting with '#'. A bad row is reported with its line number and
// skipped; the good rows land, in transactions of `batch_size` rows.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string_view>

#include "mm/storage/player_table.hpp"

namespace mm {

struct csv_import_options {
  std::size_t batch_size = 10'000;
  std::size_t max_reported = 100;  // problems listed; all are counted
  // Called after each committed batch with the lines read so far.
  std::function<void(std::uint64_t lines)> progress;
};

struct csv_import_report {
  std::uint64_t lines = 0;
  std::uint64_t imported = 0;
  std::uint64_t bad_rows = 0;
  std::vector<row_problem> problems;  // index = line number (1-based)
};

// One CSV line to a row, or the reason it is not one.
std::optional<player_row> parse_csv_player(std::string_view line, std::string& problem);

csv_import_report import_players_csv(database& db, std::istream& in,
                                     const csv_import_options& o = {});

}  // namespace mm
