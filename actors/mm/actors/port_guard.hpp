// The actor port's guard, plain or TLS. CAF 0.17.6 trusts the frame headers it reads
// on its port: one frame can make it allocate up to 4 GiB, or crash the whole
// process (a handshake without a payload). The guard publishes an actor with
// CAF's own acceptor and connections, in subclasses that check every frame a
// peer sends (basp_frame_check.hpp) at the moment CAF has read it and before
// CAF acts on it: a frame that breaks a rule ends the connection there, the
// server keeps serving. No extra thread, copy or system call per message.
// Over mutual TLS the same checks run on the decrypted bytes
// (tls_connection.hpp): a peer with a certificate of the deployment is still
// untrusted input.
//
// Also bounded: connections at once (more are closed as they are accepted),
// and the time a new connection has to send its handshake (a late one is
// closed when the next connection arrives, so a silent connection never holds
// a place a new peer needs).
#pragma once

#include <atomic>
#include <caf/actor_control_block.hpp>
#include <caf/actor_system.hpp>
#include <caf/expected.hpp>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "mm/actors/identity.hpp"
#include "mm/actors/port_limits.hpp"

namespace mm::actors {

struct port_guard_counters {
  std::uint64_t accepted = 0;            // connections handed to the actor layer
  std::uint64_t refused_full = 0;        // closed at accept: max_connections reached
  std::uint64_t cut_bad_frame = 0;       // a frame broke a rule
  std::uint64_t cut_slow_handshake = 0;  // no whole handshake within the timeout
  std::uint64_t cut_node_taken = 0;      // its node id is another connection's (identity.hpp)
  std::uint64_t open = 0;                // connections open now
  // Exit and down messages from peers, dropped by the port's gate
  // (network_gate.hpp; filled in by published_port, over TLS too).
  std::uint64_t dropped_runtime_messages = 0;
};

// The guard's live figures, shared by its acceptor and connections (which run
// on CAF's network thread) and read from any thread.
class port_guard_stats {
 public:
  port_guard_counters read() const {
    return {accepted.load(),           refused_full.load(),   cut_bad_frame.load(),
            cut_slow_handshake.load(), cut_node_taken.load(), open.load()};
  }

  std::atomic<std::uint64_t> accepted{0}, refused_full{0}, cut_bad_frame{0}, cut_slow_handshake{0},
      cut_node_taken{0}, open{0};
};

struct guarded_port {
  std::uint16_t port = 0;
  std::shared_ptr<const port_guard_stats> stats;
};

// Publishes `whom` (its interface `sigs`) on host:port (0: any free port)
// behind the guard; with `tls`, each connection speaks TLS through CAF's
// OpenSSL module, which must be loaded (remote.hpp: use_network). Unpublish
// as usual (middleman().unpublish). With `identities`, each connection is
// bound there, from its handshake to its end, by the node id it announced
// (identity.hpp); a connection announcing a node id another one holds is cut.
caf::expected<guarded_port> publish_guarded(caf::actor_system& sys, caf::strong_actor_ptr whom,
                                            std::set<std::string> sigs, std::uint16_t port,
                                            const std::string& host, const port_limits& limits,
                                            bool tls = false,
                                            std::shared_ptr<identity_book> identities = nullptr);

}  // namespace mm::actors
