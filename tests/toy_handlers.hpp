// What the HTTP server's own tests share: an answer of the server's own
// refusals as plain text.
#pragma once

#include <string>

#include "http_server.hpp"

namespace mm::test {

inline mm::server::http_response plain_error(int status, const std::string& message) {
  mm::server::http_response r;
  r.status = status;
  r.body = message;
  return r;
}

}  // namespace mm::test
