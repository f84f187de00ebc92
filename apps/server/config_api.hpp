// The routes of the configuration changed while the server runs
// (live_config.hpp; docs/api.md, "Configuration versions"): the version in
// force, the history, a check of a candidate, an apply and a rollback.
#pragma once

#include "api_routes.hpp"

namespace mm::server {

void add_config_routes(api_routes& api, http_context& ctx);

}  // namespace mm::server
