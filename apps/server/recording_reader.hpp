// Reading a ticket recording (docs/session.md, "Recording") back, for
// `mmsim replay`: every file checked before anything in it is believed.
//
// - A file or a directory (its recording-*.jsonl files, oldest first).
// - Each file's header must be this format and version, and every file of
//   a directory recorded with the same queues and datacenters.
// - Every line is bounded (max_line_bytes, JSON nesting) and every event
//   read with the server's own readers: a ticket's body as POST
//   /api/tickets reads it. A line cut short (a file that ends inside a
//   line) is refused: a recording is not guessed at.
// - The whole is bounded before it is held: bytes, files, tickets.
// Every refusal is mm::error (invalid_argument) naming the file and line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mm/sim/session_replay.hpp"
#include "recording_lines.hpp"
#include "session_config.hpp"

namespace mm::server {

struct recorded_ticket {
  std::string id;  // public id
  std::int64_t created_unix_ms = 0;
  std::vector<std::string> queues;  // as the ticket named them: queue, then also_queues
  actors::session_ticket ticket;
  sim::ticket_end outcome;  // at_ms in unix ms; waiting: none recorded
};

struct recording {
  std::vector<std::filesystem::path> files;
  json header;                // the first file's
  session_settings settings;  // the recorded queues and datacenters, read from it
  std::vector<std::string> recorded_queues;
  std::vector<recorded_ticket> tickets;              // by creation time
  std::int64_t first_unix_ms = 0, last_unix_ms = 0;  // of the events
  std::uint64_t events = 0;
  std::uint64_t dropped = 0;  // events the recording's gap lines say are missing
  std::uint64_t orphans = 0;  // outcomes of tickets whose creation is not in the files
  // Version 2: by queue, when it ran its match loop (unix ms, sorted) and
  // the seed it first started with.
  std::map<std::string, std::vector<std::int64_t>> ticks;
  std::map<std::string, std::uint64_t> seeds;
  // Tickets that reached a queue after a tick that ran without them: by
  // ticket id, (queue, that tick's unix ms).
  std::map<std::string, std::vector<std::pair<std::string, std::int64_t>>> late;
  // Version 3: tickets a queue let go on their owner's cancel, by ticket id,
  // (queue, that moment's unix ms).
  std::map<std::string, std::vector<std::pair<std::string, std::int64_t>>> cancels;
};

recording read_recording(const std::filesystem::path& file_or_dir,
                         const recording_limits& limits = {});

// The replay of `r` under `settings` (the recorded ones, or a candidate's):
// each ticket routed to its queues as the server would route it (a shard, a
// queue from the template; one it cannot place is refused, with why), times
// since the hour the recording starts in (UTC), the replay running to the
// last event. A queue whose recorded ticks the recording has, and whose
// tick the settings leave as it was, replays its ticks and its seed.
sim::session_replay_config replay_config_of(const recording& r, const session_settings& settings,
                                            std::uint64_t seed);

// The unix time, in ms, of the replay's time 0 for `r`: the start of the UTC
// hour of its first event.
std::int64_t replay_epoch_unix_ms(const recording& r);

}  // namespace mm::server
