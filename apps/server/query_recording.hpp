// matchmakerd's recording of the async traffic (record_queries.*;
// docs/simulation.md, "Replay"): every query each instance's engine
// answered, with its answer, and every change the game asked of an engine's
// cache (updates, enrolments, removals), as JSON lines in rotating files
// (recording_files.hpp), for `mmsim replay` to run against another profile
// or cache size.
//
// - Each file starts with a header: the format, its version, the profile,
//   the engine's options and the instances (what a replay needs to run the
//   same engines).
// - One line per engine call, from the engine's observer
//   (engine_observer.hpp), on the engine's caller's thread, which only moves
//   the call into the writer's queue: a query passed on through an instance
//   set is one line per instance that answered it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "json_codec.hpp"
#include "mm/engine/engine_observer.hpp"
#include "mm/engine/generic_profile.hpp"
#include "recording_files.hpp"

namespace mm::server {

inline constexpr int query_recording_format_version = 1;
inline constexpr const char* query_recording_format = "matchmaker-query-recording";

struct query_recording_settings {
  bool enabled = false;
  std::string dir = "recordings";
  std::uint64_t max_file_bytes = 64ull << 20;
  std::uint32_t max_files = 8;
  std::size_t max_pending = 100'000;
};

class query_recording {
 public:
  // `header`: merged into each file's header (profile, options, instances).
  // Throws mm::error (invalid_config) naming record_queries.dir when the
  // directory cannot be made or written.
  query_recording(const query_recording_settings& settings, json header);

  void flush() { files_.flush(); }
  std::uint64_t events() const { return files_.lines(); }
  std::uint64_t dropped() const { return files_.dropped(); }
  std::uint64_t bytes() const { return files_.bytes(); }

  struct call {
    enum class kind : std::uint8_t { query, update, enroll, remove } what = kind::query;
    std::uint32_t instance = 0;
    std::int64_t unix_ms = 0;
    match_request<generic_query> request;    // query
    match_response<generic_model> response;  // query
    player_id id = invalid_player;           // update, remove
    std::vector<generic_model> models;       // update, enroll
  };
  void push(call c) { files_.push(std::move(c)); }

 private:
  recording_files<call> files_;
};

// The observer of instance `instance`'s engine: it holds the recording, so
// that an engine outliving every other holder still writes somewhere.
std::shared_ptr<engine_observer<generic_profile>> observer_of(std::shared_ptr<query_recording> r,
                                                              std::uint32_t instance);

struct server_config;
// The recording of record_queries, or null when it is off; its header holds
// the configuration a replay runs the same engines with. Throws mm::error
// naming record_queries.dir when it cannot be written: called before the
// actor system starts.
std::shared_ptr<query_recording> open_query_recording(const server_config& c);

// The JSON of one recorded call, and its reading back (a replay's): a
// query's request in the shape POST /api/query takes it. Reading throws
// bad_request naming the field.
json call_json(const query_recording::call& c);

}  // namespace mm::server
