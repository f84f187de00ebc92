// The dashboard's static files (apps/server/web), compiled into the binary by
// cmake/EmbedFiles.cmake.
#pragma once

#include <string>
#include <vector>

namespace mm::server {

struct embedded_file {
  std::string path;  // "/index.html", "/app.js", ...
  std::string content_type;
  std::string body;
};

const std::vector<embedded_file>& dashboard_files();

}  // namespace mm::server
