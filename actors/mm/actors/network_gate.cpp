#include "mm/actors/network_gate.hpp"

#include <caf/actor_cast.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/make_actor.hpp>
#include <caf/monitorable_actor.hpp>
#include <caf/system_messages.hpp>

namespace mm::actors {

namespace {

class network_gate final : public caf::monitorable_actor {
 public:
  network_gate(caf::strong_actor_ptr target, std::set<std::string> sigs,
               std::shared_ptr<network_gate_stats> stats)
      : monitorable_actor(caf::actor_config{}.add_flag(is_hidden_flag)),
        target_(std::move(target)),
        sigs_(std::move(sigs)),
        stats_(std::move(stats)) {}

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override {
    const auto& content = what->content();
    if (content.match_elements<caf::exit_msg>() || content.match_elements<caf::down_msg>()) {
      ++stats_->dropped;
      return;
    }
    // A dead target bounces requests with an error, as any dead actor does.
    target_->enqueue(std::move(what), host);
  }

  std::set<std::string> message_types() const override { return sigs_; }

  const char* name() const override { return "network_gate"; }

 private:
  caf::strong_actor_ptr target_;
  std::set<std::string> sigs_;
  std::shared_ptr<network_gate_stats> stats_;
};

}  // namespace

caf::strong_actor_ptr make_network_gate(caf::actor_system& sys, caf::strong_actor_ptr target,
                                        std::set<std::string> sigs,
                                        std::shared_ptr<network_gate_stats> stats) {
  return caf::make_actor<network_gate, caf::strong_actor_ptr>(
      sys.next_actor_id(), sys.node(), &sys, std::move(target), std::move(sigs), std::move(stats));
}

}  // namespace mm::actors
