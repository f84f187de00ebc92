// The actor port across processes and machines: publishing a matchmaker
// client, and connecting a game process to one, with or without mutual TLS.
//
// Plain (no TLS): CAF's network layer has no authentication, so whoever can
// connect can call every message of the published interface. matchmakerd
// therefore publishes plainly on loopback addresses only.
// Mutual TLS (CAF's OpenSSL module): both ends present a certificate signed by
// the deployment's CA, and each refuses a peer without one, before any actor
// message is read. CAF checks the chain, not the host name: the CA must sign
// only the deployment's own nodes.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "mm/actors/actor_tls.hpp"

namespace mm::actors {

// Why these files cannot serve (a missing one, not PEM, a key that does not
// match the certificate, a certificate the CA did not sign), or nothing.
// The messages name the file. CAF itself would only fail later, on the
// network thread, at the first connection.
std::optional<std::string> tls_problem(const actor_tls& tls);

// Loads CAF's network layer into `cfg`, and with TLS enabled also its OpenSSL
// module with these files. Before the actor system is made from `cfg`.
void use_network(caf::actor_system_config& cfg, const actor_tls& tls);

// Publishes `whom` on host:port (0: any free port), over TLS when `tls`.
template <class Handle>
caf::expected<std::uint16_t> publish_actor(caf::actor_system& sys, const Handle& whom,
                                           std::uint16_t port, const std::string& host, bool tls) {
  if (tls) return caf::openssl::publish(whom, port, host.c_str());
  return sys.middleman().publish(whom, port, host.c_str());
}

// Connects to the actor published on host:port, over TLS when `tls`.
template <class Handle>
caf::expected<Handle> connect_actor(caf::actor_system& sys, const std::string& host,
                                    std::uint16_t port, bool tls) {
  if (tls) return caf::openssl::remote_actor<Handle>(sys, host, port);
  return sys.middleman().remote_actor<Handle>(host, port);
}

}  // namespace mm::actors
