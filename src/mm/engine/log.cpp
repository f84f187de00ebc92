#include "mm/engine/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace mm {

namespace {
std::mutex sink_mutex;
log_sink current_sink;
std::atomic<log_format> format_now{log_format::text};
std::atomic<log_level> least_level{log_level::info};
thread_local std::string request_id_now;

// UTC with milliseconds: 2026-11-28T20:25:49.123Z
std::string stamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[40];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms));
  return text;
}

// A JSON string's body: quotes, backslashes and control characters escaped;
// bytes that are not UTF-8 are passed through as they are (the messages are
// the server's own, quoting at most clipped caller text).
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += ch;
    }
  }
  out += '"';
}

void write_line(std::FILE* to, const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), to);
  std::fputc('\n', to);
  std::fflush(to);
}
}  // namespace

const char* to_string(log_level l) {
  switch (l) {
    case log_level::debug:
      return "debug";
    case log_level::info:
      return "info";
    case log_level::warning:
      return "warning";
    case log_level::error:
      return "error";
  }
  return "?";
}

std::string format_record(const log_record& r, log_format format) {
  std::string out;
  if (format == log_format::text) {
    out = stamp() + " " + to_string(r.level) + " ";
    out.append(r.component);
    out += ": ";
    out.append(r.message);
    if (!r.request_id.empty()) {
      out += " (request ";
      out.append(r.request_id);
      out += ")";
    }
    return out;
  }
  out = "{\"time\":\"" + stamp() + "\",\"level\":\"" + to_string(r.level) + "\",\"component\":";
  append_json_string(out, r.component);
  out += ",\"message\":";
  append_json_string(out, r.message);
  if (!r.request_id.empty()) {
    out += ",\"request_id\":";
    append_json_string(out, r.request_id);
  }
  out += '}';
  return out;
}

void set_log_sink(log_sink sink) {
  std::lock_guard lock(sink_mutex);
  current_sink = std::move(sink);
}

void set_log_format(log_format format) {
  format_now = format;
}

void set_log_level(log_level least) {
  least_level = least;
}

log_format current_log_format() {
  return format_now;
}

void log(log_level level, std::string_view component, std::string_view message) {
  const log_record r{level, component, message, request_id_now};
  std::lock_guard lock(sink_mutex);
  if (current_sink) {
    current_sink(r);
    return;
  }
  if (level < least_level.load()) return;
  write_line(stderr, format_record(r, format_now));
}

void say(std::string_view component, std::string_view message) {
  std::lock_guard lock(sink_mutex);
  if (format_now == log_format::json) {
    write_line(stdout, format_record({log_level::info, component, message, request_id_now},
                                     log_format::json));
    return;
  }
  write_line(stdout, std::string(message));
}

request_scope::request_scope(std::string_view id) : previous_(std::move(request_id_now)) {
  request_id_now = std::string(id);
}

request_scope::~request_scope() {
  request_id_now = std::move(previous_);
}

std::string_view current_request_id() {
  return request_id_now;
}

}  // namespace mm
