#include "config_values.hpp"

#include <cmath>
#include <sstream>

#include "json_codec.hpp"
#include "mm/engine/error.hpp"

namespace mm::server {

[[noreturn]] void bad(const std::string& key, const std::string& why) {
  throw config_error("config key '" + key + "': " + why);
}

std::int64_t as_int(const std::string& key, const json& v, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) bad(key, "expected an integer, got " + describe(v));
  const std::int64_t x = v.get<std::int64_t>();
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    bad(key, "must be at most " + std::to_string(hi));
  if (x < lo || x > hi)
    bad(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return x;
}

double as_number(const std::string& key, const json& v) {
  if (!v.is_number()) bad(key, "expected a number, got " + describe(v));
  const double x = v.get<double>();
  if (!std::isfinite(x)) bad(key, "must be finite");
  return x;
}

bool as_bool(const std::string& key, const json& v) {
  if (!v.is_boolean()) bad(key, "expected true or false, got " + describe(v));
  return v.get<bool>();
}

std::string as_text(const std::string& key, const json& v) {
  if (!v.is_string()) bad(key, "expected a string, got " + describe(v));
  return v.get<std::string>();
}

std::chrono::milliseconds as_duration(const std::string& key, const json& v) {
  double ms = 0;
  if (v.is_number()) {
    ms = v.get<double>() * 1000;
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    std::size_t used = 0;
    double x = 0;
    try {
      x = std::stod(s, &used);
    } catch (const std::exception&) {
      bad(key, "expected a duration such as \"30s\", got \"" + s + "\"");
    }
    const std::string unit = s.substr(used);
    if (unit == "ms")
      ms = x;
    else if (unit == "s" || unit.empty())
      ms = x * 1000;
    else if (unit == "m")
      ms = x * 60'000;
    else if (unit == "h")
      ms = x * 3'600'000;
    else
      bad(key, "unknown unit \"" + unit + "\" (use ms, s, m or h)");
  } else {
    bad(key, "expected a duration such as \"30s\" or a number of seconds, got " + describe(v));
  }
  if (!std::isfinite(ms) || ms < 0 || ms > 1e12) bad(key, "must be between 0 and 1e9 s");
  // Kept in whole milliseconds: a finer value would be cut without a word.
  if (ms != std::floor(ms)) bad(key, "must be a whole number of milliseconds");
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

fill_threshold as_threshold(const std::string& key, const json& v) {
  const auto t = v.is_string() ? parse_fill_threshold(v.get<std::string>()) : std::nullopt;
  if (!t) bad(key, "expected always, low_population, high_population or never, got " + describe(v));
  return *t;
}

std::string seconds_text(std::chrono::milliseconds d) {
  if (d.count() % 3'600'000 == 0 && d.count() > 0)
    return std::to_string(d.count() / 3'600'000) + "h";
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
  return std::to_string(d.count()) + "ms";
}

std::string number_text(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

}  // namespace mm::server
