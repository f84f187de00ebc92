#include "mm/actors/registration.hpp"

#include "mm/actors/backfill_messages.hpp"

namespace mm::actors {

void add_session_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<session_ticket>("mm.session_ticket");
  cfg.add_message_type<ticket_outcome>("mm.ticket_outcome");
  cfg.add_message_type<tick_outcomes>("mm.tick_outcomes");
  cfg.add_message_type<session_queue_report>("mm.session_queue_report");
  cfg.add_message_type<std::vector<session_queue_report>>("mm.session_queue_reports");
  cfg.add_message_type<session_interfaces::owner>("mm.ticket_owner");
  cfg.add_message_type<std::vector<waiting_ticket_view>>("mm.waiting_ticket_views");
  cfg.add_message_type<lobby_registration>("mm.lobby_registration");
  cfg.add_message_type<std::vector<lobby_registration>>("mm.lobby_registrations");
  cfg.add_message_type<lobby_query>("mm.lobby_query");
  cfg.add_message_type<lobby_placement>("mm.lobby_placement");
  cfg.add_message_type<lobbies_report>("mm.lobbies_report");
  cfg.add_message_type<backfill_registration>("mm.backfill_registration");
  cfg.add_message_type<backfill_state>("mm.backfill_state");
  cfg.add_message_type<std::vector<backfill_state>>("mm.backfill_states");
  cfg.add_message_type<seat_change>("mm.seat_change");
  cfg.add_message_type<session::explanation>("mm.explanation");
  cfg.add_message_type<std::vector<session::explanation>>("mm.explanations");
}

template void add_message_types<generic_profile>(caf::actor_system_config&, const std::string&);

}  // namespace mm::actors
