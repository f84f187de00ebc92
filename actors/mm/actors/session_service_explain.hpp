// Explain in the session service (session_service.hpp): why a waiting
// ticket waits, asked of each queue it waits in, and why a running match's
// seats wait (routed with the backfill messages). A caller that is not an
// admin (a credential other than "") reads only its own tickets and
// matches, and the candidates of other credentials' tickets come without
// their ids (their count, size, MMR, wait and refusal stay: what the
// queue's own view shows of them).
#pragma once

#include <string>
#include <vector>

#include "mm/actors/session_service.hpp"

namespace mm::actors {

caf::result<std::vector<session::explanation>> route_ticket_explain(session_service_pointer self,
                                                                    std::uint64_t id,
                                                                    std::uint32_t limit,
                                                                    const std::string& credential);

// One explanation of the server's explains_per_s, if there is one left
// now (an admin's too: each costs a queue a pass over its tickets); the
// refusal when there is none (errc::limit_reached).
bool take_explain(session_service_pointer self);
caf::error explaining_too_fast(session_service_pointer self);

// Clears the ids of `e`'s candidates whose tickets are not `credential`'s
// ("": none cleared).
void hide_candidates(session_service_pointer self, session::explanation& e,
                     const std::string& credential);

}  // namespace mm::actors
