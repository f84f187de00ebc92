// A list of names as one text column: comma-separated, for names that have no
// comma (queue names, lease resources). Empty names are dropped on the way back.
#pragma once

#include <string>
#include <vector>

namespace mm {

inline std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

inline std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = text.find(',', from);
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > from) out.push_back(text.substr(from, end - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

}  // namespace mm
