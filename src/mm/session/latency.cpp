#include "mm/session/latency.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "mm/engine/error.hpp"

namespace mm::session {

namespace {
constexpr double earth_radius_km = 6371.0088;       // mean radius
constexpr double light_km_per_ms = 299'792.458e-3;  // in vacuum
constexpr double pi = 3.14159265358979323846;

double radians(double degrees) {
  return degrees * pi / 180.0;
}

// `c` as an index into [0, n): clamped, NaN lands on 0.
std::size_t clamped_index(double c, std::size_t n) {
  if (!(c > 0)) return 0;
  if (c >= static_cast<double>(n - 1)) return n - 1;
  return static_cast<std::size_t>(c);
}
}  // namespace

double great_circle_km(geo_point a, geo_point b) {
  // Haversine: accurate for short and long distances alike.
  const double dlat = radians(b.latitude - a.latitude);
  const double dlon = radians(b.longitude - a.longitude);
  const double h = std::sin(dlat / 2) * std::sin(dlat / 2) +
                   std::cos(radians(a.latitude)) * std::cos(radians(b.latitude)) *
                       std::sin(dlon / 2) * std::sin(dlon / 2);
  return 2 * earth_radius_km * std::asin(std::min(1.0, std::sqrt(h)));
}

double distance_rtt_ms(geo_point a, geo_point b, double detour) {
  const double fibre_km_per_ms = light_km_per_ms * 2.0 / 3.0;
  return 2.0 * great_circle_km(a, b) / fibre_km_per_ms * detour;
}

latency_map latency_map::from_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != file_bytes)
    throw error(errc::invalid_argument, "a latency map has " + std::to_string(file_bytes) +
                                            " bytes (360 x 180 float32), not " +
                                            std::to_string(bytes.size()));
  auto cells = std::make_shared<std::vector<float>>(columns * rows);
  for (std::size_t i = 0; i < cells->size(); ++i) {
    // Little-endian whatever this machine is.
    const std::uint8_t* b = bytes.data() + 4 * i;
    const std::uint32_t word =
        static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
        (static_cast<std::uint32_t>(b[2]) << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
    (*cells)[i] = std::bit_cast<float>(word);
  }
  latency_map m;
  m.cells_ = std::move(cells);
  return m;
}

latency_map latency_map::read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(errc::invalid_config, "cannot open the latency map " + path);
  // Read at most one byte more than a map has: a larger file is refused
  // without reading all of it.
  std::vector<std::uint8_t> bytes(file_bytes + 1);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  if (bytes.size() != file_bytes)
    throw error(errc::invalid_config,
                "the latency map " + path + " is not 360 x 180 little-endian float32 (" +
                    std::to_string(file_bytes) + " bytes)" +
                    (bytes.size() > file_bytes ? ": it is larger"
                                               : ": it has " + std::to_string(bytes.size())));
  return from_bytes(bytes);
}

std::pair<std::size_t, std::size_t> latency_map::cell_of(geo_point p) {
  return {clamped_index(std::floor(p.longitude) + 180, columns),
          clamped_index(90 - std::floor(p.latitude), rows)};
}

std::optional<double> latency_map::rtt_ms(geo_point p) const {
  const auto [x, y] = cell_of(p);
  const float v = (*cells_)[y * columns + x];
  if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
  return static_cast<double>(v);
}

latency_model::latency_model(std::vector<datacenter> dcs, double detour_factor,
                             std::vector<std::optional<latency_map>> maps)
    : dcs_(std::move(dcs)), detour_(detour_factor), maps_(std::move(maps)) {
  if (!maps_.empty() && maps_.size() != dcs_.size())
    throw error(errc::invalid_argument, "latency maps: one entry per datacenter");
  if (!(detour_ >= 1.0) || !std::isfinite(detour_))
    throw error(errc::invalid_config, "detour_factor must be a number >= 1");
}

double latency_model::estimate_ms(geo_point p, std::size_t dc) const {
  if (!maps_.empty() && maps_[dc])
    if (auto v = maps_[dc]->rtt_ms(p)) return *v;
  return distance_rtt_ms(p, dcs_[dc].location, detour_);
}

std::optional<std::size_t> latency_model::find(const std::string& name) const {
  for (std::size_t i = 0; i < dcs_.size(); ++i)
    if (dcs_[i].name == name) return i;
  return std::nullopt;
}

const char* to_string(latency_stage s) {
  switch (s) {
    case latency_stage::ideal:
      return "ideal";
    case latency_stage::expand:
      return "expand";
    case latency_stage::warm_body:
      return "warm_body";
    case latency_stage::failed:
      return "failed";
  }
  return "unknown";
}

latency_stage stage_after(const latency_stages& p, std::chrono::milliseconds waited) {
  if (waited >= p.fail_after) return latency_stage::failed;
  if (waited >= p.warm_body_after) return latency_stage::warm_body;
  if (waited >= p.expand_after) return latency_stage::expand;
  return latency_stage::ideal;
}

double max_rtt_after(const latency_stages& p, std::chrono::milliseconds waited) {
  switch (stage_after(p, waited)) {
    case latency_stage::ideal:
      return p.ideal_ms;
    case latency_stage::expand:
      return p.expand_ms;
    default:
      return std::numeric_limits<double>::infinity();
  }
}

std::vector<std::string> check(const latency_stages& p, const std::string& prefix) {
  std::vector<std::string> e;
  if (!(p.ideal_ms > 0) || !std::isfinite(p.ideal_ms))
    e.push_back(prefix + "ideal_ms must be a number greater than 0");
  if (!(p.expand_ms >= p.ideal_ms) || !std::isfinite(p.expand_ms))
    e.push_back(prefix + "expand_ms must be a number at least ideal_ms");
  if (p.expand_after.count() < 0) e.push_back(prefix + "expand_after must not be negative");
  if (p.warm_body_after < p.expand_after)
    e.push_back(prefix + "warm_body_after must not be before expand_after");
  if (p.fail_after < p.warm_body_after)
    e.push_back(prefix + "fail_after must not be before warm_body_after");
  return e;
}

}  // namespace mm::session
