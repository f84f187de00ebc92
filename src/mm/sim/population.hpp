// The simulator's population model: where players are (a map of weighted
// places) times when they play (a diurnal curve by local solar time), turned
// into the joins of a simulated day; or the joins read as they are from a CSV.
//
// Everything here is deterministic for a seed: the same places, curve and
// seed give the same joins, on any run of the same build.
#pragma once

#include <array>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mm/engine/random.hpp"
#include "mm/session/latency.hpp"

namespace mm {
// The simulator's data files as (file name, content) pairs, compiled in by the
// build (cmake/EmbedFiles.cmake): world_cities.csv, the default map.
const std::vector<std::pair<std::string_view, std::string_view>>& sim_data_files();
}  // namespace mm

namespace mm::sim {

using session::geo_point;

// A place players live, with its share of them (any positive scale).
struct place {
  geo_point where;
  double weight = 1;
};

// How many of a place's players are online at each hour of their local day,
// relative to one another (hour h covers [h, h + 1); values in between are
// interpolated between the hours' midpoints, so the curve has no steps).
struct diurnal_curve {
  std::array<double, 24> by_local_hour{};
  double at(double local_hour) const;
};

// An evening-peaked curve of online games: lowest around 05:00 (0.15 of the
// peak), rising through the day to its peak at 21:00.
diurnal_curve default_diurnal_curve();

// Parses 24 comma-separated non-negative numbers, not all zero. Throws
// mm::error (invalid_argument) naming the problem.
diurnal_curve parse_diurnal_curve(const std::string& text);

// Local solar hour [0, 24) at `longitude` when the simulated clock (UTC) reads
// `utc_seconds` since midnight of day 0.
double local_hour(double utc_seconds, double longitude);

// One player arriving: when (seconds since the start of the run), where, and
// optionally the MMR the CSV gave.
struct join {
  double at_s = 0;
  geo_point where;
  std::optional<double> mmr;
};

// Rows a CSV may hold before it is refused (a simulation input, not a table).
inline constexpr std::size_t max_csv_rows = 10'000'000;

// What a CSV held: the places of a population map, or joins as they happened.
struct population_file {
  std::vector<place> places;  // latitude,longitude,weight[,anything...]
  std::vector<join> joins;    // time,latitude,longitude[,mmr], sorted by time
};

// Reads a CSV whose header names its kind: `latitude,longitude,weight` (more
// columns after those are ignored, such as a city name) or
// `time,latitude,longitude[,mmr]` with the time in seconds since the start of
// the run or as HH:MM[:SS]. Throws mm::error (invalid_argument) naming the
// source, the line and the column of the first bad value.
population_file read_population_csv(std::istream& in, const std::string& source);

// The default map: the world's cities of at least 500,000 people, weighted by
// population (src/mm/sim/data/README.md says where the data comes from).
std::vector<place> default_places();

// About `per_day` joins a day (a Poisson process) over `days` days from
// `start_s` (negative for a warm-up before the day), placed by the places'
// weights times the curve at each place's local hour, each a little away
// from its place (a normal spread of about 50 km). Sorted by time.
std::vector<join> schedule_joins(const std::vector<place>& places, const diurnal_curve& curve,
                                 double per_day, double days, rng& r, double start_s = 0);

// A Poisson draw (events in a minute); a normal approximation above a mean
// of 60, where the difference does not show in a day's figures.
std::uint64_t poisson(rng& r, double mean);

}  // namespace mm::sim
