#include "dashboard_files.hpp"

namespace mm::server {

namespace {
std::string content_type_of(std::string_view name) {
  const auto ends_with = [&](std::string_view ext) { return name.ends_with(ext); };
  if (ends_with(".html")) return "text/html; charset=utf-8";
  if (ends_with(".js")) return "text/javascript; charset=utf-8";
  if (ends_with(".css")) return "text/css; charset=utf-8";
  if (ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}
}  // namespace

const std::vector<embedded_file>& dashboard_files() {
  static const std::vector<embedded_file> all = [] {
    std::vector<embedded_file> out;
    for (const auto& [name, text] : web_files())
      out.push_back({"/" + std::string(name), content_type_of(name), std::string(text)});
    return out;
  }();
  return all;
}

}  // namespace mm::server
