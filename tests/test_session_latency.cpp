// Datacenters and latency for session matchmaking: distances, the RTT
// estimate, the latency map format, the model's fallbacks and the staged
// policy at and around its thresholds.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>

#include "mm/engine/error.hpp"
#include "mm/engine/random.hpp"
#include "mm/session/latency.hpp"
#include "mm/testing/temp_dir.hpp"

using namespace mm::session;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

// A map's bytes where cell (x, y) holds `value(x, y)`, written byte by byte in
// little-endian order (independent of the reader's decoding).
template <class Value>
std::vector<std::uint8_t> map_bytes(Value value) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(latency_map::file_bytes);
  for (std::size_t y = 0; y < latency_map::rows; ++y)
    for (std::size_t x = 0; x < latency_map::columns; ++x) {
      const float v = value(x, y);
      std::uint32_t word = 0;
      std::memcpy(&word, &v, 4);
      for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<std::uint8_t>(word >> (8 * b)));
    }
  return bytes;
}

float cell_number(std::size_t x, std::size_t y) {
  return static_cast<float>(y * 360 + x + 1);
}

constexpr geo_point paris{48.8566, 2.3522}, london{51.5074, -0.1278}, sydney{-33.8688, 151.2093};

}  // namespace

TEST_CASE("great-circle distances of known places", "[session][latency]") {
  const double quarter = great_circle_km({0, 0}, {0, 90});
  CHECK(quarter == Approx(6371.0088 * 3.14159265358979 / 2).epsilon(1e-9));
  CHECK(great_circle_km({0, 0}, {0, 180}) == Approx(2 * quarter));
  CHECK(great_circle_km({90, 0}, {-90, 0}) == Approx(2 * quarter));
  CHECK(great_circle_km(paris, london) == Approx(343.5).margin(1.0));
  CHECK(great_circle_km(paris, sydney) == Approx(16960).margin(30));
  CHECK(great_circle_km(london, paris) == Approx(great_circle_km(paris, london)));
  CHECK(great_circle_km(paris, paris) == 0);
  // Across the date line: 2 degrees of longitude on the equator, not 358.
  CHECK(great_circle_km({0, 179}, {0, -179}) == Approx(2 * quarter / 90));
}

TEST_CASE("the distance estimate is there and back at two thirds of light speed, times detour",
          "[session][latency]") {
  // 1,000 km of fibre each way at 199,862 km/s: 10.007 ms there and back.
  const geo_point a{0, 0};
  const geo_point b{0, 1000.0 / great_circle_km({0, 0}, {0, 1})};
  CHECK(great_circle_km(a, b) == Approx(1000));
  CHECK(distance_rtt_ms(a, b, 1.0) == Approx(2 * 1000 / 199.861639).epsilon(1e-6));
  CHECK(distance_rtt_ms(a, b, 2.0) == Approx(2 * distance_rtt_ms(a, b, 1.0)));
  CHECK(distance_rtt_ms(a, a, 2.0) == 0);
}

TEST_CASE("a latency map's cells follow the format: column floor(lon)+180, row 90-floor(lat)",
          "[session][latency]") {
  const auto map = latency_map::from_bytes(map_bytes(cell_number));
  const auto cell = [](double lat, double lon) { return latency_map::cell_of({lat, lon}); };
  using xy = std::pair<std::size_t, std::size_t>;
  CHECK(cell(0, 0) == xy{180, 90});
  CHECK(cell(0.5, 0.5) == xy{180, 90});
  CHECK(cell(-0.5, -0.5) == xy{179, 91});
  CHECK(cell(89.5, -179.5) == xy{0, 1});
  CHECK(cell(48.8566, 2.3522) == xy{182, 42});
  // Clamped to the grid: the poles, the date line, out-of-range and NaN.
  CHECK(cell(90, 180) == xy{359, 0});
  CHECK(cell(-90, -180) == xy{0, 179});
  CHECK(cell(123, 456) == xy{359, 0});
  CHECK(cell(std::nan(""), std::nan("")) == xy{0, 0});
  // Every cell reads back the value written for it, over random places.
  mm::rng r(7);
  for (int i = 0; i < 2000; ++i) {
    const geo_point p{r.unit() * 180 - 90, r.unit() * 360 - 180};
    const auto [x, y] = latency_map::cell_of(p);
    REQUIRE(map.rtt_ms(p));
    CHECK(*map.rtt_ms(p) == cell_number(x, y));
    // The brute-force reading of the rule, for points inside the grid.
    CHECK(x == static_cast<std::size_t>(std::floor(p.longitude) + 180));
    CHECK(y == static_cast<std::size_t>(std::min(179.0, 90 - std::floor(p.latitude))));
  }
}

