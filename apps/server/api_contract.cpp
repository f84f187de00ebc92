#include "api_contract.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "openapi_files.hpp"

namespace mm::server {

namespace {

using json = nlohmann::json;

// A route's pattern as its concrete paths: "a|b" segments expanded, "*"
// kept (it stands for an OpenAPI "{name}" segment).
std::vector<std::string> expanded(const std::string& pattern) {
  std::vector<std::string> out{""};
  std::size_t from = 1;  // after the leading '/'
  for (;;) {
    const auto slash = pattern.find('/', from);
    const std::string segment = pattern.substr(from, slash - from);
    std::vector<std::string> words;
    for (std::size_t w = 0;;) {
      const auto bar = segment.find('|', w);
      words.push_back(segment.substr(w, bar - w));
      if (bar == std::string::npos) break;
      w = bar + 1;
    }
    std::vector<std::string> next;
    for (const auto& prefix : out)
      for (const auto& w : words) next.push_back(prefix + "/" + w);
    out = std::move(next);
    if (slash == std::string::npos) break;
    from = slash + 1;
  }
  return out;
}

// An OpenAPI path with each "{name}" segment as "*".
std::string pattern_of(const std::string& path) {
  std::string out;
  std::size_t from = 0;
  while (from < path.size()) {
    const auto slash = path.find('/', from + 1);
    const std::string segment = path.substr(from, slash - from);  // with its '/'
    out += segment.size() > 2 && segment[1] == '{' && segment.back() == '}' ? "/*" : segment;
    if (slash == std::string::npos) break;
    from = slash;
  }
  return out;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

bool needs_operation(const served_route& r) {
  return r.needed || r.probe || r.pattern == "/metrics" || r.pattern.rfind("/api/", 0) == 0;
}

}  // namespace

std::string_view openapi_document() {
  for (const auto& [name, text] : openapi_files())
    if (name == "openapi.json") return text;
  return {};
}

std::vector<std::string> contract_gaps(const std::vector<served_route>& routes,
                                       std::string_view document) {
  std::vector<std::string> gaps;
  const json doc = json::parse(document, nullptr, false);
  if (doc.is_discarded() || !doc.contains("paths") || !doc["paths"].is_object())
    return {"the API document is not an OpenAPI document with paths"};
  // (METHOD, pattern) -> x-role, per operation of the document.
  std::map<std::pair<std::string, std::string>, std::string> operations;
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, op] : item.items())
      if (op.is_object() && op.contains("responses"))
        operations[{upper(method), pattern_of(path)}] = op.value("x-role", "");

  std::map<std::pair<std::string, std::string>, bool> served;
  for (const auto& r : routes)
    for (const auto& path : expanded(r.pattern)) {
      served[{r.method, path}] = true;
      if (!needs_operation(r)) continue;
      const std::string want(r.needed ? to_string(*r.needed) : "none");
      const auto op = operations.find({r.method, path});
      if (op == operations.end())
        gaps.push_back(r.method + " " + path + " is served but docs/openapi.json has no operation");
      else if (op->second != want)
        gaps.push_back(r.method + " " + path + " needs the role '" + want +
                       "' but its operation says x-role '" + op->second + "'");
    }
  for (const auto& [key, role_text] : operations)
    if (!served.count(key))
      gaps.push_back(key.first + " " + key.second +
                     " is an operation of docs/openapi.json that no route serves");
  return gaps;
}

}  // namespace mm::server
