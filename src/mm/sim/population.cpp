#include "mm/sim/population.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>

#include "mm/engine/error.hpp"

namespace mm::sim {
namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw error(errc::invalid_argument, what);
}

// Longest CSV line read: a row of this format is short, so a longer one is
// not a population file.
constexpr std::size_t max_line_bytes = 4096;

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\r')) cell.pop_back();
    const auto first = cell.find_first_not_of(' ');
    cell = first == std::string::npos ? std::string() : cell.substr(first);
    // A quoted cell ("48.85", as spreadsheets write them) is read without its quotes.
    if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"')
      cell = cell.substr(1, cell.size() - 2);
    out.push_back(cell);
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::optional<double> number(const std::string& s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Seconds from "3600.5" or "HH:MM" or "HH:MM:SS" (hours may pass 24 for later days).
std::optional<double> seconds_of(const std::string& s) {
  if (s.find(':') == std::string::npos) return number(s);
  double total = 0;
  int parts = 0;
  std::istringstream in(s);
  std::string part;
  while (std::getline(in, part, ':')) {
    const auto v = number(part);
    if (!v || *v < 0 || (parts > 0 && *v >= 60)) return std::nullopt;
    total = total * 60 + *v;
    ++parts;
  }
  if (parts == 2) total *= 60;  // HH:MM
  if (parts < 2 || parts > 3) return std::nullopt;
  return total;
}

}  // namespace

double diurnal_curve::at(double hour) const {
  // Hour h's value holds at h + 0.5; linear in between, wrapping at midnight.
  double x = std::fmod(hour - 0.5, 24.0);
  if (x < 0) x += 24;
  const auto h = static_cast<std::size_t>(x) % 24;
  const double f = x - std::floor(x);
  return by_local_hour[h] * (1 - f) + by_local_hour[(h + 1) % 24] * f;
}

diurnal_curve default_diurnal_curve() {
  return {{0.75, 0.55, 0.38, 0.25, 0.18, 0.15, 0.17, 0.22, 0.28, 0.33, 0.38, 0.42,
           0.47, 0.50, 0.52, 0.56, 0.62, 0.70, 0.80, 0.90, 0.98, 1.00, 0.95, 0.87}};
}

diurnal_curve parse_diurnal_curve(const std::string& text) {
  const auto cells = split(text);
  if (cells.size() != 24)
    refuse("diurnal curve: needs 24 comma-separated numbers (one per local hour), got " +
           std::to_string(cells.size()));
  diurnal_curve c;
  double sum = 0;
  for (std::size_t h = 0; h < 24; ++h) {
    const auto v = number(cells[h]);
    if (!v || *v < 0)
      refuse("diurnal curve: hour " + std::to_string(h) + " is '" + cells[h] +
             "', not a number >= 0");
    c.by_local_hour[h] = *v;
    sum += *v;
  }
  if (!(sum > 0)) refuse("diurnal curve: every hour is 0, so nobody ever plays");
  return c;
}

double local_hour(double utc_seconds, double longitude) {
  double h = std::fmod(utc_seconds / 3600.0 + longitude / 15.0, 24.0);
  if (h < 0) h += 24;
  return h >= 24 ? 0 : h;
}

population_file read_population_csv(std::istream& in, const std::string& source) {
  population_file out;
  std::string line;
  std::size_t line_no = 0;
  const auto where = [&](const std::string& column) {
    return source + ": line " + std::to_string(line_no) + ", " + column;
  };
  const auto read_line = [&]() -> bool {
    line.clear();
    char ch = 0;
    bool any = false;
    while (in.get(ch)) {
      any = true;
      if (ch == '\n') break;
      if (line.size() >= max_line_bytes)
        refuse(source + ": line " + std::to_string(line_no + 1) + " is longer than " +
               std::to_string(max_line_bytes) + " bytes");
      line.push_back(ch);
    }
    if (any) ++line_no;
    return any;
  };
  if (!read_line()) refuse(source + ": empty, expected a header line");
  // A spreadsheet's byte-order mark and capitals do not change the header.
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  auto header = split(line);
  for (auto& h : header)
    for (char& ch : h) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const auto named = [&](std::size_t i, const char* name) {
    return header.size() > i && header[i] == name;
  };
  const bool places = named(0, "latitude") && named(1, "longitude") && named(2, "weight");
  const bool joins = named(0, "time") && named(1, "latitude") && named(2, "longitude");
  const bool with_mmr = joins && named(3, "mmr");
  if (!places && !joins)
    refuse(source +
           ": line 1, header: expected 'latitude,longitude,weight' (a population map) or "
           "'time,latitude,longitude[,mmr]' (joins), got '" +
           line.substr(0, 80) + "'");
  while (read_line()) {
    if (line.empty() || line == "\r") continue;
    if (out.places.size() + out.joins.size() >= max_csv_rows)
      refuse(source + ": more than " + std::to_string(max_csv_rows) + " rows");
    const auto cells = split(line);
    const std::size_t needed = with_mmr ? 4 : 3;
    if (cells.size() < needed)
      refuse(where("columns") + ": expected " + std::to_string(needed) + ", got " +
             std::to_string(cells.size()));
    const std::size_t lat_at = joins ? 1 : 0;
    const auto lat = number(cells[lat_at]);
    if (!lat || *lat < -90 || *lat > 90)
      refuse(where("latitude") + ": '" + cells[lat_at] + "' is not a number in [-90, 90]");
    const auto lon = number(cells[lat_at + 1]);
    if (!lon || *lon < -180 || *lon > 180)
      refuse(where("longitude") + ": '" + cells[lat_at + 1] + "' is not a number in [-180, 180]");
    if (places) {
      const auto w = number(cells[2]);
      if (!w || *w < 0) refuse(where("weight") + ": '" + cells[2] + "' is not a number >= 0");
      if (*w > 0) out.places.push_back({{*lat, *lon}, *w});
      continue;
    }
    const auto t = seconds_of(cells[0]);
    if (!t || *t < 0)
      refuse(where("time") + ": '" + cells[0] +
             "' is neither seconds >= 0 since the start nor HH:MM[:SS]");
    join j{*t, {*lat, *lon}, std::nullopt};
    if (with_mmr) {
      const auto m = number(cells[3]);
      if (!m || std::fabs(*m) > 1e9)
        refuse(where("mmr") + ": '" + cells[3] + "' is not a finite number within 1e9");
      j.mmr = *m;
    }
    out.joins.push_back(j);
  }
  if (places && out.places.empty()) refuse(source + ": no place with a weight above 0");
  if (joins && out.joins.empty()) refuse(source + ": no joins");
  std::stable_sort(out.joins.begin(), out.joins.end(),
                   [](const join& a, const join& b) { return a.at_s < b.at_s; });
  return out;
}

