#include "mm/engine/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace mm {

namespace {
std::mutex sink_mutex;
log_sink current_sink;

const char* name(log_level l) {
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

void to_stderr(log_level level, std::string_view message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::fprintf(stderr, "%s %s %.*s\n", stamp, name(level), static_cast<int>(message.size()),
               message.data());
}
}  // namespace

void set_log_sink(log_sink sink) {
  std::lock_guard lock(sink_mutex);
  current_sink = std::move(sink);
}

void log(log_level level, std::string_view message) {
  std::lock_guard lock(sink_mutex);
  if (current_sink)
    current_sink(level, message);
  else
    to_stderr(level, message);
}

}  // namespace mm
