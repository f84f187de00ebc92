// The simulator's parts: the population model, the figures, the charts, and
// tiny simulated days checked for determinism and for consistency.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "mm/engine/error.hpp"
#include "mm/sim/report_files.hpp"
#include "mm/sim/svg_chart.hpp"
#include "mm/testing/temp_dir.hpp"
#include "session_config.hpp"

using namespace mm::sim;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

population_file parse(const std::string& text) {
  std::istringstream in(text);
  return read_population_csv(in, "t.csv");
}

// Brute-force Gini: the mean absolute difference over all pairs / (2 x mean).
double gini_by_pairs(const std::vector<double>& x) {
  double diff = 0, sum = 0;
  for (double a : x) {
    sum += a;
    for (double b : x) diff += std::abs(a - b);
  }
  const auto n = static_cast<double>(x.size());
  return sum > 0 ? diff / (2 * n * sum) : 0;
}

session_day_config tiny_session_day(std::uint64_t seed) {
  session_day_config c;
  c.queue = mm::server::demo_queue();
  c.latency = mm::session::latency_model(mm::server::demo_datacenters(), 2.0);
  c.seed = seed;
  c.warm_up = 1800s;
  mm::rng r(seed);
  c.joins = schedule_joins(default_places(), default_diurnal_curve(), 4000, 1 + 1.0 / 48, r, -1800);
  return c;
}

async_day_config tiny_async_day(const mm::test::temp_dir& dir, std::uint64_t seed) {
  async_day_config c;
  c.places = default_places();
  c.curve = default_diurnal_curve();
  c.players = 3000;
  c.attacks_per_player_day = 3;
  c.joins_per_day = 400;
  c.churn_per_day = 0.05;
  c.days = 0.5;
  c.engine = default_async_options(c.players);
  c.database = dir.file("players-" + std::to_string(seed) + ".db");
  c.seed = seed;
  return c;
}

}  // namespace

