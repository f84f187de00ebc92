// Reading a recording's files (ticket recordings, recording_reader.hpp;
// async recordings, query_recording_reader.hpp): which files, line by line
// with every line bounded, each line a JSON object with a sane time. Every
// refusal is mm::error (invalid_argument) naming the file and line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "json_codec.hpp"

namespace mm::server {

struct recording_limits {
  std::size_t max_line_bytes = 1 << 20;    // an event (a ticket's body is smaller)
  std::size_t max_header_bytes = 8 << 20;  // a header holds the queues' config
  std::uint64_t max_bytes = 8ull << 30;    // every file together
  std::size_t max_files = 10'000;
  std::uint64_t max_tickets = 10'000'000;
  std::uint64_t max_ticks = 50'000'000;  // queues' tick lines, all together
  std::uint64_t max_calls = 50'000'000;  // an async recording's calls
  // From the first event to the last: a replay's virtual clock walks every
  // tick and scan of it.
  std::int64_t max_span_ms = 31ll * 86'400'000;
  // A recording still being written (a dry run reads it while the server
  // records): a file may end inside its last line, which is left out
  // instead of refused.
  bool last_line_may_be_cut = false;
};

[[noreturn]] void refuse_recording(const std::string& what);

// A file, or the directory's `<prefix>-*.jsonl` files oldest first; their
// total size checked against limits.max_bytes.
std::vector<std::filesystem::path> recording_files_at(const std::filesystem::path& p,
                                                      const std::string& prefix,
                                                      const recording_limits& limits);

// Whether directory `dir` holds `<prefix>-*.jsonl` files.
bool has_recording_files(const std::filesystem::path& dir, const std::string& prefix);

// The "format" of the recording at `p` (its first file's header), or empty
// when it has none that reads.
std::string recording_format_at(const std::filesystem::path& p);

// One file's lines, each at most its bound (the header's for the first),
// checked for a cut-off end.
class line_reader {
 public:
  line_reader(const std::filesystem::path& file, const recording_limits& limits);
  // The next line, or false at the end of the file.
  bool next(std::string& line);
  std::string where() const { return file_.string() + ":" + std::to_string(number_); }

 private:
  std::filesystem::path file_;
  std::ifstream in_;
  const recording_limits& limits_;
  std::size_t number_ = 0;
};

// The line as a JSON object (nesting bounded as a request body's).
json parse_recording_line(const std::string& line, const line_reader& at);
// Refuses a recording whose events span more than limits.max_span_ms.
void check_recording_span(std::int64_t first_unix_ms, std::int64_t last_unix_ms,
                          const recording_limits& limits, const std::string& what);

// Field `key` of a line if it is a string, else empty (a line's "event",
// a header's "format": the caller refuses what it does not know).
std::string text_field(const json& line, const char* key);
// Its "t": a unix time in ms from 2001 to 2286.
std::int64_t read_recording_time(const json& line, const line_reader& at);

}  // namespace mm::server
