// A player as stored in the player table (SPEC §9), before the game's model
// factory turns it into cache models.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "types.hpp"

namespace mm {

inline constexpr std::size_t row_attribute_count = 4;

struct player_row {
  player_id id = invalid_player;
  double mmr = 0;
  std::array<std::int64_t, row_attribute_count> attributes{};
  std::string payload;  // opaque game data
  bool is_bot = false;
  std::int64_t updated_at_unix_ms = 0;
};

// What a model factory says of a row.
enum class row_verdict : std::uint8_t {
  eligible,      // one or more models were produced
  not_eligible,  // a valid player who must not be offered (removed from the cache)
  malformed,     // the row cannot be read (counted and reported, never fatal)
};

}  // namespace mm
