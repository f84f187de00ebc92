// Hashes whose values never change across runs, builds or machines: labels and
// bucket slots may be persisted, so std::hash (implementation-defined) is banned.
#pragma once

#include <cstdint>
#include <string_view>

namespace mm {

// FNV-1a, 64-bit, with the standard offset basis and prime.
constexpr std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// SplitMix64 finaliser: a bijective avalanche mix of one 64-bit word.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// Maps a uniformly mixed 64-bit value onto [0, n) without a division.
constexpr std::uint64_t reduce_range(std::uint64_t mixed, std::uint64_t n) {
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::uint64_t>((static_cast<u128>(mixed) * n) >> 64);
}

}  // namespace mm
