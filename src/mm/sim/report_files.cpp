#include "mm/sim/report_files.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "mm/engine/error.hpp"
#include "mm/sim/svg_chart.hpp"

namespace mm::sim {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

std::string fixed(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

double share(std::uint64_t part, std::uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

std::string session_row(const session_hour& h, const std::string& hour, const std::string& of_day) {
  const std::uint64_t ended = h.ended();
  return hour + "," + of_day + "," + std::to_string(h.joins) + "," + std::to_string(h.tickets) +
         "," + fixed(h.concurrent_mean, 1) + "," + std::to_string(h.concurrent_peak) + "," +
         std::to_string(h.matches) + "," + std::to_string(h.bot_matches) + "," +
         std::to_string(h.matched_players) + "," + fixed(h.time_to_match_s.mean) + "," +
         fixed(h.time_to_match_s.p50) + "," + fixed(h.time_to_match_s.p95) + "," +
         fixed(h.time_to_match_s.p99) + "," + fixed(h.rtt_ms.mean, 1) + "," +
         fixed(h.rtt_ms.p95, 1) + "," + std::to_string(h.ideal) + "," + std::to_string(h.expand) +
         "," + std::to_string(h.warm_body) + "," + std::to_string(h.failed) + "," +
         std::to_string(h.bot) + "," + fixed(share(h.ideal, ended), 4) + "," +
         fixed(share(h.expand, ended), 4) + "," + fixed(share(h.warm_body, ended), 4) + "," +
         fixed(share(h.failed + h.bot, ended), 4) + "," + std::to_string(h.underfilled_matches) +
         "," + std::to_string(h.seats_opened) + "," + std::to_string(h.seats_refilled) + "," +
         fixed(h.refill_s.p50, 1) + "," + fixed(h.refill_s.p95, 1) + "," +
         fixed(h.empty_seat_share, 4) + "\n";
}

std::string async_row(const async_hour& h, const std::string& hour, const std::string& of_day) {
  return hour + "," + of_day + "," + std::to_string(h.attacks) + "," + std::to_string(h.success) +
         "," + std::to_string(h.none_found) + "," + std::to_string(h.fake) + "," +
         std::to_string(h.missed) + "," + fixed(h.mmr_gap.mean, 2) + "," + fixed(h.mmr_gap.p95, 2) +
         "," + std::to_string(h.cached) + "," + fixed(h.fill, 4) + "," +
         std::to_string(h.shielded) + "," + std::to_string(h.joins) + "," +
         std::to_string(h.churned) + "," + std::to_string(h.table_rows) + "\n";
}

// Each hour's value of one figure, as a chart series.
template <class Hour, class F>
chart_series by_hour(const std::vector<Hour>& hours, std::string name, F&& f, bool dashed = false) {
  chart_series s;
  s.name = std::move(name);
  s.dashed = dashed;
  for (const auto& h : hours) s.y.push_back(f(h));
  return s;
}

template <class Hour>
std::vector<double> hour_axis(const std::vector<Hour>& hours) {
  std::vector<double> x;
  for (const auto& h : hours) x.push_back(h.hour);
  return x;
}

struct figure {
  std::string file, caption;
  std::string svg;
};

std::vector<figure> session_figures(const session_day_report& r) {
  const auto x = hour_axis(r.hours);
  const double step = r.hours.size() > 24 ? 12 : 3;
  std::vector<figure> out;
  chart c;
  c.x = x;
  c.x_label = "hour (UTC) since the start";
  c.x_tick_step = step;

  c.title = "Players online and joining";
  c.y_label = "players";
  c.series = {
      by_hour(r.hours, "online (mean)", [](const session_hour& h) { return h.concurrent_mean; }),
      by_hour(
          r.hours, "online (peak)", [](const session_hour& h) { return double(h.concurrent_peak); },
          true),
      by_hour(r.hours, "joins", [](const session_hour& h) { return double(h.joins); })};
  out.push_back(
      {"session_players.svg",
       "Players online (mean and peak of the minute samples) and new players joining, by hour.",
       render_svg(c)});

  c.title = "Time to match";
  c.y_label = "seconds";
  const auto ttm = [](double (*pick)(const distribution&)) {
    return [pick](const session_hour& h) {
      return h.time_to_match_s.count ? pick(h.time_to_match_s) : nan;
    };
  };
  c.series = {by_hour(r.hours, "mean", ttm([](const distribution& d) { return d.mean; })),
              by_hour(r.hours, "p50", ttm([](const distribution& d) { return d.p50; })),
              by_hour(r.hours, "p95", ttm([](const distribution& d) { return d.p95; }), true),
              by_hour(r.hours, "p99", ttm([](const distribution& d) { return d.p99; }), true)};
  out.push_back(
      {"session_time_to_match.svg",
       "Seconds from a ticket's creation to its match, for the tickets matched in each hour.",
       render_svg(c)});

  c.title = "RTT to the chosen datacenter";
  c.y_label = "ms";
  c.series = {by_hour(r.hours, "mean",
                      [](const session_hour& h) { return h.rtt_ms.count ? h.rtt_ms.mean : nan; }),
              by_hour(
                  r.hours, "p95",
                  [](const session_hour& h) { return h.rtt_ms.count ? h.rtt_ms.p95 : nan; }, true)};
  out.push_back({"session_rtt.svg",
                 "Each matched player's round trip to the datacenter its match was given.",
                 render_svg(c)});

  c.title = "How tickets ended";
  c.y_label = "share of tickets";
  c.stacked_bars = true;
  c.y_max = 1;
  const auto part = [](std::uint64_t session_hour::*m) {
    return [m](const session_hour& h) { return share(h.*m, h.ended()); };
  };
  c.series = {by_hour(r.hours, "ideal", part(&session_hour::ideal)),
              by_hour(r.hours, "expand", part(&session_hour::expand)),
              by_hour(r.hours, "warm body", part(&session_hour::warm_body)),
              by_hour(r.hours, "failed", part(&session_hour::failed)),
              by_hour(r.hours, "bot match", part(&session_hour::bot))};
  c.series[3].color = "#e53e3e";
  c.series[4].color = "#718096";
  c.series[2].color = "#d69e2e";
  out.push_back(
      {"session_stages.svg",
       "The latency stage each ticket had reached when it was matched, or that it failed.",
       render_svg(c)});
  return out;
}

std::vector<figure> async_figures(const async_day_report& r) {
  const auto x = hour_axis(r.hours);
  std::vector<figure> out;
  chart c;
  c.x = x;
  c.x_label = "hour (UTC) since the start";
  c.x_tick_step = r.hours.size() > 24 ? 12 : 3;

  c.title = "Attacks and their answers";
  c.y_label = "attacks";
  c.stacked_bars = true;
  c.series = {
      by_hour(r.hours, "Success", [](const async_hour& h) { return double(h.success); }),
      by_hour(r.hours, "NoneFound", [](const async_hour& h) { return double(h.none_found); }),
      by_hour(r.hours, "FakeOpponent", [](const async_hour& h) { return double(h.fake); })};
  c.series[0].color = "#38a169";
  c.series[1].color = "#e53e3e";
  c.series[2].color = "#718096";
  out.push_back(
      {"async_results.svg", "Attacks by hour and what the matchmaker answered.", render_svg(c)});

  c.stacked_bars = false;
  c.title = "MMR gap between attacker and defender";
  c.y_label = "MMR";
  c.series = {by_hour(r.hours, "mean",
                      [](const async_hour& h) { return h.mmr_gap.count ? h.mmr_gap.mean : nan; }),
              by_hour(
                  r.hours, "p95",
                  [](const async_hour& h) { return h.mmr_gap.count ? h.mmr_gap.p95 : nan; }, true)};
  out.push_back({"async_mmr_gap.svg", "On Success: how far apart the two players' MMRs were.",
                 render_svg(c)});

  c.title = "Players cached and shielded";
  c.y_label = "players";
  c.series = {
      by_hour(r.hours, "cached", [](const async_hour& h) { return double(h.cached); }),
      by_hour(
          r.hours, "shielded", [](const async_hour& h) { return double(h.shielded); }, true),
      by_hour(r.hours, "in the table", [](const async_hour& h) { return double(h.table_rows); })};
  out.push_back(
      {"async_cached.svg",
       "At each hour's end: players in the engine's cache, under a shield, and in the table.",
       render_svg(c)});

  chart f;
  f.title = "Bucket fill over time";
  f.x_label = "hour (UTC) since the start";
  f.y_label = "fill (players / capacity)";
  f.x_tick_step = c.x_tick_step;
  f.y_max = 1;
  chart_series overall{"overall", {}, "", false}, lowest{"lowest bucket", {}, "", true},
      median{"median bucket", {}, "", false}, highest{"highest bucket", {}, "", true};
  for (const fill_sample& s : r.fill) {
    f.x.push_back(s.at_s / 3600);
    overall.y.push_back(s.overall);
    lowest.y.push_back(s.lowest);
    median.y.push_back(s.median);
    highest.y.push_back(s.highest);
  }
  f.series = {overall, lowest, median, highest};
  out.push_back({"async_fill.svg",
                 "The cache's buckets, sampled every 10 minutes: overall fill and the lowest, "
                 "median and highest bucket.",
                 render_svg(f)});

  chart l;
  l.title = "Who gets offered: Lorenz curves";
  l.x_label = "share of players, least offered first (%)";
  l.y_label = "share of all offers";
  l.y_max = 1;
  l.x_tick_step = 10;
  for (int k = 0; k <= 20; ++k) l.x.push_back(k * 5);
  chart_series eq{"equal", {}, "#a0aec0", true};
  for (int k = 0; k <= 20; ++k) eq.y.push_back(k / 20.0);
  l.series = {{"matchmaker", r.engine.lorenz, "#2b6cb0", false},
              {"uniform among eligible", r.uniform.lorenz, "#dd6b20", false},
              eq};
  out.push_back({"async_offers.svg",
                 "The nearer a curve is to the diagonal, the more evenly defenders were offered.",
                 render_svg(l)});
  return out;
}

// Rows of (name, value); values are HTML already (figures and links).
std::string table_html(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "<table>\n";
  for (const auto& [k, v] : rows)
    out += "<tr><th>" + xml_escape(k) + "</th><td>" + v + "</td></tr>\n";
  return out + "</table>\n";
}

// Rows of (name, text): the settings, escaped.
std::string table(std::vector<std::pair<std::string, std::string>> rows) {
  for (auto& row : rows) row.second = xml_escape(row.second);
  return table_html(rows);
}

std::string distribution_text(const distribution& d, const char* unit, int decimals) {
  return "mean " + fixed(d.mean, decimals) + unit + ", p50 " + fixed(d.p50, decimals) + unit +
         ", p95 " + fixed(d.p95, decimals) + unit + ", p99 " + fixed(d.p99, decimals) + unit;
}

std::string percent(double v) {
  return fixed(100 * v, 1) + "%";
}

std::string figures_html(const std::vector<figure>& figs, const std::filesystem::path& dir) {
  std::string out;
  for (const figure& f : figs) {
    write_report_file(dir / f.file, f.svg);
    out += "<figure>" + f.svg + "<figcaption>" + xml_escape(f.caption) + " (<a href=\"" + f.file +
           "\">" + f.file + "</a>)</figcaption></figure>\n";
  }
  return out;
}

std::string csv_link(const std::string& file) {
  return "<a href=\"" + file + "\">" + file + "</a>";
}

// Parties that left running matches, and their seats filled again: the day,
// and the same day without backfill beside it.
std::string backfill_html(const session_day_report& r,
                          const std::optional<session_day_report>& without,
                          const std::filesystem::path& dir) {
  write_report_file(dir / "session_backfill.csv", backfill_csv(r, without ? &*without : nullptr));
  std::string out =
      "<h3>Parties leaving, and backfill</h3>\n<p>Seats opened by parties that left a running "
      "match before its end, and filled again by the queue's backfill (" +
      csv_link("session_backfill.csv") +
      ").</p>\n<table><tr><th></th><th>matches started under-filled</th><th>seats opened</th>"
      "<th>seats refilled</th><th>time to refill</th><th>empty seats of running matches</th>"
      "<th>time to match mean / p95 (s)</th></tr>\n";
  const auto row = [&](const char* name, const session_hour& t) {
    out += std::string("<tr><td>") + name + "</td><td>" + std::to_string(t.underfilled_matches) +
           "</td><td>" + std::to_string(t.seats_opened) + "</td><td>" +
           std::to_string(t.seats_refilled) + " (" +
           percent(share(t.seats_refilled, t.seats_opened)) + ")</td><td>" +
           (t.refill_s.count ? distribution_text(t.refill_s, " s", 1) : "-") + "</td><td>" +
           percent(t.empty_seat_share) + "</td><td>" + fixed(t.time_to_match_s.mean, 1) + " / " +
           fixed(t.time_to_match_s.p95, 1) + "</td></tr>\n";
  };
  row(r.totals.seats_refilled > 0 || !without ? "this day" : "this day (no backfill)", r.totals);
  if (without) row("the same day without backfill", without->totals);
  out += "</table>\n";
  chart c;
  c.title = "Empty seats of running matches (share, by hour)";
  c.x_label = "hour (UTC since the start)";
  c.x = hour_axis(r.hours);
  c.x_tick_step = r.hours.size() > 24 ? 12 : 3;
  c.y_label = "share of seats";
  c.series = {
      by_hour(r.hours, "this day", [](const session_hour& h) { return h.empty_seat_share; })};
  if (without)
    c.series.push_back(by_hour(
        without->hours, "without backfill",
        [](const session_hour& h) { return h.empty_seat_share; }, true));
  return out + figures_html({{"session_empty_seats.svg",
                              "Of the seats of the matches being played, the share empty: a party "
                              "left and no one took its seats yet.",
                              render_svg(c)}},
                            dir);
}

}  // namespace

std::string session_hours_csv(const session_day_report& r) {
  std::string out =
      "hour,hour_of_day,joins,tickets,concurrent_mean,concurrent_peak,matches,bot_matches,"
      "matched_players,ttm_mean_s,ttm_p50_s,ttm_p95_s,ttm_p99_s,rtt_mean_ms,rtt_p95_ms,ideal,"
      "expand,warm_body,failed,bot,ideal_share,expand_share,warm_body_share,failed_share,"
      "underfilled_matches,seats_opened,seats_refilled,refill_p50_s,refill_p95_s,"
      "empty_seat_share\n";
  for (const auto& h : r.hours)
    out += session_row(h, std::to_string(h.hour), std::to_string(h.hour % 24));
  out += session_row(r.totals, "total", "");
  return out;
}

std::string sensitivity_csv(const std::vector<sensitivity_run>& runs) {
  std::string out =
      "changed,play_again,ideal_ms,joins,matches,ttm_mean_s,ttm_p95_s,rtt_mean_ms,rtt_p95_ms,"
      "warm_body_share,failed_share,concurrent_peak\n";
  for (const auto& s : runs) {
    const session_hour& t = s.report.totals;
    out += s.changed + "," + fixed(s.play_again, 2) + "," + fixed(s.ideal_ms, 0) + "," +
           std::to_string(t.joins) + "," + std::to_string(t.matches) + "," +
           fixed(t.time_to_match_s.mean) + "," + fixed(t.time_to_match_s.p95) + "," +
           fixed(t.rtt_ms.mean, 1) + "," + fixed(t.rtt_ms.p95, 1) + "," +
           fixed(share(t.warm_body, t.ended()), 4) + "," +
           fixed(share(t.failed + t.bot, t.ended()), 4) + "," + std::to_string(t.concurrent_peak) +
           "\n";
  }
  return out;
}

std::string backfill_csv(const session_day_report& with, const session_day_report* without) {
  std::string out =
      "backfill,matches,underfilled_matches,seats_opened,seats_refilled,refilled_share,"
      "refill_mean_s,refill_p50_s,refill_p95_s,empty_seat_share,ttm_mean_s,ttm_p95_s\n";
  const auto row = [&](const char* name, const session_hour& t) {
    out += std::string(name) + "," + std::to_string(t.matches) + "," +
           std::to_string(t.underfilled_matches) + "," + std::to_string(t.seats_opened) + "," +
           std::to_string(t.seats_refilled) + "," +
           fixed(share(t.seats_refilled, t.seats_opened), 4) + "," + fixed(t.refill_s.mean, 1) +
           "," + fixed(t.refill_s.p50, 1) + "," + fixed(t.refill_s.p95, 1) + "," +
           fixed(t.empty_seat_share, 4) + "," + fixed(t.time_to_match_s.mean) + "," +
           fixed(t.time_to_match_s.p95) + "\n";
  };
  row("on", with.totals);
  if (without) row("off", without->totals);
  return out;
}

std::string async_hours_csv(const async_day_report& r) {
  std::string out =
      "hour,hour_of_day,attacks,success,none_found,fake_opponent,missed,mmr_gap_mean,mmr_gap_p95,"
      "cached,fill,shielded,joins,churned,table_rows\n";
  for (const auto& h : r.hours)
    out += async_row(h, std::to_string(h.hour), std::to_string(h.hour % 24));
  out += async_row(r.totals, "total", "");
  return out;
}

std::string async_fill_csv(const async_day_report& r) {
  std::string out = "at_s,buckets,players,overall,lowest,median,highest\n";
  for (const auto& s : r.fill)
    out += fixed(s.at_s, 0) + "," + std::to_string(s.buckets) + "," + std::to_string(s.players) +
           "," + fixed(s.overall, 4) + "," + fixed(s.lowest, 4) + "," + fixed(s.median, 4) + "," +
           fixed(s.highest, 4) + "\n";
  return out;
}

std::string async_fairness_csv(const async_day_report& r) {
  std::string out = "chooser,offers,max_over_mean,gini,never_offered";
  for (int k = 0; k <= 20; ++k) out += ",lorenz_" + std::to_string(k * 5);
  out += "\n";
  for (const auto& [name, f] :
       {std::pair{"matchmaker", &r.engine}, std::pair{"uniform", &r.uniform}}) {
    out += std::string(name) + "," + std::to_string(f->offers) + "," + fixed(f->max_over_mean) +
           "," + fixed(f->gini, 4) + "," + fixed(f->never_offered, 4);
    for (double v : f->lorenz) out += "," + fixed(v, 4);
    out += "\n";
  }
  return out;
}

void write_report_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw error(errc::invalid_argument, "cannot write " + p.string());
}

std::string report_page(const std::string& title, const std::string& intro,
                        const std::string& body) {
  return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
         xml_escape(title) +
         "</title>\n"
         "<style>body{font-family:sans-serif;max-width:1400px;margin:1em auto;padding:0 "
         "1em;color:#1a202c}"
         "table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #cbd5e0;padding:3px "
         "8px;text-align:left}th{background:#f7fafc}figure{display:inline-block;margin:.5em}"
         "figcaption{max-width:640px;font-size:90%;color:#4a5568}</style></head><body>\n<h1>" +
         xml_escape(title) + "</h1>\n<p>" + xml_escape(intro) + "</p>\n" + body +
         "</body></html>\n";
}

std::filesystem::path write_report(const sim_outputs& o, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw error(errc::invalid_argument, "cannot create " + dir.string() + ": " + ec.message());
  std::string body;
  if (o.session) {
    const session_day_report& r = *o.session;
    const session_hour& t = r.totals;
    write_report_file(dir / "session_hours.csv", session_hours_csv(r));
    body += "<h2>Session day</h2>\n" + table(o.session_settings);
    body +=
        "<h3>Over the run</h3>\n" +
        table_html(
            {{"players who joined", std::to_string(r.players)},
             {"tickets", std::to_string(t.tickets)},
             {"matches",
              std::to_string(t.matches) + " (" + std::to_string(t.bot_matches) + " with bots)"},
             {"matched players", std::to_string(t.matched_players)},
             {"time to match", distribution_text(t.time_to_match_s, " s", 1)},
             {"RTT to the chosen datacenter",
              "mean " + fixed(t.rtt_ms.mean, 1) + " ms, p95 " + fixed(t.rtt_ms.p95, 1) + " ms"},
             {"tickets ended ideal / expand / warm body / failed / bot",
              percent(share(t.ideal, t.ended())) + " / " + percent(share(t.expand, t.ended())) +
                  " / " + percent(share(t.warm_body, t.ended())) + " / " +
                  percent(share(t.failed, t.ended())) + " / " + percent(share(t.bot, t.ended()))},
             {"players online: mean / peak", fixed(t.concurrent_mean, 1) + " / " +
                                                 std::to_string(t.concurrent_peak) + " (at hour " +
                                                 fixed(r.peak_at_s / 3600, 2) + ")"},
             {"still waiting at the end", std::to_string(r.still_waiting)},
             {"simulated in", fixed(r.wall_seconds, 2) + " s of wall time, " +
                                  fixed(r.engine_seconds, 2) + " s of it in the session queue"},
             {"by hour", csv_link("session_hours.csv")}});
    body += figures_html(session_figures(r), dir);
    if (t.seats_opened > 0) body += backfill_html(r, o.without_backfill, dir);
    if (!o.sensitivity.empty()) {
      write_report_file(dir / "session_sensitivity.csv", sensitivity_csv(o.sensitivity));
      body +=
          "<h3>Sensitivity</h3>\n<p>The same joins, one setting changed at a time (" +
          csv_link("session_sensitivity.csv") +
          ").</p>\n<table><tr><th>changed</th><th>matches</th><th>time to match mean / p95 (s)</th>"
          "<th>RTT mean / p95 (ms)</th><th>warm body</th><th>failed</th><th>peak "
          "online</th></tr>\n";
      for (const auto& s : o.sensitivity) {
        const session_hour& st = s.report.totals;
        body += "<tr><td>" + xml_escape(s.changed) + "</td><td>" + std::to_string(st.matches) +
                "</td><td>" + fixed(st.time_to_match_s.mean, 1) + " / " +
                fixed(st.time_to_match_s.p95, 1) + "</td><td>" + fixed(st.rtt_ms.mean, 1) + " / " +
                fixed(st.rtt_ms.p95, 1) + "</td><td>" + percent(share(st.warm_body, st.ended())) +
                "</td><td>" + percent(share(st.failed + st.bot, st.ended())) + "</td><td>" +
                std::to_string(st.concurrent_peak) + "</td></tr>\n";
      }
      body += "</table>\n";
    }
  }
  if (o.async) {
    const async_day_report& r = *o.async;
    const async_hour& t = r.totals;
    write_report_file(dir / "async_hours.csv", async_hours_csv(r));
    write_report_file(dir / "async_fill.csv", async_fill_csv(r));
    write_report_file(dir / "async_fairness.csv", async_fairness_csv(r));
    body += "<h2>Async day</h2>\n" + table(o.async_settings);
    body +=
        "<h3>Over the run</h3>\n" +
        table_html(
            {{"attacks", std::to_string(t.attacks)},
             {"Success / NoneFound / FakeOpponent", percent(share(t.success, t.attacks)) + " / " +
                                                        percent(share(t.none_found, t.attacks)) +
                                                        " / " + percent(share(t.fake, t.attacks))},
             {"FakeOpponent or NoneFound while the table held an eligible opponent",
              percent(share(t.missed, t.attacks)) + " (" + std::to_string(t.missed) + ")"},
             {"MMR gap on Success",
              "mean " + fixed(t.mmr_gap.mean, 1) + ", p95 " + fixed(t.mmr_gap.p95, 1)},
             {"players in the table at the end", std::to_string(r.players)},
             {"joined / stopped playing",
              std::to_string(t.joins) + " / " + std::to_string(t.churned)},
             {"scans / rows read / rebalances", std::to_string(r.scans) + " / " +
                                                    std::to_string(r.rows_scanned) + " / " +
                                                    std::to_string(r.rebalances)},
             {"simulated in",
              fixed(r.wall_seconds, 2) + " s of wall time, " + fixed(r.engine_seconds, 2) +
                  " s of it in the engine, " + fixed(r.database_seconds, 2) +
                  " s in SQLite; the reference day " + fixed(r.reference_seconds, 2) + " s"},
             {"by hour", csv_link("async_hours.csv") + ", fill: " + csv_link("async_fill.csv")}});
    body +=
        "<h3>Offer fairness</h3>\n<p>How often each player in the table was offered as a defender, "
        "against the same day run again with every opponent chosen uniformly among the eligible "
        "players "
        "(no shield, a possible match under the game's rule at the request's widest window), "
        "fights "
        "and shields included (" +
        csv_link("async_fairness.csv") +
        ").</p>\n"
        "<table><tr><th>chooser</th><th>offers</th><th>most offered ÷ mean</th><th>Gini</th>"
        "<th>never offered</th></tr>\n";
    for (const auto& [name, f] :
         {std::pair{"matchmaker", &r.engine}, std::pair{"uniform among eligible", &r.uniform}})
      body += std::string("<tr><td>") + name + "</td><td>" + std::to_string(f->offers) +
              "</td><td>" + fixed(f->max_over_mean, 2) + "</td><td>" + fixed(f->gini, 3) +
              "</td><td>" + percent(f->never_offered) + "</td></tr>\n";
    body += "</table>\n" + figures_html(async_figures(r), dir);
  }
  const std::string page = report_page(
      "mmsim report",
      "What players would live through on a simulated day, run through the matchmaker's own "
      "engines on a virtual clock. Hours are UTC since the start of the run.",
      body);
  const auto index = dir / "index.html";
  write_report_file(index, page);
  return index;
}

}  // namespace mm::sim
