// mmsim: a simulated day (or several) of the matchmaker's real engines, on a
// virtual clock, far faster than real time; writes CSV, SVG charts and an HTML
// report (docs/simulation.md).
//
//   mmsim [both|session|async] [options]      mmsim --help
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "mm/engine/error.hpp"
#include "mm/sim/report_files.hpp"
#include "mmsim_print.hpp"
#include "mmsim_replay.hpp"
#include "server_config.hpp"
#include "session_config.hpp"

namespace {

namespace sim = mm::sim;
using namespace std::chrono_literals;

const char* const help =
    R"(mmsim: what players would live through on a simulated day, before launch.

Runs the matchmaker's own engines on a virtual clock: the session queue (live
matches) and the async engine with its player table in SQLite and its scan.
Writes CSV files, SVG charts and index.html into the output directory.

usage: mmsim [both|session|async] [options]      (default: both)
       mmsim replay RECORDING [options]          (mmsim replay --help)

common:
  --out DIR                 report directory (default: mmsim-report)
  --seed N                  every random draw follows from it (default: 1)
  --days D                  simulated days (default: 1; with a CSV of joins, the
                            whole days it spans)
  --population FILE         a CSV of places, 'latitude,longitude,weight[,...]',
                            or of joins, 'time,latitude,longitude[,mmr]' (time in
                            seconds since the start or HH:MM[:SS], UTC). Default:
                            the world's cities of 500,000 people or more (GeoNames)
  --diurnal LIST            24 comma-separated weights of local hours 0..23
                            (default: an evening peak at 21:00, lowest at 05:00)
  --quiet                   print only where the report is

session day (the default: the 4-player co-op queue of matchmakerd's demo,
its 30 datacenters, RTTs estimated from distance):
  --joins-per-day N         new players a day, from the population (default: 40000);
                            they start two hours before the day (a warm-up that is
                            not reported), so the day does not start empty
  --config FILE             a matchmakerd configuration: its sessions.datacenters
                            (with their latency maps), sessions.detour_factor and
                            queues are used
  --queue NAME              the queue of --config (default: its first)
  --latency-map DC=FILE     a datacenter's latency map (360x180 little-endian
                            float32 RTTs, the published format); repeatable
  --string NAME=V1,V2,...   a string attribute the queue's rules read, one of the
                            values for each player (equally likely); repeatable
  --number NAME=MEAN,SD     a number attribute, normal(MEAN, SD); repeatable
  --match-length S          seconds a match lasts (default: 300)
  --play-again P            share of players who queue again (default: 0.75)
  --between S               seconds between two matches (default: 30)
  --parties W1,W2,...       weights of parties of 1, 2, 3... players (default:
                            60,25,10,5); a party joins, queues, plays and leaves
                            together; --joins-per-day still counts players
  --leave-rate P            the chance that a match loses one of its parties before
                            its end, at a random moment (default: 0.05)
  --backfill on|off         whether such a match asks the queue to fill its open
                            seats (default: on); with on and a leave rate, the same
                            day also runs without backfill, beside it in the report
  --no-sensitivity          skip the runs with play-again 0.5/0.75/0.9 and
                            ideal RTT 30/50/70 ms

async day:
  --players N               players in the table at the start (default: 20000)
  --attacks-per-player-day A   attacks by an active player a day (default: 4)
  --new-players-per-day N   (default: 1000)
  --churn-per-day P         share of active players who stop playing a day;
                            they stay in the table as defenders (default: 0.02)
  --shield S                seconds a defender is shielded after an attack
                            (default: 7200)
  --elo-k K                 Elo K factor (default: 32)
  --retries N               num_retries of each attack's request (default: 2)
  --cache N                 the engine's player cache (default: a fifth of --players,
                            or the player_cache_size of --config)
  --attribute-values A,B,C,D   values of attr0..attr3, drawn uniformly for each
                            player (default: 4,2000,20,8: the demo's regions,
                            guilds, heroes and leagues)
With --config, the async day runs that configuration's profile (its match rule)
and engine options; without, matchmakerd's demo profile: region must be equal,
never the own guild, another hero preferred.
)";

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "mmsim: %s (see mmsim --help)\n", what.c_str());
  std::exit(2);
}

