// A fuzz target without libFuzzer: runs it on every file of the given
// directories (the seed corpus and any crash files), so the normal build and
// CI check each target against its corpus under the sanitizers.
//
//   replay DIR...                 every file, in name order
//   replay --write-seeds DIR      (re)write the target's seed corpus
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fuzz_target.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") {
    fs::create_directories(argv[2]);
    mm::fuzz::write_seeds(argv[2]);
    return 0;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i)
    for (const auto& f : fs::recursive_directory_iterator(argv[i]))
      if (f.is_regular_file()) files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu inputs replayed\n", files.size());
  return files.empty() ? 1 : 0;  // an empty corpus proves nothing
}
