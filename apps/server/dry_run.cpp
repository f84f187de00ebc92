#include "dry_run.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>
#include <exception>
#include <thread>

#include "mm/engine/error.hpp"
#include "recording_reader.hpp"

namespace mm::server {

namespace {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

json distribution_json(const sim::distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"p50", d.p50}, {"p95", d.p95}, {"max", d.max}};
}

// The tickets created in the recording's last `window` (and the ticks from
// its start): a replay of them alone, each queue starting empty.
recording within(recording r, std::chrono::milliseconds window) {
  const std::int64_t from = r.last_unix_ms - window.count();
  if (from <= r.first_unix_ms) return r;
  std::erase_if(r.tickets, [&](const recorded_ticket& t) { return t.created_unix_ms < from; });
  for (auto& [queue, ticks] : r.ticks)
    std::erase_if(ticks, [&](std::int64_t at) { return at < from; });
  r.first_unix_ms = from;
  return r;
}

json side_json(const sim::session_replay_report& report) {
  json queues = json::object();
  for (const auto& row : report.queues) queues[row.queue] = replay_figures_json(row.replayed);
  return {{"figures", replay_figures_json(report.totals.replayed)}, {"queues", queues}};
}

}  // namespace

json replay_figures_json(const sim::replay_figures& f) {
  const auto share = [&](std::uint64_t n) {
    return f.tickets ? static_cast<double>(n) / static_cast<double>(f.tickets) : 0.0;
  };
  return {{"tickets", f.tickets},
          {"matched", f.matched},
          {"cancelled", f.cancelled},
          {"expired", f.expired},
          {"failed", f.failed},
          {"waiting", f.waiting},
          {"refused", f.refused},
          {"matched_share", share(f.matched)},
          {"expired_share", share(f.expired)},
          {"time_to_match_s", distribution_json(f.time_to_match_s)},
          {"mmr_spread", distribution_json(f.mmr_spread)},
          {"worst_rtt_ms", distribution_json(f.worst_rtt_ms)}};
}

dry_runner::dry_runner(const server_config& c, std::function<void()> flush)
    : config_(c), flush_(std::move(flush)) {}

json dry_runner::replay(const dry_run_request& r, const std::function<void()>& check_budget) {
  recording_limits limits;
  limits.last_line_may_be_cut = true;
  const recording all = read_recording(config_.sessions.record.dir, limits);
  check_budget();
  const recording rec = within(all, r.window);
  constexpr std::uint64_t seed = 1;  // mmsim replay's default
  auto current = replay_config_of(rec, r.current, seed);
  current.check_budget = check_budget;
  const auto now_report = sim::replay_sessions(current);
  auto candidate = replay_config_of(rec, r.candidate, seed);
  candidate.check_budget = check_budget;
  const auto next_report = sim::replay_sessions(candidate);
  json current_side = side_json(now_report);
  current_side["version"] = r.current_version;
  return {{"recording",
           {{"dir", config_.sessions.record.dir},
            {"files", rec.files.size()},
            {"tickets", rec.tickets.size()},
            {"from_unix_ms", rec.first_unix_ms},
            {"to_unix_ms", rec.last_unix_ms},
            {"window_s", r.window.count()}}},
          {"recorded", {{"figures", replay_figures_json(now_report.totals.recorded)}}},
          {"current", current_side},
          {"candidate", side_json(next_report)}};
}

json dry_runner::run(const dry_run_request& r) {
  if (config_.sessions.record.queues.empty())
    throw mm::error(
        errc::not_found,
        "no recording to replay: record the queues' tickets with sessions.record.queues "
        "(docs/session.md, \"Recording\")");
  std::unique_lock lock(running_, std::try_to_lock);
  if (!lock.owns_lock())
    throw mm::error(errc::limit_reached, "a dry run is running already: one at a time");
  if (flush_) flush_();
  const auto started = std::chrono::steady_clock::now();
  const double budget_s = std::chrono::duration<double>(cpu_budget).count();
  json answer;
  std::exception_ptr failed;
  std::thread worker([&] {
    // The lowest priority: the live queues' workers always come first.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
    const double cpu_at_start = thread_cpu_seconds();
    const auto check_budget = [&] {
      const double cpu = thread_cpu_seconds() - cpu_at_start;
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (cpu > budget_s || wall > 3 * budget_s)
        throw mm::error(errc::limit_reached, "the dry run passed its budget of " +
                                                 std::to_string(budget_s) + " s of CPU (" +
                                                 std::to_string(3 * budget_s) +
                                                 " s of wall time): replay a shorter window");
    };
    try {
      answer = replay(r, check_budget);
      answer["cpu_seconds"] = thread_cpu_seconds() - cpu_at_start;
    } catch (...) {
      failed = std::current_exception();
    }
  });
  worker.join();
  if (failed) std::rethrow_exception(failed);
  answer["wall_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return answer;
}

}  // namespace mm::server
