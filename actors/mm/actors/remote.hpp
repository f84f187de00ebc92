// The actor port across processes and machines: publishing a matchmaker
// client, and connecting a game process to one, with or without mutual TLS.
//
// Plain (no TLS): CAF's network layer has no authentication, so whoever can
// connect can call every message of the published interface. matchmakerd
// therefore publishes plainly on loopback addresses only. The plain port is
// guarded (port_guard.hpp): every frame a peer sends is checked before CAF
// acts on it, since one crafted frame can make CAF 0.17.6 allocate gigabytes
// or crash.
// Mutual TLS (CAF's OpenSSL module): both ends present a certificate signed by
// the deployment's CA, and each refuses a peer without one, before any actor
// message is read. CAF checks the chain, not the host name: the CA must sign
// only the deployment's own nodes. The TLS port has the same guard as the
// plain one: a certified peer is still untrusted input.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "mm/actors/actor_tls.hpp"
#include "mm/actors/identity.hpp"
#include "mm/actors/network_gate.hpp"
#include "mm/actors/port_guard.hpp"
#include "mm/actors/port_limits.hpp"

namespace mm::actors {

// Why these files cannot serve (a missing one, not PEM, a key that does not
// match the certificate, a certificate the CA did not sign), or nothing.
// The messages name the file. CAF itself would only fail later, on the
// network thread, at the first connection.
std::optional<std::string> tls_problem(const actor_tls& tls);

// Loads CAF's network layer into `cfg`, and with TLS enabled also its OpenSSL
// module with these files. Before the actor system is made from `cfg`. It
// also sets worker_idle::sleep (worker_idle.hpp): call
// set_worker_idle(cfg, worker_idle::poll) after it to keep CAF's default.
void use_network(caf::actor_system_config& cfg, const actor_tls& tls);

// An actor published on a port. Unpublished when destroyed (or by close()).
class published_port {
 public:
  published_port(caf::actor_system& sys, caf::strong_actor_ptr gate,
                 std::shared_ptr<network_gate_stats> gate_stats, std::uint16_t port,
                 std::shared_ptr<const port_guard_stats> guard);
  ~published_port();
  published_port(const published_port&) = delete;
  published_port& operator=(const published_port&) = delete;

  std::uint16_t port() const { return port_; }
  // What the port refused: its guard (plain or TLS) and the gate.
  port_guard_counters counters() const;
  // Stops accepting connections (those open stay, as with CAF's unpublish).
  void close();

 private:
  caf::actor_system& sys_;
  caf::strong_actor_ptr gate_;  // what is published: network_gate.hpp
  std::shared_ptr<network_gate_stats> gate_stats_;
  std::uint16_t port_;
  std::shared_ptr<const port_guard_stats> guard_;
};

// Publishes `whom` (with its interface `sigs`) on host:port (0: any free
// port), behind a gate that keeps peers' exit messages from it
// (network_gate.hpp), and behind the frame-checking guard with `limits`
// (port_guard.hpp); over TLS with CAF's OpenSSL module when `tls`.
// With `identities`, each connection is bound there to its identity
// (identity.hpp; the published actor reads it, as game_front.hpp does).
caf::expected<std::unique_ptr<published_port>> publish_actor(
    caf::actor_system& sys, caf::strong_actor_ptr whom, std::set<std::string> sigs,
    std::uint16_t port, const std::string& host, bool tls, const port_limits& limits,
    std::shared_ptr<identity_book> identities = nullptr);

template <class Handle>
caf::expected<std::unique_ptr<published_port>> publish_actor(
    caf::actor_system& sys, const Handle& whom, std::uint16_t port, const std::string& host,
    bool tls, const port_limits& limits = {}, std::shared_ptr<identity_book> identities = nullptr) {
  return publish_actor(sys, caf::actor_cast<caf::strong_actor_ptr>(whom), sys.message_types(whom),
                       port, host, tls, limits, std::move(identities));
}

// Presents `token` to the actor port behind `handle` (`(hello, token)`):
// this process's connection acts as the token's identity from the answer
// on. The identity's name, or the refusal (errc::forbidden for a token the
// server does not know).
caf::expected<std::string> present_token(caf::actor_system& sys, const caf::actor& handle,
                                         const std::string& token,
                                         std::chrono::seconds timeout = std::chrono::seconds(10));

// Connects to the actor published on host:port, over TLS when `tls`. With a
// token, presents it before returning the handle (present_token): a token
// the server refuses fails the connect.
template <class Handle>
caf::expected<Handle> connect_actor(caf::actor_system& sys, const std::string& host,
                                    std::uint16_t port, bool tls, const std::string& token = {}) {
  auto handle = tls ? caf::openssl::remote_actor<Handle>(sys, host, port)
                    : sys.middleman().remote_actor<Handle>(host, port);
  if (!handle || token.empty()) return handle;
  if (auto named = present_token(sys, caf::actor_cast<caf::actor>(*handle), token); !named)
    return std::move(named.error());
  return handle;
}

}  // namespace mm::actors