TEST_CASE("a latency map's unknown cells and bad files", "[session][latency]") {
  // Zero, negative and NaN cells are unknown; the rest read as written.
  const auto map = latency_map::from_bytes(map_bytes([](std::size_t x, std::size_t) -> float {
    if (x == 0) return 0;
    if (x == 1) return -5;
    if (x == 2) return std::nanf("");
    return 37.5f;
  }));
  CHECK_FALSE(map.rtt_ms({10, -179.5}));
  CHECK_FALSE(map.rtt_ms({10, -178.5}));
  CHECK_FALSE(map.rtt_ms({10, -177.5}));
  CHECK(map.rtt_ms({10, 0}) == 37.5);

  const auto bytes = map_bytes(cell_number);
  std::vector<std::uint8_t> short_map(bytes.begin(), bytes.end() - 4);
  CHECK_THROWS_WITH(latency_map::from_bytes(short_map), Contains("259196"));

  mm::test::temp_dir dir;
  const auto write = [&](const std::string& name, const std::vector<std::uint8_t>& b) {
    std::ofstream(dir.file(name), std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return dir.file(name);
  };
  const auto good = latency_map::read_file(write("fra.bin", bytes));
  CHECK(good.rtt_ms(paris) == cell_number(182, 42));
  auto longer = bytes;
  longer.push_back(0);
  CHECK_THROWS_WITH(latency_map::read_file(write("long.bin", longer)),
                    Contains("long.bin") && Contains("larger"));
  CHECK_THROWS_WITH(latency_map::read_file(write("short.bin", short_map)),
                    Contains("short.bin") && Contains("259196"));
  CHECK_THROWS_WITH(latency_map::read_file(dir.file("missing.bin")), Contains("missing.bin"));
}

TEST_CASE("the latency model: the map where it knows, the distance estimate elsewhere",
          "[session][latency]") {
  std::vector<datacenter> dcs{{"fra", {50.11, 8.68}, "eu"}, {"syd", {-33.87, 151.21}, "oc"}};
  // fra's map knows only the northern hemisphere (rows 0..89), as 12 ms.
  auto fra_map = latency_map::from_bytes(
      map_bytes([](std::size_t, std::size_t y) { return y < 90 ? 12.0f : 0.0f; }));
  latency_model m(dcs, 2.0, {fra_map, std::nullopt});
  CHECK(m.estimate_ms(paris, 0) == 12.0);
  CHECK(m.estimate_ms(sydney, 0) == Approx(distance_rtt_ms(sydney, dcs[0].location, 2.0)));
  CHECK(m.estimate_ms(paris, 1) == Approx(distance_rtt_ms(paris, dcs[1].location, 2.0)));
  CHECK(m.estimate_ms(sydney, 1) < 5);
  CHECK(m.find("syd") == 1u);
  CHECK_FALSE(m.find("ams"));

  latency_model plain(dcs, 1.5);
  CHECK(plain.estimate_ms(paris, 0) == Approx(distance_rtt_ms(paris, dcs[0].location, 1.5)));
  CHECK_THROWS_AS(latency_model(dcs, 0.5), mm::error);
  CHECK_THROWS_AS(latency_model(dcs, std::nan("")), mm::error);
  CHECK_THROWS_AS(latency_model(dcs, 2.0, {fra_map}), mm::error);  // one map for two
}

TEST_CASE("the staged latency policy at and around its thresholds", "[session][latency]") {
  const latency_stages p;  // 50 ms, then 100 ms after 10 s, warm body after 20 s, failed at 30 s
  CHECK(stage_after(p, 0ms) == latency_stage::ideal);
  CHECK(stage_after(p, 9999ms) == latency_stage::ideal);
  CHECK(stage_after(p, 10s) == latency_stage::expand);
  CHECK(stage_after(p, 19999ms) == latency_stage::expand);
  CHECK(stage_after(p, 20s) == latency_stage::warm_body);
  CHECK(stage_after(p, 29999ms) == latency_stage::warm_body);
  CHECK(stage_after(p, 30s) == latency_stage::failed);
  CHECK(max_rtt_after(p, 9999ms) == 50);
  CHECK(max_rtt_after(p, 10s) == 100);
  CHECK(std::isinf(max_rtt_after(p, 20s)));
  CHECK(std::string(to_string(latency_stage::warm_body)) == "warm_body");

  latency_stages custom{30, 70, 5s, 8s, 60s};
  CHECK(max_rtt_after(custom, 4999ms) == 30);
  CHECK(max_rtt_after(custom, 5s) == 70);
  CHECK(stage_after(custom, 59s) == latency_stage::warm_body);
  CHECK(check(custom, "q.latency.").empty());

  const auto bad = check(latency_stages{0, -1, -1s, -2s, -3s}, "queues.coop.latency.");
  REQUIRE(bad.size() == 5);
  CHECK_THAT(bad[0], Contains("queues.coop.latency.ideal_ms"));
  CHECK_THAT(bad[1], Contains("queues.coop.latency.expand_ms"));
  CHECK_THAT(bad[2], Contains("queues.coop.latency.expand_after"));
  CHECK_THAT(bad[3], Contains("queues.coop.latency.warm_body_after"));
  CHECK_THAT(bad[4], Contains("queues.coop.latency.fail_after"));
  CHECK(check(latency_stages{60, 50, 10s, 20s, 30s}, "").size() == 1);  // expand below ideal
}