double number_of(const std::string& flag, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(d >= lo && d <= hi))
    usage_error(flag + ": '" + v + "' is not a number in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return d;
}

struct settings {
  std::string what = "both";
  std::string out = "mmsim-report";
  std::uint64_t seed = 1;
  double days = 1;
  std::string population, diurnal, config, queue;
  bool days_given = false;
  std::vector<std::pair<std::string, std::string>> latency_maps;
  std::vector<sim::session_day_config::string_attribute> strings;
  std::vector<sim::session_day_config::number_attribute> numbers;
  bool quiet = false, sensitivity = true;
  double joins_per_day = 40'000, match_length = 300, play_again = 0.75, between = 30;
  std::vector<double> parties{60, 25, 10, 5};
  double leave_rate = 0.05;
  bool backfill = true;
  std::array<std::uint32_t, 4> attribute_values{4, 2000, 20, 8};
  double players = 20'000, attacks = 4, new_players = 1'000, churn = 0.02, shield = 7'200,
         elo_k = 32, retries = 2, cache = 0;
};

// NAME=REST, with NAME as a queue's rule may read it (1 to 64 bytes).
std::pair<std::string, std::string> attribute_of(const std::string& flag, const std::string& v) {
  const auto eq = v.find('=');
  if (eq == std::string::npos || eq == 0 || eq > 64 || eq + 1 == v.size())
    usage_error(flag + ": expected NAME=VALUES with a name of 1 to 64 bytes, got '" +
                v.substr(0, 80) + "'");
  return {v.substr(0, eq), v.substr(eq + 1)};
}

