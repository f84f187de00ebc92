// The player table (docs/design.md, Persistence): batched upserts and deletes, one transaction per
// batch, with bad rows reported and skipped rather than failing the batch.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mm/engine/player_row.hpp"
#include "mm/storage/database.hpp"

namespace mm {

// Player ids stored in SQLite must fit its signed 64-bit integers.
inline constexpr player_id max_stored_player_id = 0x7fffffffffffffffull;

struct row_problem {
  std::size_t index = 0;  // position in the batch (or line number for CSV)
  player_id id = invalid_player;
  std::string reason;
};

struct write_report {
  std::uint64_t written = 0;
  std::vector<row_problem> rejected;
};

// Why a row cannot be stored, or nullopt when it can.
std::optional<std::string> row_problem_of(const player_row& row);

// Inserts or replaces each valid row; rows with id 0, an id >= 2^63 or a
// non-finite MMR are reported and skipped. One transaction for the batch.
// A row without updated_at gets the current time.
write_report upsert_players(database& db, std::span<const player_row> rows);

// Deletes the given players; returns how many existed. One transaction.
std::uint64_t delete_players(database& db, std::span<const player_id> ids);

std::optional<player_row> find_player(database& db, player_id id);
std::uint64_t count_players(database& db);

// Up to `limit` rows with ids above `after`, in id order: one page of an export.
std::vector<player_row> players_after(database& db, player_id after, std::size_t limit);

}  // namespace mm
