// The log's keys (log.*, mm/engine/log.hpp; docs/operations.md, "Logs").
#include "config_keys.hpp"

namespace mm::server {

std::vector<key_spec> with_log_keys(std::vector<key_spec> keys) {
  using K = kind;
  std::vector<key_spec> log_keys = {
      {"log.format", K::text, "text",
       "the log's lines on stderr (and the progress lines on stdout): text, or json (one object "
       "a line: time, level, component, message, request_id)",
       [](server_config& c, const json& v) {
         const std::string f = as_text("log.format", v);
         if (f == "text")
           c.logging.format = log_format::text;
         else if (f == "json")
           c.logging.format = log_format::json;
         else
           bad("log.format", "expected \"text\" or \"json\", got " + describe(v));
       },
       [](const server_config& c) -> json {
         return c.logging.format == log_format::json ? "json" : "text";
       }},
      {"log.level", K::text, "info", "the least level logged: debug, info, warning or error",
       [](server_config& c, const json& v) {
         const std::string l = as_text("log.level", v);
         for (const log_level level :
              {log_level::debug, log_level::info, log_level::warning, log_level::error})
           if (l == to_string(level)) {
             c.logging.least = level;
             return;
           }
         bad("log.level",
             "expected \"debug\", \"info\", \"warning\" or \"error\", got " + describe(v));
       },
       [](const server_config& c) -> json { return to_string(c.logging.least); }},
      {"log.requests", K::boolean, "false",
       "log every HTTP request answered (method, path, status, milliseconds, request id) at "
       "info; answers of 500 and above but 503 (not now) are logged at warning either way",
       [](server_config& c, const json& v) { c.http.log_requests = as_bool("log.requests", v); },
       [](const server_config& c) -> json { return c.http.log_requests; }}};
  keys.insert(keys.end(), log_keys.begin(), log_keys.end());
  return keys;
}

}  // namespace mm::server
