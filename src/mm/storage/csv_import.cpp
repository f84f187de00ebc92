#include "mm/storage/csv_import.hpp"

#include <charconv>
#include <cmath>
#include <string>
#include <vector>

namespace mm {

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    const auto comma = line.find(',');
    fields.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return fields;
    line.remove_prefix(comma + 1);
  }
}

template <class T>
bool parse_number(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

constexpr const char* column_names[] = {"id", "mmr", "attr0", "attr1", "attr2", "attr3", "is_bot"};
}  // namespace

std::optional<player_row> parse_csv_player(std::string_view line, std::string& problem) {
  const auto f = split(line);
  if (f.size() < 2 || f.size() > 7) {
    problem = "expected 2 to 7 comma-separated fields (id, mmr, attr0..attr3, is_bot), got " +
              std::to_string(f.size());
    return std::nullopt;
  }
  player_row r;
  std::uint64_t id = 0;
  if (!parse_number(f[0], id)) {
    problem = "id '" + std::string(f[0]) + "' is not an unsigned integer";
    return std::nullopt;
  }
  r.id = id;
  if (!parse_number(f[1], r.mmr)) {
    // from_chars leaves out_of_range values unparsed: say which it was.
    const bool too_large =
        !f[1].empty() && std::from_chars(f[1].data(), f[1].data() + f[1].size(), r.mmr).ec ==
                             std::errc::result_out_of_range;
    problem = "mmr '" + std::string(f[1]) + "' " +
              (too_large ? std::string("is out of range: it must fit a 32-bit float")
                         : std::string("is not a number"));
    return std::nullopt;
  }
  if (auto why = mmr_problem(r.mmr)) {
    problem = "mmr '" + std::string(f[1]) + "': " + *why;
    return std::nullopt;
  }
  for (std::size_t a = 2; a < f.size() && a < 6; ++a) {
    if (!parse_number(f[a], r.attributes[a - 2])) {
      problem = std::string(column_names[a]) + " '" + std::string(f[a]) + "' is not an integer";
      return std::nullopt;
    }
  }
  if (f.size() == 7) {
    if (f[6] != "0" && f[6] != "1") {
      problem = "is_bot '" + std::string(f[6]) + "' must be 0 or 1";
      return std::nullopt;
    }
    r.is_bot = f[6] == "1";
  }
  if (auto p = row_problem_of(r)) {
    problem = *p;
    return std::nullopt;
  }
  return r;
}

csv_import_report import_players_csv(database& db, std::istream& in, const csv_import_options& o) {
  csv_import_report report;
  std::vector<player_row> batch;
  batch.reserve(o.batch_size);
  auto flush = [&] {
    if (batch.empty()) return;
    report.imported += upsert_players(db, batch).written;
    batch.clear();
    if (o.progress) o.progress(report.lines);
  };
  auto bad = [&](player_id id, std::string reason) {
    ++report.bad_rows;
    if (report.problems.size() < o.max_reported)
      report.problems.push_back({report.lines, id, std::move(reason)});
  };
  std::string line, problem;
  while (std::getline(in, line)) {
    ++report.lines;
    const std::string_view l = trim(line);
    if (l.empty() || l.front() == '#') continue;
    if (report.lines == 1 && l.substr(0, 2) == "id") continue;  // header
    if (auto row = parse_csv_player(l, problem)) {
      batch.push_back(std::move(*row));
      if (batch.size() >= o.batch_size) flush();
    } else {
      bad(invalid_player, problem);
    }
  }
  flush();
  return report;
}

}  // namespace mm
