#include "mmsim_print.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace mm::sim {

namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

void print_session(const session_day_report& r) {
  const auto& t = r.totals;
  const auto share = [&](std::uint64_t n) {
    return fixed(
        100.0 * static_cast<double>(n) / static_cast<double>(std::max<std::uint64_t>(t.ended(), 1)),
        1);
  };
  std::printf(
      "session day: %llu players joined, %llu matches; time to match mean %.1f s, p95 %.1f s; "
      "RTT mean %.1f ms, p95 %.1f ms; ideal %s%%, expand %s%%, warm body %s%%, failed %s%%; "
      "peak %llu online (%.2f s of wall time)\n",
      static_cast<unsigned long long>(r.players), static_cast<unsigned long long>(t.matches),
      t.time_to_match_s.mean, t.time_to_match_s.p95, t.rtt_ms.mean, t.rtt_ms.p95,
      share(t.ideal).c_str(), share(t.expand).c_str(), share(t.warm_body).c_str(),
      share(t.failed + t.bot).c_str(), static_cast<unsigned long long>(t.concurrent_peak),
      r.wall_seconds);
  if (t.seats_opened > 0)
    std::printf(
        "session day: parties left running matches, opening %llu seats: %llu refilled (time to "
        "refill p50 %.1f s, p95 %.1f s); running matches' seats empty %.2f%% of the time; %llu "
        "matches started under-filled\n",
        static_cast<unsigned long long>(t.seats_opened),
        static_cast<unsigned long long>(t.seats_refilled), t.refill_s.p50, t.refill_s.p95,
        100 * t.empty_seat_share, static_cast<unsigned long long>(t.underfilled_matches));
}

void print_async(const async_day_report& r) {
  const auto& t = r.totals;
  const auto pct = [&](std::uint64_t n) {
    return 100.0 * static_cast<double>(n) /
           static_cast<double>(std::max<std::uint64_t>(t.attacks, 1));
  };
  std::printf(
      "async day: %llu attacks: Success %.1f%%, NoneFound %.1f%%, FakeOpponent %.1f%% (with an "
      "eligible opponent in the table: %.2f%%); MMR gap "
      "mean %.1f, p95 %.1f; offers most/mean %.2f (uniform %.2f), Gini %.3f (uniform %.3f), never "
      "offered %.1f%% (uniform %.1f%%); %llu rows scanned (%.2f s of wall time)\n",
      static_cast<unsigned long long>(t.attacks), pct(t.success), pct(t.none_found), pct(t.fake),
      pct(t.missed), t.mmr_gap.mean, t.mmr_gap.p95, r.engine.max_over_mean, r.uniform.max_over_mean,
      r.engine.gini, r.uniform.gini, 100 * r.engine.never_offered, 100 * r.uniform.never_offered,
      static_cast<unsigned long long>(r.rows_scanned), r.wall_seconds);
}

}  // namespace mm::sim
