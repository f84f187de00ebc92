// A double that crosses the actor port as its IEEE-754 bits. CAF 0.17.6's
// own encoding of a double garbles a NaN into some finite number and never
// finishes on an infinity (the sender's network thread spins for ever), so a
// game's bad value would either pass as a good one or hang the game. As bits,
// a NaN or an infinity arrives as itself and the queue refuses it, as the
// HTTP API does. (The async MMR, a float, does the same in its serialize
// functions: src/mm/engine/generic_profile.hpp.)
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace mm::actors {

struct double_bits {
  double& value;
};

// For an inspect function's field list: f(..., as_bits(x.mmr), ...).
inline double_bits as_bits(double& x) {
  return {x};
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, double_bits& x) {
  if constexpr (std::is_void_v<typename Inspector::result_type>) {
    f(x.value);  // to_string: the number itself
  } else {
    auto bits = std::bit_cast<std::uint64_t>(x.value);
    auto result = f(bits);
    if constexpr (Inspector::writes_state) x.value = std::bit_cast<double>(bits);
    return result;
  }
}

}  // namespace mm::actors
