// The JSON of an explanation (why a ticket or a running match waits,
// docs/session.md "Why is my ticket waiting?"): times in ms, null where
// there is none; each refusal by its code ("rule", "players", "teams",
// "datacenter", "already_in", "none") with the rule's name.
#pragma once

#include "json_codec.hpp"
#include "mm/session/explain.hpp"

namespace mm::server {

json explanation_json(const session::explanation& e);

}  // namespace mm::server