std::vector<place> default_places() {
  for (const auto& [name, text] : sim_data_files()) {
    if (name != "world_cities.csv") continue;
    std::istringstream in{std::string(text)};
    return read_population_csv(in, "world_cities.csv").places;
  }
  refuse("world_cities.csv is not compiled into this build");
}

std::uint64_t poisson(rng& r, double mean) {
  if (mean <= 0) return 0;
  if (mean > 60)
    return static_cast<std::uint64_t>(
        std::max(0.0, std::round(mean + std::sqrt(mean) * r.normal())));
  const double limit = std::exp(-mean);
  std::uint64_t k = 0;
  double p = r.unit();
  while (p > limit) {
    ++k;
    p *= r.unit();
  }
  return k;
}

std::vector<join> schedule_joins(const std::vector<place>& places, const diurnal_curve& curve,
                                 double per_day, double days, rng& r, double start_s) {
  if (places.empty()) refuse("places: none");
  if (!(per_day >= 0) || !(days > 0)) refuse("joins per day must be >= 0 and days > 0");
  // One slot a minute: the places' weights times the curve at each place's
  // local hour, normalised so that a whole day's slots (whatever the run's
  // length) add up to per_day.
  constexpr double slot_s = 60;
  const auto rate_at = [&](double t) {
    double rate = 0;
    for (const place& p : places) rate += p.weight * curve.at(local_hour(t, p.where.longitude));
    return rate;
  };
  double day_total = 0;
  for (int s = 0; s < 1440; ++s) day_total += rate_at((s + 0.5) * slot_s);
  const auto slots = static_cast<std::size_t>(std::ceil(days * 86400 / slot_s));
  std::vector<join> out;
  std::vector<double> cumulative(places.size());
  for (std::size_t s = 0; s < slots; ++s) {
    const double offset = static_cast<double>(s) * slot_s;
    const double start = start_s + offset;
    const double length = std::min(slot_s, days * 86400 - offset);
    const double middle = start + 0.5 * slot_s;
    const std::uint64_t n = poisson(r, per_day * rate_at(middle) / day_total * length / slot_s);
    if (n == 0) continue;
    double sum = 0;
    for (std::size_t i = 0; i < places.size(); ++i) {
      sum += places[i].weight * curve.at(local_hour(middle, places[i].where.longitude));
      cumulative[i] = sum;
    }
    for (std::uint64_t k = 0; k < n; ++k) {
      const double pick = r.unit() * sum;
      const auto i = static_cast<std::size_t>(
          std::upper_bound(cumulative.begin(), cumulative.end(), pick) - cumulative.begin());
      const place& p = places[std::min(i, places.size() - 1)];
      join j;
      j.at_s = start + r.unit() * length;
      // About 50 km around the place (0.45 degree of latitude).
      j.where.latitude = std::clamp(p.where.latitude + 0.45 * r.normal(), -90.0, 90.0);
      double lon = p.where.longitude + 0.45 * r.normal();
      if (lon > 180) lon -= 360;
      if (lon < -180) lon += 360;
      j.where.longitude = lon;
      out.push_back(j);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const join& a, const join& b) { return a.at_s < b.at_s; });
  return out;
}

}  // namespace mm::sim
