// A plug-in that asks for the standard build, reached the way a game's
// plug-in reaches it: from the whole ranking of a seed's (or a running
// match's) candidates, with no shortcut through the nearest few. A queue of
// it without the candidates' index is the reference the tests hold the
// standard queue's matches and placements to.
#pragma once

#include <span>

#include "mm/session/session_plugin.hpp"

namespace mm::session::testing {

struct whole_ranking : standard_plugin {
  build_decision build_match(const waiting_ticket&, std::span<const plugin_candidate>,
                             const match_context&) {
    return build_decision::standard();
  }
};

}  // namespace mm::session::testing
