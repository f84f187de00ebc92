#include "mmsim_replay.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "mm/engine/error.hpp"
#include "mm/sim/replay_report.hpp"
#include "query_recording_reader.hpp"
#include "recording_reader.hpp"
#include "server_config.hpp"

namespace mm::sim {

namespace {

const char* const help =
    R"(mmsim replay: a recording of matchmakerd's traffic, run again through the
engines on a virtual clock under another configuration: the what-if before a
rule changes.

usage: mmsim replay RECORDING [options]

RECORDING is a recording file, or the directory of its files, oldest first:
a session recording (sessions.record: recording-*.jsonl), an async one
(record_queries: queries-*.jsonl), or a directory with both.

  --config FILE   a matchmakerd configuration to replay under: its
                  sessions.queues, queue_template and datacenters, and its
                  profile, matchmaker options and instances (default: the
                  configuration the recording was made with, from its header)
  --players FILE  the SQLite player table the async engines scan (matchmakerd's
                  database file, or a copy; read, never written): needed for an
                  async recording
  --out DIR       report directory (default: mmsim-replay)
  --seed N        draws of the session queues without a recorded seed, and of
                  the async engines (default: 1)
  --quiet         print only where the report is
)";

struct options {
  std::string recording, config, players, out = "mmsim-replay";
  std::uint64_t seed = 1;
  bool quiet = false;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "mmsim replay: %s (see mmsim replay --help)\n", what.c_str());
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(help, stdout);
      std::exit(0);
    }
    if (a == "--quiet") {
      o.quiet = true;
      continue;
    }
    if (a == "--config" || a == "--out" || a == "--seed" || a == "--players") {
      if (i + 1 >= argc) usage_error(a + ": needs a value");
      const std::string v = argv[++i];
      if (a == "--config") o.config = v;
      if (a == "--players") o.players = v;
      if (a == "--out") o.out = v;
      if (a == "--seed") {
        char* end = nullptr;
        o.seed = std::strtoull(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0') usage_error("--seed: '" + v + "' is not a number");
      }
      continue;
    }
    if (!a.empty() && a[0] == '-') usage_error("unknown option '" + a + "'");
    if (!o.recording.empty()) usage_error("one recording at a time, got '" + a + "' too");
    o.recording = a;
  }
  if (o.recording.empty()) usage_error("which recording? give a file or a directory");
  return o;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void print_side(const char* name, const replay_figures& f) {
  const double matched = f.tickets ? 100.0 * static_cast<double>(f.matched) / f.tickets : 0;
  std::printf(
      "  %-9s %llu tickets, %.1f%% matched; time to match p50 %.1f s, p95 %.1f s; MMR spread "
      "mean %.0f; worst RTT mean %.1f ms; ideal/expand/warm body %llu/%llu/%llu\n",
      name, static_cast<unsigned long long>(f.tickets), matched, f.time_to_match_s.p50,
      f.time_to_match_s.p95, f.mmr_spread.mean, f.worst_rtt_ms.mean,
      static_cast<unsigned long long>(f.ideal), static_cast<unsigned long long>(f.expand),
      static_cast<unsigned long long>(f.warm_body));
}

void print_async_side(const char* name, const async_replay_figures& f) {
  const auto pct = [&](std::uint64_t n) {
    return f.queries ? 100.0 * static_cast<double>(n) / static_cast<double>(f.queries) : 0.0;
  };
  std::printf(
      "  %-9s %llu queries: Success %.1f%%, NoneFound %.1f%%, FakeOpponent %.1f%%; MMR gap mean "
      "%.1f, p95 %.1f\n",
      name, static_cast<unsigned long long>(f.queries), pct(f.success), pct(f.none_found),
      pct(f.fake), f.mmr_gap.mean, f.mmr_gap.p95);
}

}  // namespace

