// The API's contract: the OpenAPI 3.1 document (docs/openapi.json, compiled
// into the server and served at GET /api/openapi.json) and the check that the
// routes the server serves and the operations the document describes are the
// same, with the same roles. The server runs the check when it builds its
// routes and refuses to start on a difference, so a route added without its
// operation (or the reverse) fails every test that starts the server.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server_config.hpp"

namespace mm::server {

// The document's text, as built in.
std::string_view openapi_document();

// A route as the server registers it: "GET", "/api/tickets/*" ("*" one
// segment, "a|b" one of the words), the role it needs (none: no token).
struct served_route {
  std::string method;
  std::string pattern;
  std::optional<role> needed;  // none: a dashboard file or a health probe
  bool probe = false;          // a health probe: an operation with x-role "none"
};

// Each difference between `routes` and the operations of `document` (an
// OpenAPI document's text), as a sentence naming the method and path: a
// route without an operation, an operation no route serves, an `x-role` that
// is not the route's role. Routes outside /api/ and /metrics with no role
// (the dashboard's files) need no operation. Empty: they agree.
std::vector<std::string> contract_gaps(const std::vector<served_route>& routes,
                                       std::string_view document);

}  // namespace mm::server
