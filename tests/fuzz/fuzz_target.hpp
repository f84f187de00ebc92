// What every fuzz target shares: the libFuzzer entry point it defines, the
// seeds it can write, and a check that aborts (so libFuzzer and the corpus
// replay both see a failed property as a crash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace mm::fuzz {

inline void require(bool holds) {
  if (!holds) std::abort();
}

// Writes this target's seed corpus into `dir` (replay_main --write-seeds DIR).
void write_seeds(const std::string& dir);

inline void save(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace mm::fuzz
