#include "mmsim_replay.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "mm/engine/error.hpp"
#include "mm/sim/replay_report.hpp"
#include "recording_reader.hpp"
#include "server_config.hpp"

namespace mm::sim {

namespace {

const char* const help =
    R"(mmsim replay: a recording of matchmakerd's traffic, run again through the
engines on a virtual clock under another configuration: the what-if before a
rule changes.

usage: mmsim replay RECORDING [options]

RECORDING is a recording file, or the directory of its files
(sessions.record.dir: every recording-*.jsonl in it, oldest first).

  --config FILE   a matchmakerd configuration to replay under: its
                  sessions.queues, queue_template and datacenters (default: the
                  configuration the recording was made with, from its header)
  --out DIR       report directory (default: mmsim-replay)
  --seed N        the queues' tie-breaking draws (default: 1)
  --quiet         print only where the report is
)";

struct options {
  std::string recording, config, out = "mmsim-replay";
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
    if (a == "--config" || a == "--out" || a == "--seed") {
      if (i + 1 >= argc) usage_error(a + ": needs a value");
      const std::string v = argv[++i];
      if (a == "--config") o.config = v;
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

}  // namespace

int run_replay(int argc, char** argv) try {
  const options o = parse(argc, argv);
  const server::recording rec = server::read_recording(o.recording);
  server::session_settings settings = rec.settings;
  std::string under = "the recorded configuration (the recording's header)";
  if (!o.config.empty()) {
    const char* args[] = {"matchmakerd", "--config", o.config.c_str()};
    settings = server::parse_command_line(3, args).config.sessions;
    under = o.config;
  }
  const session_replay_config c = server::replay_config_of(rec, settings, o.seed);
  const session_replay_report r = replay_sessions(c);
  const std::int64_t epoch = server::replay_epoch_unix_ms(rec);
  std::string queues;
  for (const auto& q : c.queues) queues += (queues.empty() ? "" : ", ") + q.name;
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"recording",
       o.recording + " (" + std::to_string(rec.files.size()) + " file(s), " +
           std::to_string(rec.events) + " events, " +
           fixed(static_cast<double>(rec.last_unix_ms - rec.first_unix_ms) / 3.6e6, 2) + " hours)"},
      {"replayed under", under},
      {"queues", queues},
      {"not in the recording",
       std::to_string(rec.dropped) + " events dropped while recording (gap lines), " +
           std::to_string(rec.orphans) + " outcomes of tickets created before its first file"},
      {"seed", std::to_string(o.seed)}};
  const auto index = write_replay_report(r, epoch, rows, o.out);
  if (!o.quiet) {
    std::printf("replay of %s under %s: %zu tickets, %zu queue(s), %.2f s\n", o.recording.c_str(),
                under.c_str(), c.tickets.size(), c.queues.size(), r.wall_seconds);
    print_side("recorded", r.totals.recorded);
    print_side("replayed", r.totals.replayed);
    std::printf("  same matches: %llu of %llu recorded matched tickets\n",
                static_cast<unsigned long long>(r.same_match),
                static_cast<unsigned long long>(r.recorded_matched));
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
