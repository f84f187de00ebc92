// Datacenters and the round-trip time of a player to each: measured by the
// game, read from a latency map, or estimated from the great-circle distance.
// Plus the staged latency policy: which RTT a waiting ticket accepts after how
// long (ideal, expand, warm body, failed).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mm::session {

struct geo_point {
  double latitude = 0;   // degrees, -90 .. 90
  double longitude = 0;  // degrees, -180 .. 180
};

struct datacenter {
  std::string name;
  geo_point location;
  std::string region;
};

// Great-circle distance in km on a sphere of the Earth's mean radius.
double great_circle_km(geo_point a, geo_point b);

// The RTT estimate from distance alone: there and back at 2/3 of the speed
// of light (fibre), times `detour` for routes that are not great circles.
double distance_rtt_ms(geo_point a, geo_point b, double detour);

// One datacenter's latency map: 360 x 180 RTTs in ms, one per degree of
// longitude and latitude, row-major, stored as little-endian float32 (the
// format published latency maps use). Column x = floor(longitude) + 180, row
// y = 90 - floor(latitude), both clamped to the grid. A value <= 0 (or not a
// number) means "unknown here".
class latency_map {
 public:
  static constexpr std::size_t columns = 360, rows = 180;
  static constexpr std::size_t file_bytes = columns * rows * 4;

  // Throws mm::error (invalid_argument) unless `bytes` is exactly file_bytes.
  static latency_map from_bytes(std::span<const std::uint8_t> bytes);
  // Throws mm::error (invalid_config) naming the file when it cannot be read
  // or has the wrong size.
  static latency_map read_file(const std::string& path);

  // The map's RTT at `p`, or nothing where the map does not know it.
  std::optional<double> rtt_ms(geo_point p) const;
  // The cell a point falls in (x, y), as the format defines it.
  static std::pair<std::size_t, std::size_t> cell_of(geo_point p);

 private:
  // rows * columns; shared by the copies (every queue's model holds the
  // server's maps, 253 KiB each, once).
  std::shared_ptr<const std::vector<float>> cells_;
};

// Where RTTs come from when a ticket has none for a datacenter: the
// datacenter's latency map if it has one and knows the place, else the
// distance estimate.
class latency_model {
 public:
  latency_model() = default;
  // `maps` is empty or has one entry per datacenter (nullopt: no map).
  latency_model(std::vector<datacenter> dcs, double detour_factor = 2.0,
                std::vector<std::optional<latency_map>> maps = {});

  const std::vector<datacenter>& datacenters() const { return dcs_; }
  double detour_factor() const { return detour_; }
  // The estimated RTT from `p` to datacenter `dc`.
  double estimate_ms(geo_point p, std::size_t dc) const;
  // Index of the datacenter called `name`, if any.
  std::optional<std::size_t> find(const std::string& name) const;

 private:
  std::vector<datacenter> dcs_;
  double detour_ = 2.0;
  std::vector<std::optional<latency_map>> maps_;
};

// The staged latency policy of a queue. From creation a ticket accepts
// datacenters at most `ideal_ms` away; after `expand_after`, at most
// `expand_ms`; after `warm_body_after` it is a warm body that any match short
// of players may take wherever it is; after `fail_after` it fails (or gets a
// bot match where the queue allows bots). Within `ideal_ms` no datacenter is
// better than another; above it, nearer is better.
struct latency_stages {
  double ideal_ms = 50;
  double expand_ms = 100;
  std::chrono::milliseconds expand_after{10'000};
  std::chrono::milliseconds warm_body_after{20'000};
  std::chrono::milliseconds fail_after{30'000};
  bool operator==(const latency_stages&) const = default;
};

enum class latency_stage : std::uint8_t { ideal, expand, warm_body, failed };

const char* to_string(latency_stage s);

latency_stage stage_after(const latency_stages& p, std::chrono::milliseconds waited);

// The highest RTT a ticket accepts after `waited`: infinite for a warm body
// (and for a failed one, which no longer matches).
double max_rtt_after(const latency_stages& p, std::chrono::milliseconds waited);

// The problems of a policy, each naming its key under `prefix` (for example
// "queues.coop.latency."): positive thresholds, ideal <= expand, and the
// stages in order.
std::vector<std::string> check(const latency_stages& p, const std::string& prefix);

}  // namespace mm::session
