// The actors of the generic profile (the profile matchmakerd serves), compiled
// once in generic_actors.cpp: a file that spawns them through this header uses
// that copy instead of compiling the actor templates again (extern template).
#pragma once

#include <caf/actor_system.hpp>
#include <chrono>
#include <cstdint>
#include <vector>

#include "mm/actors/client.hpp"
#include "mm/actors/instance_set.hpp"
#include "mm/engine/generic_engine.hpp"

namespace mm::actors {

extern template interfaces<generic_profile>::instance::behavior_type
    instance_actor<generic_profile>(instance_pointer<generic_profile>,
                                    instance_config<generic_profile>);

extern template interfaces<generic_profile>::supervisor::behavior_type
    supervisor_actor<generic_profile>(supervisor_pointer<generic_profile>,
                                      instance_config<generic_profile>, restart_backoff);

extern template client_interface<generic_profile>::routing_type::behavior_type
    client_actor<generic_profile>(client_pointer<generic_profile>,
                                  std::vector<interfaces<generic_profile>::matchmaker>,
                                  std::uint64_t, set_part);

extern template std::vector<interfaces<generic_profile>::matchmaker>
spawn_instance_set<generic_profile, caf::actor_system>(caf::actor_system&, std::uint32_t,
                                                       const instance_config<generic_profile>&,
                                                       restart_backoff);

extern template std::vector<interfaces<generic_profile>::matchmaker>
spawn_instance_part<generic_profile, caf::actor_system>(caf::actor_system&, const set_part&,
                                                        const instance_config<generic_profile>&,
                                                        restart_backoff);

extern template client_interface<generic_profile>::routing_type
spawn_client<generic_profile, caf::actor_system>(
    caf::actor_system&, std::vector<interfaces<generic_profile>::matchmaker>, std::uint64_t,
    set_part);

}  // namespace mm::actors