int run_replay(int argc, char** argv) try {
  const options o = parse(argc, argv);
  // What the recording holds: a file by its header, a directory by its files.
  bool sessions = false, async = false;
  std::error_code ec;
  if (std::filesystem::is_directory(o.recording, ec)) {
    sessions = server::has_recording_files(o.recording, "recording");
    async = server::has_recording_files(o.recording, "queries");
    if (!sessions && !async)
      usage_error("no recording-*.jsonl or queries-*.jsonl file in " + o.recording);
  } else {
    const std::string format = server::recording_format_at(o.recording);
    sessions = format == server::recording_format;
    async = format == server::query_recording_format;
    // A file of neither: the session reader says what is wrong with it.
    if (!sessions && !async) sessions = true;
  }
  if (async && o.players.empty())
    usage_error(
        "an async recording replays over a player table: --players FILE.db (matchmakerd's "
        "database file, or a copy)");
  std::optional<server::server_config> candidate;
  if (!o.config.empty()) {
    const char* args[] = {"matchmakerd", "--config", o.config.c_str()};
    candidate = server::parse_command_line(3, args).config;
  }
  const std::string under =
      candidate ? o.config : std::string("the recorded configuration (the recording's header)");

  replay_part<session_replay_report> session_part;
  session_replay_report session_report;
  std::optional<session_replay_config> session_config;
  if (sessions) {
    const server::recording rec = server::read_recording(o.recording);
    const server::session_settings& settings = candidate ? candidate->sessions : rec.settings;
    session_config = server::replay_config_of(rec, settings, o.seed);
    session_report = replay_sessions(*session_config);
    std::string queues;
    for (const auto& q : session_config->queues) queues += (queues.empty() ? "" : ", ") + q.name;
    session_part = {
        &session_report,
        server::replay_epoch_unix_ms(rec),
        {{"recording",
          o.recording + " (" + std::to_string(rec.files.size()) + " file(s), " +
              std::to_string(rec.events) + " events, " +
              fixed(static_cast<double>(rec.last_unix_ms - rec.first_unix_ms) / 3.6e6, 2) +
              " hours)"},
         {"replayed under", under},
         {"queues", queues},
         {"not in the recording",
          std::to_string(rec.dropped) + " events dropped while recording (gap lines), " +
              std::to_string(rec.orphans) + " outcomes of tickets created before its first file"},
         {"seed", std::to_string(o.seed)}}};
  }

  replay_part<async_replay_report> async_part;
  async_replay_report async_report;
  if (async) {
    const server::query_recording_data rec = server::read_query_recording(o.recording);
    const server::server_config& engines = candidate ? *candidate : rec.recorded;
    const async_replay_config c = server::async_replay_config_of(rec, engines, o.players, o.seed);
    async_report = replay_async(c);
    async_part = {
        &async_report,
        server::async_replay_epoch_unix_ms(rec),
        {{"recording", o.recording + " (" + std::to_string(rec.files.size()) + " file(s), " +
                           std::to_string(rec.calls.size()) + " calls, " +
                           std::to_string(rec.dropped) + " dropped while recording)"},
         {"replayed under", under},
         {"engines", std::to_string(c.instances) + " instance(s), cache " +
                         std::to_string(c.engine.player_cache_size) + " players, scan every " +
                         std::to_string(c.engine.database_scan_tick.count() / 1000) +
                         " s, fake opponents " + (c.engine.enable_fake_opponents ? "on" : "off")},
         {"player table", o.players},
         {"seed", std::to_string(o.seed)}}};
  }

  const auto index = write_replay_report(session_part, async_part, o.out);
  if (!o.quiet && sessions) {
    std::printf("replay of %s under %s: %zu tickets, %zu queue(s), %.2f s\n", o.recording.c_str(),
                under.c_str(), session_config->tickets.size(), session_config->queues.size(),
                session_report.wall_seconds);
    print_side("recorded", session_report.totals.recorded);
    print_side("replayed", session_report.totals.replayed);
    std::printf("  same matches: %llu of %llu recorded matched tickets\n",
                static_cast<unsigned long long>(session_report.same_match),
                static_cast<unsigned long long>(session_report.recorded_matched));
  }
  if (!o.quiet && async) {
    std::printf("async replay of %s under %s: %.2f s\n", o.recording.c_str(), under.c_str(),
                async_report.wall_seconds);
    print_async_side("recorded", async_report.totals.recorded);
    print_async_side("replayed", async_report.totals.replayed);
    std::printf("  same opponent: %llu queries\n",
                static_cast<unsigned long long>(async_report.same_opponent));
  }
  std::printf("report: %s\n", std::filesystem::absolute(index).c_str());
  return 0;
} catch (const mm::error& e) {
  std::fprintf(stderr, "mmsim replay: %s\n", e.what());
  return 2;
} catch (const std::exception& e) {
  std::fprintf(stderr, "mmsim replay: %s\n", e.what());
  return 1;
}

}  // namespace mm::sim
