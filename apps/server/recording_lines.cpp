#include "recording_lines.hpp"

#include <algorithm>

#include "mm/engine/error.hpp"

namespace mm::server {

namespace fs = std::filesystem;

void refuse_recording(const std::string& what) {
  throw error(errc::invalid_argument, what);
}

namespace {

bool is_file_of(const fs::directory_entry& e, const std::string& prefix) {
  const std::string name = e.path().filename().string();
  return e.is_regular_file() && name.rfind(prefix + "-", 0) == 0 &&
         e.path().extension() == ".jsonl";
}

}  // namespace

std::vector<fs::path> recording_files_at(const fs::path& p, const std::string& prefix,
                                         const recording_limits& limits) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_regular_file(p, ec)) {
    files = {p};
  } else {
    if (!fs::is_directory(p, ec))
      refuse_recording("recording: '" + p.string() + "' is neither a file nor a directory");
    for (const auto& e : fs::directory_iterator(p, ec)) {
      if (!is_file_of(e, prefix)) continue;
      files.push_back(e.path());
      if (files.size() > limits.max_files)
        refuse_recording("recording: more than " + std::to_string(limits.max_files) + " files in " +
                         p.string());
    }
    if (ec) refuse_recording("recording: cannot list " + p.string() + ": " + ec.message());
    if (files.empty())
      refuse_recording("recording: no " + prefix + "-*.jsonl file in " + p.string());
    std::sort(files.begin(), files.end());  // the names sort by age
  }
  std::uint64_t bytes = 0;
  for (const auto& f : files) {
    bytes += fs::file_size(f, ec);
    if (ec) refuse_recording("recording: cannot read the size of " + f.string());
  }
  if (bytes > limits.max_bytes)
    refuse_recording("recording: " + std::to_string(bytes) + " bytes, more than the " +
                     std::to_string(limits.max_bytes) + " a replay reads");
  return files;
}

bool has_recording_files(const fs::path& dir, const std::string& prefix) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_file_of(e, prefix)) return true;
  return false;
}

std::string recording_format_at(const fs::path& p) {
  try {
    recording_limits limits;
    line_reader in(p, limits);
    std::string line;
    if (!in.next(line)) return "";
    const json h = parse_recording_line(line, in);
    const auto f = h.find("format");
    return f != h.end() && f->is_string() ? f->get<std::string>() : "";
  } catch (const error&) {
    return "";
  }
}

line_reader::line_reader(const fs::path& file, const recording_limits& limits)
    : file_(file), in_(file, std::ios::binary), limits_(limits) {
  if (!in_) refuse_recording("recording: cannot open " + file.string());
}

bool line_reader::next(std::string& line) {
  const std::size_t max = number_ == 0 ? limits_.max_header_bytes : limits_.max_line_bytes;
  line.clear();
  ++number_;
  for (;;) {
    const int c = in_.get();
    if (c == std::char_traits<char>::eof()) {
      if (in_.bad()) refuse_recording(where() + ": cannot be read");
      if (line.empty() || limits_.last_line_may_be_cut) return false;
      refuse_recording(where() +
                       ": the file ends inside this line (the recording was cut short; remove "
                       "the partial line to replay what comes before it)");
    }
    if (c == '\n') return true;
    if (line.size() == max)
      refuse_recording(where() + ": a line longer than " + std::to_string(max) + " bytes");
    line.push_back(static_cast<char>(c));
  }
}

json parse_recording_line(const std::string& line, const line_reader& at) {
  try {
    json v = parse_body(line);
    if (!v.is_object()) refuse_recording(at.where() + ": a line must be a JSON object");
    return v;
  } catch (const bad_request& e) {
    refuse_recording(at.where() + ": " + e.what());
  }
}

void check_recording_span(std::int64_t first_unix_ms, std::int64_t last_unix_ms,
                          const recording_limits& limits, const std::string& what) {
  if (last_unix_ms - first_unix_ms > limits.max_span_ms)
    refuse_recording("recording: " + what + " spans " +
                     std::to_string((last_unix_ms - first_unix_ms) / 86'400'000) +
                     " days from its first event to its last; a replay covers at most " +
                     std::to_string(limits.max_span_ms / 86'400'000));
}

std::string text_field(const json& line, const char* key) {
  const auto it = line.find(key);
  return it != line.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t read_recording_time(const json& line, const line_reader& at) {
  const auto it = line.find("t");
  if (it == line.end() || !it->is_number_integer() || it->get<std::int64_t>() < 1'000'000'000'000 ||
      it->get<std::int64_t>() > 9'999'999'999'999)
    refuse_recording(at.where() + ": t must be a unix time in ms");
  return it->get<std::int64_t>();
}

}  // namespace mm::server