settings parse(int argc, char** argv) {
  settings s;
  int i = 1;
  if (i < argc && argv[i][0] != '-') {
    s.what = argv[i++];
    if (s.what != "both" && s.what != "session" && s.what != "async")
      usage_error("unknown command '" + s.what + "': expected both, session or async");
  }
  const std::map<std::string, std::function<void(const std::string&)>> with_value = {
      {"--out", [&](const std::string& v) { s.out = v; }},
      {"--seed",
       [&](const std::string& v) {
         s.seed = static_cast<std::uint64_t>(number_of("--seed", v, 0, 9e15));
       }},
      {"--days",
       [&](const std::string& v) {
         s.days = number_of("--days", v, 0.01, 31);
         s.days_given = true;
       }},
      {"--string",
       [&](const std::string& v) {
         const auto [name, rest] = attribute_of("--string", v);
         sim::session_day_config::string_attribute a{name, {}};
         std::string item;
         std::istringstream in(rest);
         while (std::getline(in, item, ',')) {
           if (item.empty() || item.size() > 256)
             usage_error("--string " + name + ": values are 1 to 256 bytes");
           a.values.push_back(item);
         }
         if (a.values.empty() || a.values.size() > 64)
           usage_error("--string " + name + ": give 1 to 64 values");
         s.strings.push_back(std::move(a));
       }},
      {"--number",
       [&](const std::string& v) {
         const auto [name, rest] = attribute_of("--number", v);
         const auto comma = rest.find(',');
         if (comma == std::string::npos) usage_error("--number " + name + ": expected MEAN,SD");
         s.numbers.push_back({name, number_of("--number " + name, rest.substr(0, comma), -1e9, 1e9),
                              number_of("--number " + name, rest.substr(comma + 1), 0, 1e9)});
       }},
      {"--population", [&](const std::string& v) { s.population = v; }},
      {"--diurnal", [&](const std::string& v) { s.diurnal = v; }},
      {"--config", [&](const std::string& v) { s.config = v; }},
      {"--queue", [&](const std::string& v) { s.queue = v; }},
      {"--latency-map",
       [&](const std::string& v) {
         const auto eq = v.find('=');
         if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
           usage_error("--latency-map: expected DC=FILE, got '" + v + "'");
         s.latency_maps.emplace_back(v.substr(0, eq), v.substr(eq + 1));
       }},
      {"--joins-per-day",
       [&](const std::string& v) { s.joins_per_day = number_of("--joins-per-day", v, 0, 1e8); }},
      {"--match-length",
       [&](const std::string& v) { s.match_length = number_of("--match-length", v, 1, 86'400); }},
      {"--play-again",
       [&](const std::string& v) { s.play_again = number_of("--play-again", v, 0, 1); }},
      {"--between",
       [&](const std::string& v) { s.between = number_of("--between", v, 0, 86'400); }},
      {"--parties",
       [&](const std::string& v) {
         s.parties.clear();
         std::istringstream in(v);
         std::string item;
         while (std::getline(in, item, ','))
           s.parties.push_back(number_of("--parties", item, 0, 1e6));
         if (s.parties.empty() || s.parties.size() > 8 ||
             s.parties == std::vector<double>(s.parties.size(), 0))
           usage_error("--parties: 1 to 8 weights, not all 0");
       }},
      {"--leave-rate",
       [&](const std::string& v) { s.leave_rate = number_of("--leave-rate", v, 0, 1); }},
      {"--backfill",
       [&](const std::string& v) {
         if (v != "on" && v != "off") usage_error("--backfill: on or off, got '" + v + "'");
         s.backfill = v == "on";
       }},
      {"--players", [&](const std::string& v) { s.players = number_of("--players", v, 1, 1e7); }},
      {"--attacks-per-player-day",
       [&](const std::string& v) {
         s.attacks = number_of("--attacks-per-player-day", v, 0, 1000);
       }},
      {"--new-players-per-day",
       [&](const std::string& v) {
         s.new_players = number_of("--new-players-per-day", v, 0, 1e7);
       }},
      {"--churn-per-day",
       [&](const std::string& v) { s.churn = number_of("--churn-per-day", v, 0, 1); }},
      {"--shield",
       [&](const std::string& v) { s.shield = number_of("--shield", v, 0, 30 * 86'400); }},
      {"--elo-k", [&](const std::string& v) { s.elo_k = number_of("--elo-k", v, 0, 1000); }},
      {"--retries", [&](const std::string& v) { s.retries = number_of("--retries", v, 0, 100); }},
      {"--cache", [&](const std::string& v) { s.cache = number_of("--cache", v, 100, 1e8); }},
      {"--attribute-values",
       [&](const std::string& v) {
         std::istringstream in(v);
         std::string item;
         std::size_t given = 0;
         while (std::getline(in, item, ',')) {
           if (given == 4) usage_error("--attribute-values: four numbers, for attr0..attr3");
           s.attribute_values[given++] =
               static_cast<std::uint32_t>(number_of("--attribute-values", item, 0, 1e6));
         }
         if (given != 4) usage_error("--attribute-values: four numbers, for attr0..attr3");
       }},
  };
  for (; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(help, stdout);
      std::exit(0);
    }
    if (flag == "--quiet") {
      s.quiet = true;
      continue;
    }
    if (flag == "--no-sensitivity") {
      s.sensitivity = false;
      continue;
    }
    const auto it = with_value.find(flag);
    if (it == with_value.end()) usage_error("unknown option '" + flag + "'");
    if (i + 1 >= argc) usage_error(flag + ": needs a value");
    it->second(argv[++i]);
  }
  if (s.strings.size() + s.numbers.size() > 32) usage_error("at most 32 attributes");
  // A run's joins are held in memory: 20 million at most.
  if (s.joins_per_day * (s.days + 2.0 / 24) > 20e6)
    usage_error("--joins-per-day x --days: at most 20 million joins in a run");
  return s;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// "1: 60%, 2: 25%, ..." of the party sizes a queue takes.
std::string parties_text(const std::vector<double>& weights, std::uint32_t max_party) {
  double total = 0;
  for (std::size_t k = 0; k < weights.size() && k < max_party; ++k) total += weights[k];
  std::string out;
  for (std::size_t k = 0; k < weights.size() && k < max_party; ++k)
    out += (out.empty() ? "" : ", ") + std::to_string(k + 1) + ": " +
           fixed(100 * weights[k] / total, 0) + "%";
  return out + " of the arrivals";
}

// The population: places, or joins as they were (whose places are then their
// locations, for the async day).
struct population {
  std::vector<sim::place> places;
  std::vector<sim::join> joins;
  std::string source;
};

population load_population(const settings& s) {
  population p;
  if (s.population.empty()) {
    p.places = sim::default_places();
    p.source = "world cities of 500,000 people or more (GeoNames, CC BY 4.0)";
    return p;
  }
  std::ifstream in(s.population, std::ios::binary);
  if (!in) usage_error("--population: cannot open '" + s.population + "'");
  auto file = sim::read_population_csv(in, s.population);
  p.places = std::move(file.places);
  p.joins = std::move(file.joins);
  for (const auto& j : p.joins) p.places.push_back({j.where, 1});
  p.source = s.population + (p.joins.empty() ? " (places)" : " (joins)");
  return p;
}

struct session_setup {
  std::vector<mm::session::datacenter> datacenters = mm::server::demo_datacenters();
  double detour = 2;
  // The latency maps --config names (per datacenter; empty: none).
  std::vector<std::optional<mm::session::latency_map>> maps;
  mm::session::queue_config queue = mm::server::demo_queue();
  std::string source = "matchmakerd's demo";
};

// The matchmakerd configuration of --config, read and checked as the server
// reads it; nothing without --config.
std::optional<mm::server::server_config> load_config(const settings& s) {
  if (s.config.empty()) return std::nullopt;
  const char* args[] = {"matchmakerd", "--config", s.config.c_str()};
  return mm::server::parse_command_line(3, args).config;
}

session_setup load_session_setup(const settings& s,
                                 const std::optional<mm::server::server_config>& config) {
  session_setup out;
  if (config) {
    out.datacenters = config->sessions.datacenters;
    out.detour = config->sessions.detour_factor;
    for (const auto& m : config->sessions.latency_maps)
      out.maps.push_back(m ? std::optional(m->map) : std::nullopt);
    const auto& queues = config->sessions.queues;
    if (queues.empty()) usage_error("--config: " + s.config + " has no session queue");
    out.queue = queues.front();
    if (!s.queue.empty()) {
      bool found = false;
      for (const auto& q : queues)
        if (q.name == s.queue) out.queue = q, found = true;
      if (!found) usage_error("--queue: '" + s.queue + "' is not a queue of " + s.config);
    }
    out.source = s.config;
  } else if (!s.queue.empty() && s.queue != out.queue.name) {
    usage_error("--queue: without --config the only queue is 'coop'");
  }
  return out;
}

mm::session::latency_model latency_of(const settings& s, const session_setup& setup) {
  std::vector<std::optional<mm::session::latency_map>> maps = setup.maps;
  if (!s.latency_maps.empty()) {
    maps.resize(setup.datacenters.size());
    for (const auto& [dc, file] : s.latency_maps) {
      std::size_t at = setup.datacenters.size();
      for (std::size_t i = 0; i < setup.datacenters.size(); ++i)
        if (setup.datacenters[i].name == dc) at = i;
      if (at == setup.datacenters.size())
        usage_error("--latency-map: no datacenter is named '" + dc + "'");
      maps[at] = mm::session::latency_map::read_file(file);
    }
  }
  return mm::session::latency_model(setup.datacenters, setup.detour, std::move(maps));
}

// The profile's attribute rules and the values drawn for each, for the page.
std::string attributes_text(const mm::generic_profile_config& p,
                            const std::array<std::uint32_t, 4>& values) {
  std::string out;
  for (std::size_t i = 0; i < p.attributes.size() && i < values.size(); ++i) {
    const auto& a = p.attributes[i];
    out += "; " + a.name + " " + std::string(mm::to_string(a.rule)) + " (" +
           std::to_string(values[i]) + " values)";
  }
  return out;
}

// A temporary directory for the async day's SQLite file, removed at the end.
struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mmsim-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw mm::error(mm::errc::invalid_argument,
                      "cannot create a temporary directory in " +
                          std::filesystem::temp_directory_path().string());
    path = pattern;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc > 1 && std::string(argv[1]) == "replay") return sim::run_replay(argc - 1, argv + 1);
  const settings s = parse(argc, argv);
  const population pop = load_population(s);
  const sim::diurnal_curve curve =
      s.diurnal.empty() ? sim::default_diurnal_curve() : sim::parse_diurnal_curve(s.diurnal);
  sim::sim_outputs out;
  const auto config = load_config(s);

  if (s.what != "async") {
    const session_setup setup = load_session_setup(s, config);
    sim::session_day_config c;
    c.queue = setup.queue;
    c.latency = latency_of(s, setup);
    c.days = s.days;
    c.match_length = std::chrono::seconds(static_cast<std::int64_t>(s.match_length));
    c.between_matches = std::chrono::seconds(static_cast<std::int64_t>(s.between));
    c.play_again = s.play_again;
    c.party_sizes = s.parties;
    c.leave_rate = s.leave_rate;
    c.backfill = s.backfill;
    c.seed = s.seed;
    c.strings = s.strings;
    c.numbers = s.numbers;
    if (!pop.joins.empty()) {
      c.joins = pop.joins;
      // The whole days the joins span, unless --days says otherwise.
      if (!s.days_given) {
        c.days = std::max(1.0, std::ceil((pop.joins.back().at_s + 1) / 86'400));
        if (c.days > 31) usage_error("--population: the joins span more than 31 days");
      }
      std::size_t after = 0;
      for (const auto& j : pop.joins) after += j.at_s >= c.days * 86'400 ? 1 : 0;
      if (after > 0 && !s.quiet)
        std::printf("session day: %zu joins of %s come after the run's end and are left out\n",
                    after, s.population.c_str());
    } else {
      // Two hours of warm-up, so that the day does not start with nobody
      // online (a player who plays again 9 times in 10 stays about an hour).
      c.warm_up = 7200s;
      mm::rng r(s.seed);
      // A join is a party's: as many of them as make --joins-per-day players.
      double weight = 0, players = 0;
      for (std::size_t k = 0; k < s.parties.size() && k < c.queue.max_party_size; ++k) {
        weight += s.parties[k];
        players += s.parties[k] * static_cast<double>(k + 1);
      }
      const double mean_party = weight > 0 ? players / weight : 1;
      c.joins = sim::schedule_joins(pop.places, curve, s.joins_per_day / mean_party,
                                    s.days + 2.0 / 24, r, -7200);
    }
    out.session = sim::run_session_day(c);
    if (!s.quiet) sim::print_session(*out.session);
    const double ideal = c.queue.latency ? c.queue.latency->ideal_ms : 0;
    out.session_settings = {
        {"queue", c.queue.name + " from " + setup.source + ": " +
                      std::to_string(c.queue.min_players) + " to " +
                      std::to_string(c.queue.max_players) + " players, tick " +
                      std::to_string(c.queue.tick.count()) + " ms"},
        {"datacenters", std::to_string(setup.datacenters.size()) +
                            (s.latency_maps.empty() ? ", RTTs estimated from distance"
                                                    : ", " + std::to_string(s.latency_maps.size()) +
                                                          " with latency maps")},
        {"population", pop.source},
        {"joins", pop.joins.empty() ? fixed(s.joins_per_day, 0) +
                                          " a day, after two hours of warm-up (not reported)"
                                    : std::to_string(pop.joins.size()) + " from the file"},
        {"match", fixed(s.match_length, 0) + " s; " + fixed(100 * s.play_again, 0) +
                      "% play again after " + fixed(s.between, 0) + " s"},
        {"parties", parties_text(s.parties, c.queue.max_party_size)},
        {"leaving and backfill", fixed(100 * s.leave_rate, 1) +
                                     "% of matches lose a party before their end; backfill " +
                                     (s.backfill ? "on (placed players join at once)" : "off")},
        {"latency stages", c.queue.latency ? "ideal " + fixed(ideal, 0) + " ms, expand " +
                                                 fixed(c.queue.latency->expand_ms, 0) + " ms"
                                           : "none"},
        {"days, seed", fixed(c.days, 2) + ", " + std::to_string(s.seed)}};
    if (s.backfill && s.leave_rate > 0) {
      sim::session_day_config off = c;
      off.backfill = false;
      out.without_backfill = sim::run_session_day(off);
    }
    if (!c.strings.empty() || !c.numbers.empty()) {
      std::string text;
      for (const auto& a : c.strings)
        text += (text.empty() ? "" : "; ") + a.name + ": one of " + std::to_string(a.values.size());
      for (const auto& a : c.numbers)
        text += (text.empty() ? "" : "; ") + a.name + ": normal(" + fixed(a.mean, 1) + ", " +
                fixed(a.stddev, 1) + ")";
      out.session_settings.emplace_back("player attributes", text);
    }
    if (s.sensitivity) {
      const auto rerun = [&](double play_again, double ideal_ms, std::string changed) {
        sim::sensitivity_run run;
        run.changed = std::move(changed);
        run.play_again = play_again;
        run.ideal_ms = ideal_ms;
        if (play_again == c.play_again && ideal_ms == ideal) {
          run.report = *out.session;  // the base day itself
        } else {
          sim::session_day_config v = c;
          v.play_again = play_again;
          if (v.queue.latency) {
            v.queue.latency->ideal_ms = ideal_ms;
            v.queue.latency->expand_ms = std::max(v.queue.latency->expand_ms, ideal_ms);
          }
          run.report = sim::run_session_day(v);
        }
        out.sensitivity.push_back(std::move(run));
      };
      for (double p : {0.5, 0.75, 0.9}) rerun(p, ideal, "play_again=" + fixed(p, 2));
      if (c.queue.latency)
        for (double ms : {30.0, 50.0, 70.0}) rerun(c.play_again, ms, "ideal_ms=" + fixed(ms, 0));
    }
  }

  if (s.what != "session") {
    const temp_dir dir;
    sim::async_day_config c;
    c.places = pop.places;
    c.curve = curve;
    c.players = static_cast<std::uint32_t>(s.players);
    c.attacks_per_player_day = s.attacks;
    c.joins_per_day = s.new_players;
    c.churn_per_day = s.churn;
    c.days = s.days;
    c.shield = std::chrono::seconds(static_cast<std::int64_t>(s.shield));
    // A warm-up as long as a shield (2 to 24 hours): the day starts with the
    // shields of a day under way, not with none.
    c.warm_up = std::clamp(c.shield, std::chrono::seconds(7200), std::chrono::seconds(86'400));
    c.elo_k = s.elo_k;
    c.retries = static_cast<std::uint32_t>(s.retries);
    c.attribute_values = s.attribute_values;
    if (config) {  // the game's own match rule and engine options
      c.profile = config->profile;
      c.engine = config->opts;
    } else {
      c.engine = sim::default_async_options(c.players);
    }
    if (s.cache > 0) {
      c.engine.player_cache_size = static_cast<std::uint32_t>(s.cache);
      c.engine.database_cache_size =
          std::min(c.engine.database_cache_size, c.engine.player_cache_size);
    }
    c.database = (dir.path / "players.db").string();
    c.seed = s.seed;
    out.async = sim::run_async_day(c);
    if (!s.quiet) sim::print_async(*out.async);
    out.async_settings = {
        {"players", fixed(s.players, 0) + " at the start, " + fixed(s.new_players, 0) +
                        " new a day, " + fixed(100 * s.churn, 1) +
                        "% of the active stop playing a day"},
        {"attacks",
         fixed(s.attacks, 1) + " per active player a day, on the diurnal curve of where they live"},
        {"population", pop.source},
        {"shield", fixed(s.shield, 0) + " s after being attacked; " +
                       std::to_string(c.warm_up.count()) +
                       " s of warm-up before the day (not reported)"},
        {"Elo K", fixed(s.elo_k, 0)},
        {"engine", std::string(config ? "options of " + s.config : "demo options") + ": cache " +
                       std::to_string(c.engine.player_cache_size) + " players, scan every " +
                       std::to_string(c.engine.database_scan_tick.count() / 1000) + " s, retries " +
                       std::to_string(c.retries) + ", fake opponents " +
                       (c.engine.enable_fake_opponents ? "on" : "off")},
        {"match rule", std::string(config ? "the profile of " + s.config : "the demo profile") +
                           ": MMR window " + fixed(c.profile.mmr_window, 0) + " + " +
                           fixed(c.profile.mmr_window_per_retry, 0) + " per retry" +
                           attributes_text(c.profile, c.attribute_values)},
        {"days, seed", fixed(s.days, 2) + ", " + std::to_string(s.seed)}};
  }

  const auto index = sim::write_report(out, s.out);
  std::printf("report: %s\n", std::filesystem::absolute(index).c_str());
  return 0;
} catch (const mm::error& e) {
  std::fprintf(stderr, "mmsim: %s\n", e.what());
  return 2;
} catch (const std::exception& e) {
  std::fprintf(stderr, "mmsim: %s\n", e.what());
  return 1;
}
