// A request's id (http_server.hpp, request_id_of): the client's, or a fresh
// one; and its line in the log.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>

#include "http_server_impl.hpp"
#include "mm/engine/log.hpp"
#include "mm/engine/stable_hash.hpp"

namespace mm::server {

std::string request_id_of(const http_request& req) {
  const std::string given = req.header("X-Request-Id");
  const bool usable = !given.empty() && given.size() <= 64 &&
                      std::all_of(given.begin(), given.end(), [](unsigned char c) {
                        return std::isalnum(c) || c == '.' || c == '_' || c == ':' || c == '-';
                      });
  if (usable) return given;
  // Unique per process, not a secret: a trace id grants nothing.
  thread_local std::uint64_t next =
      (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(mix64(++next)));
  return text;
}

namespace {
std::string clip(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n) + "...";
}
}  // namespace

void log_http_answer(const answered_request& r, int status, const std::string& from, bool every) {
  const bool failure = status >= 500 && status != 503;
  if (!failure && !every) return;
  const double ms =
      r.id.empty()
          ? 0.0
          : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - r.since)
                .count();
  char took[32];
  std::snprintf(took, sizeof took, "%.3f", ms);
  const request_scope in_request(r.id);
  log(failure ? log_level::warning : log_level::info, "http",
      clip(r.method, 16) + " " + clip(r.path, 200) + " " + std::to_string(status) + " " + took +
          " ms from " + from);
}

}  // namespace mm::server
