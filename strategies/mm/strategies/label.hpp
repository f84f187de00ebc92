// What a bucketing strategy gives a player or a query: a label of one kind.
// The vocabulary of strategies/, which depends on nothing else of the project.
#pragma once

#include <cstdint>

namespace mm {

// One strategy's label for a player or a query, compared and hashed by value.
// Distinct labels are opaque values (often a stable hash); ranged labels are
// ordered indices stored as two's complement so that negative tiers work.
using label_value = std::uint64_t;

enum class label_kind : std::uint8_t { distinct, ranged };

}  // namespace mm
