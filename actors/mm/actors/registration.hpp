// Registers the message types of a profile's interfaces (and the session
// matchmaker's) with CAF, so they can
// cross the network (CAF 0.17 needs every message element type announced), and
// the project's error category, so actor_system::render() names the cause.
#pragma once

#include <caf/actor_system_config.hpp>

#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"
#include "mm/engine/generic_profile.hpp"

namespace mm::actors {

// The session matchmaker's message types (profile-independent; registration.cpp).
void add_session_message_types(caf::actor_system_config& cfg);

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

// The generic profile's registration is compiled once, in mm_actors
// (registration.cpp): instantiating CAF's serialization of every message type
// is most of the compile time of a file that registers them.
extern template void add_message_types<generic_profile>(caf::actor_system_config&,
                                                        const std::string&);

}  // namespace mm::actors
