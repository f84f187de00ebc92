// The library's one instantiation of the session queue: the queue without a
// game's plug-in.
#include "mm/session/session_queue_impl.hpp"

namespace mm::session {

const char* to_string(ticket_state s) {
  switch (s) {
    case ticket_state::waiting:
      return "waiting";
    case ticket_state::matched:
      return "matched";
    case ticket_state::cancelled:
      return "cancelled";
    case ticket_state::expired:
      return "expired";
    case ticket_state::failed:
      return "failed";
  }
  return "unknown";
}

template class basic_session_queue<standard_plugin>;

}  // namespace mm::session
