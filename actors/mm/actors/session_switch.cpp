#include "mm/actors/session_switch.hpp"

#include <caf/mailbox_element.hpp>
#include <caf/make_actor.hpp>
#include <caf/monitorable_actor.hpp>

#include "mm/actors/errors.hpp"

namespace mm::actors {

namespace {

class session_switch final : public caf::monitorable_actor {
 public:
  session_switch(caf::actor_config& cfg, std::shared_ptr<session_target> target,
                 std::set<std::string> sigs)
      : monitorable_actor(cfg.add_flag(is_hidden_flag)),
        target_(std::move(target)),
        sigs_(std::move(sigs)) {}

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override {
    if (auto service = target_->get()) {
      service->enqueue(std::move(what), host);
      return;
    }
    // None runs here: a request is answered with the reason, where its
    // answer would have gone; anything else is dropped.
    if (!what->mid.is_request()) return;
    const caf::strong_actor_ptr& to = what->stages.empty() ? what->sender : what->stages.back();
    if (!to) return;
    const std::string by = target_->served_by();
    to->enqueue(nullptr, what->mid.response_id(),
                caf::make_message(make_error(
                    errc::not_owned_here,
                    "the session queues are not served by this node" +
                        (by.empty() ? std::string(" now (being taken over): retry in a moment")
                                    : ": ask " + by))),
                host);
  }

  std::set<std::string> message_types() const override { return sigs_; }

  const char* name() const override { return "session_switch"; }

 private:
  std::shared_ptr<session_target> target_;
  std::set<std::string> sigs_;
};

}  // namespace

caf::strong_actor_ptr make_session_switch(caf::actor_system& sys,
                                          std::shared_ptr<session_target> target,
                                          std::set<std::string> sigs) {
  caf::actor_config cfg;
  return caf::make_actor<session_switch, caf::strong_actor_ptr>(
      sys.next_actor_id(), sys.node(), &sys, cfg, std::move(target), std::move(sigs));
}

}  // namespace mm::actors
