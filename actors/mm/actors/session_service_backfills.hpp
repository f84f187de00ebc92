// Backfill in the session service (session_service.hpp): a running match's
// messages routed to the queue that holds it, by match id.
//
// - Match ids are unique across the service's queues: a second registration
//   of an id is errc::conflict, whatever its queue (one backfill per match
//   at a time).
// - A match belongs to the credential that registered it: another's
//   messages are answered errc::not_found, as for an unknown id. An empty
//   credential is an admin's (only the server's own front ends pass one).
// - Bounds per credential (a game server's): the running matches it holds
//   (max_backfills_per_credential) and the rate of its changes (a token
//   bucket of backfill_requests_per_s, holding backfill_burst):
//   errc::limit_reached, naming the bound.
// - The books of ownership change once the queue's answer says the change
//   is durable; a registration under way holds its id (pending), so that two
//   at once cannot both pass.
#pragma once

#include <string>
#include <vector>

#include "mm/actors/session_service.hpp"

namespace mm::actors {

caf::result<backfill_state> route_backfill_create(session_service_pointer self,
                                                  backfill_registration& r);
caf::result<backfill_state> route_backfill_update(session_service_pointer self,
                                                  backfill_registration& r);
caf::result<bool> route_backfill_stop(session_service_pointer self, const std::string& match_id,
                                      const std::string& credential);
caf::result<backfill_state> route_backfill_seats(session_service_pointer self, seat_change& c,
                                                 bool joined);
caf::result<backfill_state> route_backfill_status(session_service_pointer self,
                                                  const std::string& match_id,
                                                  const std::string& credential);
// Why its open seats wait (session_service_explain.hpp).
caf::result<session::explanation> route_backfill_explain(session_service_pointer self,
                                                         const std::string& match_id,
                                                         std::uint32_t limit,
                                                         const std::string& credential);
caf::result<std::vector<backfill_state>> route_backfill_list(session_service_pointer self,
                                                             const std::string& queue,
                                                             const std::string& credential);

// The running matches of the last run, by queue slot (their owners in the
// books); a match whose queue is gone stops (its row deleted).
std::vector<std::vector<backfill_state>> take_back_backfills(session_service_pointer self);

}  // namespace mm::actors
