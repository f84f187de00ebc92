#include "mm/actors/generic_actors.hpp"

namespace mm::actors {

template interfaces<generic_profile>::instance::behavior_type instance_actor<generic_profile>(
    instance_pointer<generic_profile>, instance_config<generic_profile>);

template interfaces<generic_profile>::supervisor::behavior_type supervisor_actor<generic_profile>(
    supervisor_pointer<generic_profile>, instance_config<generic_profile>, restart_backoff);

template client_interface<generic_profile>::routing_type::behavior_type
    client_actor<generic_profile>(client_pointer<generic_profile>,
                                  std::vector<interfaces<generic_profile>::matchmaker>,
                                  std::uint64_t, set_part);

template std::vector<interfaces<generic_profile>::matchmaker>
spawn_instance_set<generic_profile, caf::actor_system>(caf::actor_system&, std::uint32_t,
                                                       const instance_config<generic_profile>&,
                                                       restart_backoff);

template std::vector<interfaces<generic_profile>::matchmaker>
spawn_instance_part<generic_profile, caf::actor_system>(caf::actor_system&, const set_part&,
                                                        const instance_config<generic_profile>&,
                                                        restart_backoff);

template client_interface<generic_profile>::routing_type
spawn_client<generic_profile, caf::actor_system>(
    caf::actor_system&, std::vector<interfaces<generic_profile>::matchmaker>, std::uint64_t,
    set_part);

}  // namespace mm::actors
