// The actor a port publishes in front of the server's own: it passes every
// message from the network on to its target unchanged (same sender, same
// request id, so the answer goes straight back), except the two that only
// the actor runtime should ever send, which it drops:
// - an exit message: CAF delivers a peer's send_exit to the published actor,
//   and a `kill` exit cannot be trapped, so one call from any game node
//   would stop the server's client for every game node;
// - a down message: a forged one could make the target believe one of the
//   actors it watches had stopped.
// It has no mailbox and no thread: forwarding happens in the sender's context.
#pragma once

#include <atomic>
#include <caf/actor_control_block.hpp>
#include <caf/actor_system.hpp>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

namespace mm::actors {

struct network_gate_stats {
  std::atomic<std::uint64_t> dropped{0};  // exit and down messages from the network
};

// A gate in front of `target` presenting `sigs` (the target's interface).
caf::strong_actor_ptr make_network_gate(caf::actor_system& sys, caf::strong_actor_ptr target,
                                        std::set<std::string> sigs,
                                        std::shared_ptr<network_gate_stats> stats);

}  // namespace mm::actors
