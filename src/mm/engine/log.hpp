// Logging: one process-wide sink. By default each record is one line on
// stderr, as text ("2026-11-28T20:25:49.123Z warning cluster: message") or
// as a JSON object ({"time", "level", "component", "message", and
// "request_id" when the record was logged on behalf of an HTTP request});
// a host application may install a sink of its own instead.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace mm {

enum class log_level { debug, info, warning, error };
enum class log_format { text, json };

const char* to_string(log_level level);

struct log_record {
  log_level level = log_level::info;
  std::string_view component;  // the part that logs: "matchmaker", "cluster", "sessions"...
  std::string_view message;
  std::string_view request_id;  // empty: not on behalf of a request
};

using log_sink = std::function<void(const log_record&)>;

// Replaces the sink; an empty function restores the stderr default.
void set_log_sink(log_sink sink);
// How the default sink writes (text until told), and the least level it
// writes (info until told).
void set_log_format(log_format format);
void set_log_level(log_level least);
log_format current_log_format();

void log(log_level level, std::string_view component, std::string_view message);

// A record as the default sink writes it, without the line's end.
std::string format_record(const log_record& r, log_format format);

// A progress line of the server on stdout ("http listening on ..."): the
// message as it is in text, a JSON record (info) in json.
void say(std::string_view component, std::string_view message);

// While it lives, what this thread logs carries `id` (an HTTP request's id,
// set by the server around the request's handler).
class request_scope {
 public:
  explicit request_scope(std::string_view id);
  ~request_scope();
  request_scope(const request_scope&) = delete;
  request_scope& operator=(const request_scope&) = delete;

 private:
  std::string previous_;
};
std::string_view current_request_id();

}  // namespace mm
