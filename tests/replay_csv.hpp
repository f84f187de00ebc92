// What the replay tests share: a ranked 1v1 queue whose tight rule leaves
// players far from the others to expire, and the rows of mmsim replay's CSV
// reports.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "session_http.hpp"

namespace mm::test {

// A 1v1 queue with a tight skill rule that never widens: players far from
// the others expire, which a wider rule would match.
inline json ranked_patch(double max_difference) {
  json p = session_patch();
  p["sessions"]["queues"].push_back(
      {{"name", "ranked"},
       {"min_players", 2},
       {"max_players", 2},
       {"tick", "100ms"},
       {"give_up_after", "3s"},
       {"rules", {{{"name", "skill"}, {"max_difference", max_difference}}}}});
  return p;
}

// The rows of one of mmsim replay's CSVs, each by its column names.
inline std::vector<std::map<std::string, std::string>> csv_rows(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream head(line);
  for (std::string c; std::getline(head, c, ',');) names.push_back(c);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::map<std::string, std::string>& cells = rows.emplace_back();
    std::size_t k = 0;
    for (std::string c; std::getline(row, c, ',') && k < names.size(); ++k) cells[names[k]] = c;
  }
  return rows;
}

// A column of replay_queues.csv, for queue `queue`.
inline double csv_value(const std::string& file, const std::string& queue,
                        const std::string& column) {
  for (const auto& row : csv_rows(file))
    if (row.count("queue") && row.at("queue") == queue && row.count(column))
      return std::stod(row.at(column));
  FAIL("no " + column + " for " + queue + " in " + file);
  return 0;
}

}  // namespace mm::test
