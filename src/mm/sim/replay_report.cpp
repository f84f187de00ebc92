#include "mm/sim/replay_report.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include "mm/engine/error.hpp"
#include "mm/sim/report_files.hpp"
#include "mm/sim/svg_chart.hpp"

namespace mm::sim {

namespace {

std::string num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

double share(std::uint64_t part, std::uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

std::string utc(std::int64_t unix_ms) {
  const std::time_t s = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

// The columns of one side, in the order of side_values.
const char* const side_columns[] = {"tickets",
                                    "matched",
                                    "cancelled",
                                    "expired",
                                    "failed",
                                    "waiting",
                                    "refused",
                                    "matched_share",
                                    "time_to_match_mean_s",
                                    "time_to_match_p50_s",
                                    "time_to_match_p95_s",
                                    "mmr_spread_mean",
                                    "mmr_spread_p95",
                                    "worst_rtt_mean_ms",
                                    "worst_rtt_p95_ms",
                                    "ideal",
                                    "expand",
                                    "warm_body",
                                    "bot",
                                    "placed"};

std::vector<std::string> side_values(const replay_figures& f) {
  return {std::to_string(f.tickets),      std::to_string(f.matched),
          std::to_string(f.cancelled),    std::to_string(f.expired),
          std::to_string(f.failed),       std::to_string(f.waiting),
          std::to_string(f.refused),      num(share(f.matched, f.tickets), 4),
          num(f.time_to_match_s.mean, 3), num(f.time_to_match_s.p50, 3),
          num(f.time_to_match_s.p95, 3),  num(f.mmr_spread.mean, 1),
          num(f.mmr_spread.p95, 1),       num(f.worst_rtt_ms.mean, 1),
          num(f.worst_rtt_ms.p95, 1),     std::to_string(f.ideal),
          std::to_string(f.expand),       std::to_string(f.warm_body),
          std::to_string(f.bot),          std::to_string(f.placed)};
}

// One figure of both sides, for the page's tables.
struct compared {
  const char* name;
  std::string recorded, replayed;
};

std::vector<compared> comparison(const replay_row& r) {
  const auto& a = r.recorded;
  const auto& b = r.replayed;
  const auto dist = [](const distribution& d, const char* unit, int decimals) {
    return num(d.mean, decimals) + " / " + num(d.p50, decimals) + " / " + num(d.p95, decimals) +
           unit;
  };
  const auto ends = [](const replay_figures& f) {
    return std::to_string(f.cancelled) + " / " + std::to_string(f.expired) + " / " +
           std::to_string(f.failed) + " / " + std::to_string(f.waiting) + " / " +
           std::to_string(f.refused);
  };
  const auto stages = [](const replay_figures& f) {
    return num(100 * share(f.ideal, f.matched), 1) + "% / " +
           num(100 * share(f.expand, f.matched), 1) + "% / " +
           num(100 * share(f.warm_body, f.matched), 1) + "% / " +
           num(100 * share(f.bot, f.matched), 1) + "%";
  };
  return {
      {"tickets", std::to_string(a.tickets), std::to_string(b.tickets)},
      {"matched",
       std::to_string(a.matched) + " (" + num(100 * share(a.matched, a.tickets), 1) + "%)",
       std::to_string(b.matched) + " (" + num(100 * share(b.matched, b.tickets), 1) + "%)"},
      {"cancelled / expired / failed / still waiting / refused", ends(a), ends(b)},
      {"time to match, mean / p50 / p95", dist(a.time_to_match_s, " s", 1),
       dist(b.time_to_match_s, " s", 1)},
      {"MMR spread of the match, mean / p50 / p95", dist(a.mmr_spread, "", 0),
       dist(b.mmr_spread, "", 0)},
      {"worst RTT of the match, mean / p50 / p95", dist(a.worst_rtt_ms, " ms", 1),
       dist(b.worst_rtt_ms, " ms", 1)},
      {"matched ideal / expand / warm body / bot", stages(a), stages(b)},
      {"placed into running matches", std::to_string(a.placed), std::to_string(b.placed)},
  };
}

std::string side_by_side_html(const replay_row& r) {
  std::string out = "<table><tr><th></th><th>recorded</th><th>replayed</th></tr>\n";
  for (const auto& c : comparison(r))
    out += "<tr><th>" + xml_escape(c.name) + "</th><td>" + xml_escape(c.recorded) + "</td><td>" +
           xml_escape(c.replayed) + "</td></tr>\n";
  return out + "</table>\n";
}

// A compact row per queue or hour: the figures a designer compares first.
std::string rows_html(const std::vector<replay_row>& rows, std::int64_t epoch, bool by_hour) {
  std::string out = std::string("<table><tr><th>") + (by_hour ? "hour (UTC)" : "queue") +
                    "</th><th>tickets</th><th>matched rec / rep</th><th>time to match p50 rec / "
                    "rep (s)</th><th>p95 rec / rep (s)</th><th>MMR spread mean rec / rep</th>"
                    "<th>worst RTT mean rec / rep (ms)</th></tr>\n";
  for (const auto& r : rows) {
    const auto& a = r.recorded;
    const auto& b = r.replayed;
    out += "<tr><td>" + xml_escape(by_hour ? utc(epoch + r.hour * 3'600'000) : r.queue) +
           "</td><td>" + std::to_string(a.tickets) + "</td><td>" +
           num(100 * share(a.matched, a.tickets), 1) + "% / " +
           num(100 * share(b.matched, b.tickets), 1) + "%</td><td>" +
           num(a.time_to_match_s.p50, 1) + " / " + num(b.time_to_match_s.p50, 1) + "</td><td>" +
           num(a.time_to_match_s.p95, 1) + " / " + num(b.time_to_match_s.p95, 1) + "</td><td>" +
           num(a.mmr_spread.mean, 0) + " / " + num(b.mmr_spread.mean, 0) + "</td><td>" +
           num(a.worst_rtt_ms.mean, 1) + " / " + num(b.worst_rtt_ms.mean, 1) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

template <class F>
chart hourly(const session_replay_report& r, std::string title, std::string y_label, F&& value) {
  chart c;
  c.title = std::move(title);
  c.x_label = "hour since the start of the recording (UTC)";
  c.y_label = std::move(y_label);
  chart_series rec{"recorded", {}, "#2b6cb0", false}, rep{"replayed", {}, "#c05621", true};
  for (const auto& h : r.hours) {
    c.x.push_back(static_cast<double>(h.hour));
    rec.y.push_back(value(h.recorded));
    rep.y.push_back(value(h.replayed));
  }
  c.series = {rec, rep};
  return c;
}

}  // namespace

std::string replay_rows_csv(const std::vector<replay_row>& rows, std::int64_t epoch_unix_ms) {
  std::string out = "queue,hour,utc";
  for (const char* side : {"recorded_", "replayed_"})
    for (const char* c : side_columns) out += std::string(",") + side + c;
  out += "\n";
  for (const auto& r : rows) {
    out += r.queue + "," + (r.hour < 0 ? "" : std::to_string(r.hour)) + "," +
           (r.hour < 0 ? "" : utc(epoch_unix_ms + r.hour * 3'600'000));
    for (const auto* f : {&r.recorded, &r.replayed})
      for (const auto& v : side_values(*f)) out += "," + v;
    out += "\n";
  }
  return out;
}

std::string async_replay_csv(const std::vector<async_replay_row>& rows,
                             std::int64_t epoch_unix_ms) {
  std::string out = "hour,utc";
  for (const char* side : {"recorded_", "replayed_"})
    for (const char* c : {"queries", "success", "none_found", "fake_opponent", "invalid",
                          "success_share", "mmr_gap_mean", "mmr_gap_p95"})
      out += std::string(",") + side + c;
  out += "\n";
  for (const auto& r : rows) {
    out += (r.hour < 0 ? "" : std::to_string(r.hour)) + "," +
           (r.hour < 0 ? "" : utc(epoch_unix_ms + r.hour * 3'600'000));
    for (const auto* f : {&r.recorded, &r.replayed})
      out += "," + std::to_string(f->queries) + "," + std::to_string(f->success) + "," +
             std::to_string(f->none_found) + "," + std::to_string(f->fake) + "," +
             std::to_string(f->invalid) + "," + num(share(f->success, f->queries), 4) + "," +
             num(f->mmr_gap.mean, 1) + "," + num(f->mmr_gap.p95, 1);
    out += "\n";
  }
  return out;
}

namespace {

std::string settings_html(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out;
  for (const auto& [k, v] : rows)
    out += "<tr><th>" + xml_escape(k) + "</th><td>" + xml_escape(v) + "</td></tr>\n";
  return out;
}

std::string figure_html(const chart& c, const std::string& file, const std::filesystem::path& dir) {
  const std::string svg = render_svg(c);
  write_report_file(dir / file, svg);
  return "<figure>" + svg + "<figcaption>" + xml_escape(c.title) + " (<a href=\"" + file + "\">" +
         file + "</a>)</figcaption></figure>\n";
}

std::string sessions_html(const replay_part<session_replay_report>& part,
                          const std::filesystem::path& dir) {
  const session_replay_report& r = *part.report;
  const std::int64_t epoch = part.epoch_unix_ms;
  write_report_file(dir / "replay_hours.csv", replay_rows_csv(r.hours, epoch));
  write_report_file(dir / "replay_queues.csv", replay_rows_csv(r.queues, epoch));
  std::string body = "<h2>Sessions replayed</h2>\n<table>\n" + settings_html(part.settings);
  body += "<tr><th>same matches</th><td>" + std::to_string(r.same_match) + " of the " +
          std::to_string(r.recorded_matched) +
          " tickets the recording matched into new matches were matched with the same tickets "
          "again (" +
          num(100 * share(r.same_match, r.recorded_matched), 1) + "%)</td></tr>\n";
  body += "<tr><th>replaced in the replay</th><td>" + std::to_string(r.replaced) +
          " tickets still waiting when a newer ticket of one of their players came</td></tr>\n";
  body += "<tr><th>replayed in</th><td>" + num(r.wall_seconds, 2) +
          " s of wall time</td></tr>\n</table>\n";
  body += "<h3>Over the run</h3>\n" + side_by_side_html(r.totals);
  body +=
      "<h3>Per queue</h3>\n<p>By the queue a ticket was created for (<a "
      "href=\"replay_queues.csv\">replay_queues.csv</a>).</p>\n" +
      rows_html(r.queues, epoch, false);
  body +=
      "<h3>Hour by hour</h3>\n<p>Tickets counted in the hour they were created (<a "
      "href=\"replay_hours.csv\">replay_hours.csv</a>).</p>\n";
  if (r.hours.size() < 2) {
    body += "<p>One hour recorded: the charts need two.</p>\n";
  } else {
    body += figure_html(hourly(r, "Time to match, p50 (s)", "seconds",
                               [](const replay_figures& f) { return f.time_to_match_s.p50; }),
                        "replay_wait_p50.svg", dir);
    body += figure_html(hourly(r, "Time to match, p95 (s)", "seconds",
                               [](const replay_figures& f) { return f.time_to_match_s.p95; }),
                        "replay_wait_p95.svg", dir);
    body += figure_html(hourly(r, "Tickets matched (share)", "share of the hour's tickets",
                               [](const replay_figures& f) { return share(f.matched, f.tickets); }),
                        "replay_matched.svg", dir);
    body += figure_html(hourly(r, "MMR spread of the match, mean", "MMR",
                               [](const replay_figures& f) { return f.mmr_spread.mean; }),
                        "replay_spread.svg", dir);
  }
  return body + rows_html(r.hours, epoch, true);
}

std::string async_html(const replay_part<async_replay_report>& part,
                       const std::filesystem::path& dir) {
  const async_replay_report& r = *part.report;
  write_report_file(dir / "replay_async_hours.csv", async_replay_csv(r.hours, part.epoch_unix_ms));
  std::string body = "<h2>Async queries replayed</h2>\n<table>\n" + settings_html(part.settings);
  body += "<tr><th>same opponent</th><td>" + std::to_string(r.same_opponent) +
          " queries answered Success with the same opponent as recorded</td></tr>\n";
  body += "<tr><th>cache updates replayed</th><td>" + std::to_string(r.updates) +
          "</td></tr>\n<tr><th>scans</th><td>" + std::to_string(r.scans) + " (" +
          std::to_string(r.rows_scanned) + " rows read)</td></tr>\n<tr><th>replayed in</th><td>" +
          num(r.wall_seconds, 2) + " s of wall time</td></tr>\n</table>\n";
  const auto line = [](const async_replay_figures& f) {
    return std::to_string(f.queries) + " queries: Success " +
           num(100 * share(f.success, f.queries), 1) + "%, NoneFound " +
           num(100 * share(f.none_found, f.queries), 1) + "%, FakeOpponent " +
           num(100 * share(f.fake, f.queries), 1) + "%; MMR gap on Success mean " +
           num(f.mmr_gap.mean, 1) + ", p95 " + num(f.mmr_gap.p95, 1);
  };
  body += "<h3>Over the run</h3>\n<table><tr><th>recorded</th><td>" +
          xml_escape(line(r.totals.recorded)) + "</td></tr>\n<tr><th>replayed</th><td>" +
          xml_escape(line(r.totals.replayed)) +
          "</td></tr>\n</table>\n<p>Hour by hour: <a "
          "href=\"replay_async_hours.csv\">replay_async_hours.csv</a>.</p>\n";
  chart c;
  c.title = "Async queries answered Success (share)";
  c.x_label = "hour since the start of the recording (UTC)";
  c.y_label = "share of the hour's queries";
  chart_series rec{"recorded", {}, "#2b6cb0", false}, rep{"replayed", {}, "#c05621", true};
  for (const auto& h : r.hours) {
    c.x.push_back(static_cast<double>(h.hour));
    rec.y.push_back(share(h.recorded.success, h.recorded.queries));
    rep.y.push_back(share(h.replayed.success, h.replayed.queries));
  }
  c.series = {rec, rep};
  if (r.hours.size() < 2) return body + "<p>One hour recorded: the chart needs two.</p>\n";
  return body + figure_html(c, "replay_async_success.svg", dir);
}

}  // namespace

std::filesystem::path write_replay_report(const replay_part<session_replay_report>& sessions,
                                          const replay_part<async_replay_report>& async,
                                          const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw error(errc::invalid_argument, "cannot create " + dir.string() + ": " + ec.message());
  std::string body;
  if (sessions.report) body += sessions_html(sessions, dir);
  if (async.report) body += async_html(async, dir);
  const auto index = dir / "index.html";
  write_report_file(index,
                    report_page("mmsim replay",
                                "A recording of matchmakerd's traffic run again through the "
                                "engines on a virtual clock: what was recorded, and what the "
                                "replayed configuration did with the same traffic.",
                                body));
  return index;
}

}  // namespace mm::sim
