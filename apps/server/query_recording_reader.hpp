// Reading a recording of the async traffic (query_recording.hpp) back, for
// `mmsim replay`: every file checked before anything in it is believed, as
// a ticket recording is (recording_lines.hpp): this format and version,
// every file with the same configuration, every line bounded and read with
// the server's own readers (a query as POST /api/query reads it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "mm/sim/async_replay.hpp"
#include "recording_lines.hpp"
#include "server_config.hpp"

namespace mm::server {

struct query_recording_data {
  std::vector<std::filesystem::path> files;
  json header;                            // the first file's
  server_config recorded;                 // its profile, engine options and instances
  std::vector<sim::recorded_call> calls;  // at_ms in unix ms, by time
  std::int64_t first_unix_ms = 0, last_unix_ms = 0;
  std::uint64_t dropped = 0;  // calls the recording's gap lines say are missing
};

query_recording_data read_query_recording(const std::filesystem::path& file_or_dir,
                                          const recording_limits& limits = {});

// The configuration held by a recording's header (or a --config file's
// whole), read as matchmakerd reads its --config file.
server_config config_of_header(const json& header);

// The replay of `r` with the engines of `engines` (the recorded
// configuration or a candidate's) over the SQLite player table `database`:
// times since the UTC hour the engines started in (the first file's start).
std::int64_t async_replay_epoch_unix_ms(const query_recording_data& r);
sim::async_replay_config async_replay_config_of(const query_recording_data& r,
                                                const server_config& engines,
                                                const std::string& database, std::uint64_t seed);

}  // namespace mm::server
