// Readers of configuration values: each takes the key it reads, so that a
// wrong value is a config_error naming that key ("config key 'http.port':
// must be between 0 and 65535"). Shared by matchmakerd's keys and the
// session queues' configs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "mm/engine/options.hpp"

namespace mm::server {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& key, const std::string& why);

std::int64_t as_int(const std::string& key, const json& v, std::int64_t lo, std::int64_t hi);

template <class T>
T as_uint(const std::string& key, const json& v, std::int64_t lo = 0) {
  return static_cast<T>(
      as_int(key, v, lo,
             static_cast<std::int64_t>(std::min<std::uint64_t>(
                 std::numeric_limits<T>::max(), std::numeric_limits<std::int64_t>::max()))));
}

double as_number(const std::string& key, const json& v);
bool as_bool(const std::string& key, const json& v);
std::string as_text(const std::string& key, const json& v);
// A number of seconds, or a string with a unit: "500ms", "30s", "10m", "4h".
std::chrono::milliseconds as_duration(const std::string& key, const json& v);
fill_threshold as_threshold(const std::string& key, const json& v);

// A duration as the config writes it ("30s", "4h", "250ms").
std::string seconds_text(std::chrono::milliseconds d);
std::string number_text(double x);

}  // namespace mm::server
