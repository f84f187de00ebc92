// matchmakerd's recording of the ticket stream of chosen session queues
// (docs/session.md, "Recording"): JSON lines in rotating files,
// bounded in size, written by a thread of their own (recording_files.hpp).
//
// - Each file starts with a header line: the format, its version, the
//   recorded queues' configuration and the datacenters (what a replay
//   needs to run the same queues). Then one line per event: a ticket
//   created (its body as POST /api/tickets takes it, with its id and time),
//   what became of it (its outcome as GET /api/tickets/ID answers it), in
//   the order the session service saw them; and each recorded queue's
//   start (its seed) and ticks, as its actor ran them.
// - A file is closed at max_file_bytes and a new one started; beyond
//   max_files the oldest recording files of the directory are deleted. The
//   recording never holds more than max_files x max_file_bytes on disk.
// - The service's thread only copies the event into a queue: formatting
//   and writing happen on the writer thread. When the writer falls behind
//   by max_pending events, new ones are dropped and counted, and a "gap"
//   line says how many before the next one written.
// - Lines are flushed to the file at least every 200 ms: a crash loses at
//   most what came in since (the tickets themselves are durable elsewhere).
#pragma once

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "json_codec.hpp"
#include "mm/actors/ticket_recorder.hpp"
#include "recording_files.hpp"

namespace mm::server {

// Version 2 added the queues' starts and ticks, version 3 the queues' own
// moments of cancels; a reader takes 1 to 3.
inline constexpr int recording_format_version = 3;
inline constexpr int oldest_readable_recording_version = 1;
inline constexpr const char* recording_format = "matchmaker-ticket-recording";

struct recording_settings {
  std::vector<std::string> queues;  // empty: no recording
  std::string dir = "recordings";
  std::uint64_t max_file_bytes = 64ull << 20;
  std::uint32_t max_files = 8;
  std::size_t max_pending = 100'000;  // events waiting for the writer
};

class ticket_recording final : public actors::ticket_recorder {
 public:
  // `header` is merged into every file's header line (the queues' config,
  // the datacenters). Throws mm::error (invalid_config) naming
  // sessions.record.dir when the directory cannot be made or written.
  ticket_recording(recording_settings settings, json header);

  void created(const actors::durable_ticket& ticket, std::int64_t unix_ms) override;
  void left(const actors::ticket_outcome& outcome, std::int64_t unix_ms) override;
  bool records(const std::string& name) const override;
  void queue_started(const std::string& name, std::uint64_t seed, std::int64_t unix_ms) override;
  void ticked(const std::string& name, std::int64_t unix_ms) override;
  void joined_late(const std::string& name, std::uint64_t id, std::int64_t tick_unix_ms) override;
  void cancelled(const std::string& name, std::uint64_t id, std::int64_t unix_ms) override;

  // Writes what is pending now and returns once it is in the file.
  void flush() { files_.flush(); }

  std::uint64_t events() const { return events_; }  // tickets' lines written (created, left)
  std::uint64_t dropped() const {
    return files_.dropped();
  }  // events the writer could not keep up with
  std::uint64_t bytes() const { return files_.bytes(); }  // bytes written, headers included
  std::uint64_t files() const { return files_.files(); }  // files started

 private:
  struct pending {
    enum class kind : std::uint8_t { created, left, queue, tick, late, cancel } what = kind::left;
    actors::durable_ticket ticket;   // created; late, cancel: its id
    actors::ticket_outcome outcome;  // left
    std::string queue;               // queue, tick, late, cancel
    std::uint64_t seed = 0;          // queue
    std::int64_t unix_ms = 0;
  };
  json format(const pending& p);
  // A queue's line about one ticket (late, cancel), from its actor's thread.
  void push_queue_event(pending::kind what, const std::string& name, std::uint64_t id,
                        std::int64_t unix_ms);

  std::set<std::string> queues_;  // not changed after the constructor
  // The tickets recorded that wait still (the service's thread only): their
  // outcome is recorded whatever queue it comes from.
  std::unordered_set<std::uint64_t> open_;
  std::atomic<std::uint64_t> events_{0};
  recording_files<pending> files_;  // last: its writer thread stops first
};

}  // namespace mm::server
