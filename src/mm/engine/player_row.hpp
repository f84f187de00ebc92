// A player as stored in the player table (docs/design.md, Persistence), before the game's model
// factory turns it into cache models.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "mm/engine/types.hpp"

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

// An MMR the product can hold: finite and within a 32-bit float (the cache
// stores MMRs as floats). Every way in (HTTP, CSV, the player table's writer)
// refuses the others with this one message, so a row that a scan could not
// use is never written.
inline std::optional<std::string> mmr_problem(double mmr) {
  if (!std::isfinite(mmr)) return "MMR is not a finite number";
  if (std::fabs(mmr) > std::numeric_limits<float>::max())
    return "MMR is out of range: it must fit a 32-bit float (magnitude at most 3.4e38)";
  return std::nullopt;
}

// What a model factory says of a row.
enum class row_verdict : std::uint8_t {
  eligible,      // one or more models were produced
  not_eligible,  // a valid player who must not be offered (removed from the cache)
  malformed,     // the row cannot be read (counted and reported, never fatal)
};

}  // namespace mm