TEST_CASE("population files: places or joins, every bad value named by line and column", "[sim]") {
  const auto places =
      parse("latitude,longitude,weight,name\n48.85,2.35,2100000,Paris\n\n-33.9,18.4,0,Nobody\n");
  REQUIRE(places.places.size() == 1);  // a weight of 0 is nobody
  CHECK(places.places[0].where.latitude == Approx(48.85));
  CHECK(places.places[0].weight == 2100000);

  const auto joins =
      parse("time,latitude,longitude,mmr\n01:30,10,20,1500\n60,-10,-20,900\n00:00:30,0,0,1200\r\n");
  REQUIRE(joins.joins.size() == 3);
  CHECK(joins.joins[0].at_s == 30);  // sorted by time
  CHECK(joins.joins[1].at_s == 60);
  CHECK(joins.joins[2].at_s == 5400);
  CHECK(*joins.joins[2].mmr == 1500);
  CHECK_FALSE(parse("time,latitude,longitude\n5,1,2\n").joins[0].mmr.has_value());
  // As a spreadsheet saves it: a byte-order mark, capitals, quotes, CRLF.
  const auto saved = parse(
      "\xEF\xBB\xBF\"Latitude\",\"Longitude\",\"Weight\",\"Name\"\r\n"
      "\"-33.87\",\"151.21\",\"5000\",\"Sydney, NSW\"\r\n");
  REQUIRE(saved.places.size() == 1);
  CHECK(saved.places[0].where.longitude == Approx(151.21));
  CHECK(saved.places[0].weight == 5000);

  CHECK_THROWS_WITH(parse(""), Contains("empty"));
  CHECK_THROWS_WITH(parse("lat,lon\n1,2\n"), Contains("line 1, header"));
  CHECK_THROWS_WITH(parse("latitude,longitude,weight\n91,0,1\n"), Contains("line 2, latitude"));
  CHECK_THROWS_WITH(parse("latitude,longitude,weight\n1,2,3\n0,nan,1\n"),
                    Contains("line 3, longitude"));
  CHECK_THROWS_WITH(parse("latitude,longitude,weight\n0,0,-1\n"), Contains("line 2, weight"));
  CHECK_THROWS_WITH(parse("latitude,longitude,weight\n0,0\n"), Contains("line 2, columns"));
  CHECK_THROWS_WITH(parse("latitude,longitude,weight\n0,0,0\n"), Contains("no place"));
  CHECK_THROWS_WITH(parse("time,latitude,longitude\n12:61,0,0\n"), Contains("line 2, time"));
  CHECK_THROWS_WITH(parse("time,latitude,longitude\n-5,0,0\n"), Contains("line 2, time"));
  CHECK_THROWS_WITH(parse("time,latitude,longitude,mmr\n5,0,0,1e300\n"), Contains("line 2, mmr"));
  CHECK_THROWS_WITH(parse("time,latitude,longitude\n"), Contains("no joins"));
  CHECK_THROWS_WITH(parse("latitude,longitude,weight\n" + std::string(5000, '1') + "\n"),
                    Contains("line 2 is longer than"));

  const auto world = default_places();
  CHECK(world.size() == 810);
  CHECK(
      std::all_of(world.begin(), world.end(), [](const place& p) { return p.weight >= 500'000; }));
}

TEST_CASE("the diurnal curve: local solar time, smooth, parsed with its problems named", "[sim]") {
  CHECK(local_hour(0, 0) == 0);
  CHECK(local_hour(3600, 15) == Approx(2));  // 01:00 UTC at 15 E is 02:00
  CHECK(local_hour(0, -75) == Approx(19));   // midnight UTC at 75 W is 19:00
  const diurnal_curve c = default_diurnal_curve();
  CHECK(c.at(21.5) == Approx(1.0));  // an hour's value holds at its middle
  CHECK(c.at(5.5) == Approx(0.15));
  CHECK(c.at(22.0) == Approx((1.0 + 0.95) / 2));
  CHECK(c.at(23.9) == Approx(c.at(-0.1)));  // wraps at midnight
  CHECK(parse_diurnal_curve("1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2").at(23.5) == 2);
  CHECK_THROWS_WITH(parse_diurnal_curve("1,2"), Contains("24"));
  CHECK_THROWS_WITH(parse_diurnal_curve("1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,x"),
                    Contains("hour 23"));
  CHECK_THROWS_WITH(parse_diurnal_curve("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"),
                    Contains("every hour is 0"));
}

TEST_CASE("joins follow the places' weights and each place's local evening", "[sim]") {
  // Two places half a world apart, one three times the other.
  const std::vector<place> places = {{{0, 0}, 3}, {{0, 180}, 1}};
  mm::rng r(5);
  const auto joins = schedule_joins(places, default_diurnal_curve(), 40'000, 1, r);
  CHECK(static_cast<double>(joins.size()) == Approx(40'000).epsilon(0.03));
  // A part of a day gets its part of the joins, from where it starts.
  mm::rng part(6);
  const auto evening =
      schedule_joins(places, default_diurnal_curve(), 40'000, 0.125, part, -10'800);
  CHECK(evening.front().at_s >= -10'800);
  CHECK(evening.back().at_s < 0);
  CHECK(evening.size() < joins.size() / 4);
  CHECK(std::is_sorted(joins.begin(), joins.end(),
                       [](const join& a, const join& b) { return a.at_s < b.at_s; }));
  std::size_t west = 0;
  std::array<std::size_t, 24> at_zero{};  // joins near longitude 0, by UTC hour
  for (const join& j : joins) {
    CHECK(j.at_s >= 0);
    CHECK(j.at_s < 86'400);
    if (std::abs(j.where.longitude) < 20) {
      ++west;
      ++at_zero[static_cast<std::size_t>(j.at_s / 3600)];
    }
  }
  CHECK(static_cast<double>(west) / static_cast<double>(joins.size()) ==
        Approx(0.75).epsilon(0.03));
  // Local time at longitude 0 is UTC: 21:00 is the peak, 05:00 the trough.
  CHECK(at_zero[21] > 4 * at_zero[5]);
  mm::rng again(5);
  const auto same = schedule_joins(places, default_diurnal_curve(), 40'000, 1, again);
  REQUIRE(same.size() == joins.size());
  CHECK(same.back().at_s == joins.back().at_s);
}

TEST_CASE("Poisson draws have the mean and variance of their law, small or large", "[sim]") {
  mm::rng r(11);
  for (double mean : {0.3, 4.0, 45.0, 60.5, 400.0}) {
    double sum = 0, squares = 0;
    constexpr int n = 20'000;
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<double>(poisson(r, mean));
      sum += k;
      squares += k * k;
    }
    const double m = sum / n, variance = squares / n - m * m;
    CHECK(m == Approx(mean).epsilon(0.03).margin(0.02));
    CHECK(variance == Approx(mean).epsilon(0.08).margin(0.05));
  }
  CHECK(poisson(r, 0) == 0);
  CHECK(poisson(r, -1) == 0);
}

TEST_CASE("distributions and Gini against brute force on skewed data", "[sim]") {
  mm::rng r(9);
  for (int round = 0; round < 50; ++round) {
    std::vector<double> v;
    const std::size_t n = 1 + r.below(300);
    for (std::size_t i = 0; i < n; ++i) {
      // Mostly small, a few huge (offers concentrate on a few players).
      const double x = r.unit();
      v.push_back(round % 3 == 0 ? std::floor(x * 10) : std::floor(std::pow(x, 8) * 1000));
    }
    CHECK(gini(v) == Approx(gini_by_pairs(v)).margin(1e-9));
    const distribution d = summarize(v);
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const auto nearest_rank = [&](double p) {
      return sorted[static_cast<std::size_t>(std::max(1.0, std::ceil(p * static_cast<double>(n)))) -
                    1];
    };
    CHECK(d.count == n);
    CHECK(d.p50 == nearest_rank(0.5));
    CHECK(d.p95 == nearest_rank(0.95));
    CHECK(d.p99 == nearest_rank(0.99));
    CHECK(d.max == sorted.back());
    double sum = 0;
    for (double x : v) sum += x;
    CHECK(d.mean == Approx(sum / static_cast<double>(n)));
  }
  CHECK(gini({5, 5, 5, 5}) == 0);
  CHECK(gini({0, 0, 0, 12}) == Approx(0.75));
  CHECK(gini({}) == 0);
  CHECK(summarize({}).count == 0);
}

TEST_CASE("charts: one path per line series, gaps where values are missing, text escaped",
          "[sim]") {
  chart c;
  c.title = "A <b>&\"title\"";
  c.x = {0, 1, 2, 3};
  c.series = {{"mean & more", {1, 2, std::nan(""), 4}, "", false}, {"p95", {2, 3, 4, 5}, "", true}};
  const std::string svg = render_svg(c);
  CHECK_THAT(svg, Contains("A &lt;b&gt;&amp;&quot;title&quot;"));
  CHECK_THAT(svg, Contains("mean &amp; more"));
  CHECK(svg.find("<b>") == std::string::npos);
  std::size_t paths = 0, moves = 0;
  for (auto at = svg.find("<path"); at != std::string::npos; at = svg.find("<path", at + 1))
    ++paths;
  for (auto at = svg.find(" M"); at != std::string::npos; at = svg.find(" M", at + 1)) ++moves;
  CHECK(paths == 2);
  CHECK(moves == 3);  // the gap lifts the pen once
  CHECK_THAT(svg, Contains("stroke-dasharray"));
  CHECK(svg.rfind("</svg>") != std::string::npos);

  c.stacked_bars = true;
  const std::string bars = render_svg(c);
  CHECK(bars.find("<path") == std::string::npos);
  std::size_t rects = 0;
  for (auto at = bars.find("<rect x"); at != std::string::npos; at = bars.find("<rect x", at + 1))
    ++rects;
  CHECK(rects == 7 + 2);  // bars with a value, plus the two legend swatches
}

TEST_CASE("a tiny session day adds up and is the same for the same seed", "[sim]") {
  const session_day_config c = tiny_session_day(3);
  const session_day_report r = run_session_day(c);
  REQUIRE(r.hours.size() == 24);
  const session_hour& t = r.totals;
  session_hour sum;
  for (const session_hour& h : r.hours) {
    sum.joins += h.joins;
    sum.tickets += h.tickets;
    sum.matches += h.matches;
    sum.matched_players += h.matched_players;
    sum.failed += h.failed;
    CHECK(h.ended() == h.ideal + h.expand + h.warm_body + h.failed + h.bot);
    CHECK(h.concurrent_mean <= static_cast<double>(h.concurrent_peak));
    CHECK(h.time_to_match_s.count == h.matched_players);
    if (h.time_to_match_s.count) {
      CHECK(h.time_to_match_s.p50 <= h.time_to_match_s.p95);
      CHECK(h.time_to_match_s.p95 <= h.time_to_match_s.p99);
    }
  }
  // Hours add up to the totals.
  CHECK(sum.joins == t.joins);
  CHECK(sum.tickets == t.tickets);
  CHECK(sum.matches == t.matches);
  CHECK(sum.matched_players == t.matched_players);
  CHECK(sum.failed == t.failed);
  CHECK(t.joins == r.players);
  const auto warm_up_joins = static_cast<std::size_t>(
      std::count_if(c.joins.begin(), c.joins.end(), [](const join& j) { return j.at_s < 0; }));
  CHECK(warm_up_joins > 0);
  CHECK(t.joins == c.joins.size() - warm_up_joins);
  // Matches x size = matched players: the co-op queue takes exactly 4.
  CHECK(t.matches > 100);
  CHECK(t.bot_matches == 0);
  CHECK(t.matches * 4 == t.matched_players);
  // Every ticket of the day, and those the warm-up handed over, ended
  // (matched or failed) or still waits.
  CHECK(r.carried_in > 0);
  CHECK(t.tickets + r.carried_in == t.matched_players + t.failed + r.still_waiting);
  // The day did not start empty.
  CHECK(r.hours[0].concurrent_mean > 0.5 * r.hours[1].concurrent_mean);
  CHECK(t.ideal + t.expand + t.warm_body == t.matched_players);
  CHECK(t.rtt_ms.count == t.matched_players);
  // The latency stages hold: no ideal-stage match was far, p95 wait under warm-body + a tick.
  CHECK(t.time_to_match_s.max <= 30 + 1);
  CHECK(r.player_seconds > 0);

  // Deterministic: the same CSV twice; another seed differs.
  CHECK(session_hours_csv(run_session_day(tiny_session_day(3))) == session_hours_csv(r));
  CHECK(session_hours_csv(run_session_day(tiny_session_day(4))) != session_hours_csv(r));

  session_day_config bad = tiny_session_day(3);
  bad.days = 0;
  CHECK_THROWS_WITH(run_session_day(bad), Contains("days within"));
  bad = tiny_session_day(3);
  bad.play_again = 1.5;
  CHECK_THROWS_WITH(run_session_day(bad), Contains("play_again"));
}

TEST_CASE("parties leave running matches, and backfill fills their seats again", "[sim]") {
  session_day_config c = tiny_session_day(5);
  c.party_sizes = {50, 30, 20};
  c.leave_rate = 0.2;
  const auto run = [&](bool backfill) {
    session_day_config v = c;
    v.backfill = backfill;
    return run_session_day(v);
  };
  const session_day_report on = run(true), off = run(false);
  for (const session_day_report* r : {&on, &off}) {
    const session_hour& t = r->totals;
    // Tickets are parties: every ticket of the day ended or still waits.
    CHECK(t.tickets + r->carried_in == t.ended() + r->still_waiting);
    CHECK(t.joins > t.tickets / 4);  // players, more than the parties' first tickets
    CHECK(t.seats_opened > 50);
    CHECK(t.seats_refilled <= t.seats_opened);
    CHECK(t.refill_s.count == t.seats_refilled);
    CHECK(t.refill_s.max <= 300);       // within the match
    CHECK(t.underfilled_matches == 0);  // the co-op queue starts only full matches
    // Each new match seats 4; each placed player fills one opened seat.
    CHECK(t.matched_players == 4 * t.matches + t.seats_refilled);
    std::uint64_t opened = 0, refilled = 0;
    for (const session_hour& h : r->hours) {
      opened += h.seats_opened;
      refilled += h.seats_refilled;
      CHECK(h.empty_seat_share >= 0);
      CHECK(h.empty_seat_share <= 1);
    }
    CHECK(opened == t.seats_opened);
    CHECK(refilled == t.seats_refilled);
  }
  CHECK(off.totals.seats_refilled == 0);
  CHECK(on.totals.seats_refilled > on.totals.seats_opened / 2);
  CHECK(on.totals.empty_seat_share < off.totals.empty_seat_share / 2);
  CHECK(session_hours_csv(run(true)) == session_hours_csv(on));

  session_day_config bad = c;
  bad.leave_rate = 2;
  CHECK_THROWS_WITH(run_session_day(bad), Contains("leave_rate"));
  bad = c;
  bad.party_sizes = {1, -1};
  CHECK_THROWS_WITH(run_session_day(bad), Contains("party size"));
}

TEST_CASE("the session day uses a datacenter's latency map where it has one", "[sim]") {
  // Two datacenters far from everyone; "near" has a map of 12 ms everywhere.
  std::vector<mm::session::datacenter> dcs = {{"near", {-80, 0}, "x"}, {"far", {-80, 100}, "x"}};
  std::vector<std::uint8_t> bytes(mm::session::latency_map::file_bytes);
  const float twelve = 12;
  for (std::size_t i = 0; i < bytes.size(); i += 4) std::memcpy(&bytes[i], &twelve, 4);
  std::vector<std::optional<mm::session::latency_map>> maps = {
      mm::session::latency_map::from_bytes(bytes), std::nullopt};
  session_day_config c = tiny_session_day(6);
  c.latency = mm::session::latency_model(dcs, 2.0, maps);
  c.days = 0.25;
  const session_day_report r = run_session_day(c);
  REQUIRE(r.totals.matches > 10);
  CHECK(r.totals.rtt_ms.mean == Approx(12));
  CHECK(r.totals.rtt_ms.max == Approx(12));
}

TEST_CASE("a tiny async day adds up, is the same for the same seed, and has its reference",
          "[sim]") {
  mm::test::temp_dir dir;
  const async_day_config c = tiny_async_day(dir, 3);
  const async_day_report r = run_async_day(c);
  REQUIRE(r.hours.size() == 12);
  const async_hour& t = r.totals;
  std::uint64_t attacks = 0, success = 0, joins = 0;
  for (const async_hour& h : r.hours) {
    CHECK(h.success + h.none_found + h.fake == h.attacks);
    CHECK(h.missed <= h.none_found + h.fake);
    CHECK(h.mmr_gap.count == h.success);
    CHECK(h.cached <= c.engine.player_cache_size);
    CHECK(h.fill <= 1.0);
    attacks += h.attacks;
    success += h.success;
    joins += h.joins;
  }
  CHECK(attacks == t.attacks);
  CHECK(success == t.success);
  CHECK(joins == t.joins);
  // About 3 attacks per player a day for half a day.
  CHECK(static_cast<double>(t.attacks) == Approx(3000 * 3 * 0.5).epsilon(0.2));
  CHECK(t.success > t.attacks / 2);
  // The cache keeps up: almost no attacker goes without an opponent while the
  // table holds one for it.
  CHECK(t.missed <= t.attacks / 100);
  // Every Success offered one defender.
  CHECK(r.engine.offers == t.success);
  CHECK(r.players == 3000 + t.joins);
  CHECK(r.engine.lorenz.size() == 21);
  CHECK(r.engine.lorenz.front() == 0);
  CHECK(r.engine.lorenz.back() == Approx(1));
  CHECK(std::is_sorted(r.engine.lorenz.begin(), r.engine.lorenz.end()));
  CHECK(r.engine.gini >= 0);
  CHECK(r.engine.never_offered >= 0);
  CHECK(r.engine.never_offered <= 1);
  CHECK(r.uniform.offers > 0);
  CHECK(r.scans == 12 * 120 - 0);  // one every 30 s from 10 s on
  CHECK(r.rebalances >= 1);
  CHECK(r.fill.size() == 73);  // every 10 minutes, both ends included

  // A database that exists is refused: the day makes its own table.
  CHECK_THROWS_WITH(run_async_day(c), Contains("exists"));
  async_day_config bad = tiny_async_day(dir, 9);
  bad.days = -1;
  CHECK_THROWS_WITH(run_async_day(bad), Contains("days within"));
  bad = tiny_async_day(dir, 9);
  bad.churn_per_day = 2;
  CHECK_THROWS_WITH(run_async_day(bad), Contains("churn within"));
  CHECK_FALSE(std::filesystem::exists(bad.database));  // refused before anything was written
  mm::test::temp_dir other;
  const async_day_report again = run_async_day(tiny_async_day(other, 3));
  CHECK(async_hours_csv(again) == async_hours_csv(r));
  CHECK(async_fairness_csv(again) == async_fairness_csv(r));
  CHECK(async_fill_csv(again) == async_fill_csv(r));

  // With a warm-up as long as a shield, the day starts with shields on, and
  // still counts only its own attacks and offers.
  async_day_config warm = tiny_async_day(other, 4);
  warm.days = 0.25;
  warm.warm_up = std::chrono::duration_cast<std::chrono::seconds>(warm.shield);
  const async_day_report w = run_async_day(warm);
  CHECK(w.hours.front().shielded > r.hours.front().shielded);
  std::uint64_t warm_attacks = 0;
  for (const async_hour& h : w.hours) warm_attacks += h.attacks;
  CHECK(warm_attacks == w.totals.attacks);
  CHECK(w.engine.offers == w.totals.success);
  CHECK(w.fill.size() == 6 * 6 + 1);
}

TEST_CASE("the report: CSVs, charts and a page that shows them", "[sim]") {
  mm::test::temp_dir dir;
  sim_outputs o;
  session_day_config sc = tiny_session_day(1);
  sc.days = 0.125;
  o.session = run_session_day(sc);
  o.sensitivity.push_back({"play_again=0.50", 0.5, 50, *o.session});
  async_day_config ac = tiny_async_day(dir, 1);
  ac.days = 0.125;
  o.async = run_async_day(ac);
  o.session_settings = {{"queue", "<coop>"}};
  const auto index = write_report(o, dir.file("report"));
  std::ifstream in(index);
  std::stringstream page;
  page << in.rdbuf();
  for (const char* f :
       {"session_hours.csv", "session_sensitivity.csv", "async_hours.csv", "async_fill.csv",
        "async_fairness.csv", "session_players.svg", "session_time_to_match.svg", "session_rtt.svg",
        "session_stages.svg", "async_results.svg", "async_mmr_gap.svg", "async_cached.svg",
        "async_fill.svg", "async_offers.svg"}) {
    CHECK(std::filesystem::exists(dir.file("report/" + std::string(f))));
    CHECK_THAT(page.str(), Contains(std::string("href=\"") + f + "\""));
  }
  CHECK_THAT(page.str(), Contains("&lt;coop&gt;"));
  std::size_t inlined = 0;
  for (auto at = page.str().find("<svg"); at != std::string::npos;
       at = page.str().find("<svg", at + 1))
    ++inlined;
  CHECK(inlined == 9);
  std::ifstream csv(dir.file("report/session_hours.csv"));
  std::string header, line;
  std::getline(csv, header);
  std::size_t rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 3 + 1);  // three hours and the total
  CHECK_THROWS_AS(write_report(o, "/proc/no/such/dir"), mm::error);
}
