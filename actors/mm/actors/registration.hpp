// Registers the message types of a profile's interfaces (and the session
// matchmaker's) with CAF, so they can
// cross the network (CAF 0.17 needs every message element type announced), and
// the project's error category, so actor_system::render() names the cause.
#pragma once

#include <caf/actor_system_config.hpp>

#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"

namespace mm::actors {

// The session matchmaker's message types (profile-independent).
inline void add_session_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<session_ticket>("mm.session_ticket");
  cfg.add_message_type<ticket_outcome>("mm.ticket_outcome");
  cfg.add_message_type<session_queue_report>("mm.session_queue_report");
  cfg.add_message_type<std::vector<session_queue_report>>("mm.session_queue_reports");
  cfg.add_message_type<session_interfaces::owner>("mm.ticket_owner");
  cfg.add_message_type<std::vector<waiting_ticket_view>>("mm.waiting_ticket_views");
  cfg.add_message_type<lobby_registration>("mm.lobby_registration");
  cfg.add_message_type<std::vector<lobby_registration>>("mm.lobby_registrations");
  cfg.add_message_type<lobby_query>("mm.lobby_query");
  cfg.add_message_type<lobby_placement>("mm.lobby_placement");
  cfg.add_message_type<lobbies_report>("mm.lobbies_report");
}

template <class Profile>
void add_message_types(caf::actor_system_config& cfg, const std::string& profile_name) {
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  const std::string p = "mm." + profile_name + ".";
  cfg.add_message_type<match_request<query>>(p + "match_request");
  cfg.add_message_type<match_reply<model>>(p + "match_reply");
  cfg.add_message_type<std::vector<match_request<query>>>(p + "match_requests");
  cfg.add_message_type<std::vector<match_reply<model>>>(p + "match_replies");
  cfg.add_message_type<player_update<model>>(p + "player_update");
  cfg.add_message_type<std::vector<player_update<model>>>(p + "player_updates");
  cfg.add_message_type<std::vector<model>>(p + "models");
  cfg.add_message_type<set_route>("mm.set_route");
  cfg.add_message_type<served_resources>("mm.served_resources");  // shards_atom
  cfg.add_message_type<instance_info>("mm.instance_info");
  cfg.add_message_type<client_stats>("mm.client_stats");
  cfg.add_message_type<player_info>("mm.player_info");
  cfg.add_message_type<rebalance_report>("mm.rebalance_report");
  cfg.add_message_type<query_explanation>("mm.query_explanation");
  add_session_message_types(cfg);
  add_error_category(cfg);
}

}  // namespace mm::actors
