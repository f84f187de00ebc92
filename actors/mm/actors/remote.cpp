#include "mm/actors/remote.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <fstream>
#include <memory>

#include "mm/actors/interface.hpp"
#include "mm/actors/worker_idle.hpp"

namespace mm::actors {

namespace {

std::string openssl_reason() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

bool readable(const std::string& path) {
  return std::ifstream(path).good();
}

}  // namespace

std::optional<std::string> tls_problem(const actor_tls& tls) {
  if (tls.certificate.empty() || tls.key.empty() || tls.ca.empty())
    return std::string("mutual TLS needs all three files: certificate, key and ca");
  for (const auto* f : {&tls.certificate, &tls.key, &tls.ca})
    if (!readable(*f)) return "cannot read '" + *f + "'";
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  if (!ctx) return "OpenSSL: " + openssl_reason();
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.certificate.c_str()) != 1)
    return "'" + tls.certificate + "' is not a PEM certificate: " + openssl_reason();
  {
    // Alone first: with the certificate loaded, OpenSSL reports a key that is
    // not the certificate's the same way as a file that is no key at all.
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> alone(SSL_CTX_new(TLS_method()),
                                                            SSL_CTX_free);
    if (!alone || SSL_CTX_use_PrivateKey_file(alone.get(), tls.key.c_str(), SSL_FILETYPE_PEM) != 1)
      return "'" + tls.key + "' is not an unencrypted PEM private key: " + openssl_reason();
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx.get()) != 1)
    return "the key '" + tls.key + "' does not belong to the certificate '" + tls.certificate + "'";
  if (SSL_CTX_load_verify_locations(ctx.get(), tls.ca.c_str(), nullptr) != 1)
    return "'" + tls.ca + "' is not a PEM CA certificate: " + openssl_reason();
  // This node's own certificate must pass the check its peers will make.
  STACK_OF(X509)* chain = nullptr;  // intermediates from the certificate file
  SSL_CTX_get0_chain_certs(ctx.get(), &chain);
  X509_STORE_CTX* check = X509_STORE_CTX_new();
  const bool signed_by_ca = check &&
                            X509_STORE_CTX_init(check, SSL_CTX_get_cert_store(ctx.get()),
                                                SSL_CTX_get0_certificate(ctx.get()), chain) == 1 &&
                            X509_verify_cert(check) == 1;
  const std::string why =
      check ? X509_verify_cert_error_string(X509_STORE_CTX_get_error(check)) : "";
  X509_STORE_CTX_free(check);
  if (!signed_by_ca)
    return "the certificate '" + tls.certificate + "' does not verify against '" + tls.ca +
           "': " + why;
  return std::nullopt;
}

void use_network(caf::actor_system_config& cfg, const actor_tls& tls) {
  cfg.load<caf::io::middleman>();
  // A worker in CAF's 50 µs polling phase does not see a reply from the
  // network until its sleep ends, and burns CPU meanwhile: one query at a
  // time over the port took 333 µs (p50) and 256 µs of the game process's
  // CPU with it, 138 µs and 99 µs without it (docs/performance.md).
  set_worker_idle(cfg, worker_idle::sleep);
  if (!tls.enabled()) return;
  cfg.load<caf::openssl::manager>();
  cfg.openssl_certificate = tls.certificate;
  cfg.openssl_key = tls.key;
  cfg.openssl_cafile = tls.ca;
}

caf::expected<std::string> present_token(caf::actor_system& sys, const caf::actor& handle,
                                         const std::string& token, std::chrono::seconds timeout) {
  caf::scoped_actor self{sys};
  caf::expected<std::string> out = caf::make_error(caf::sec::request_timeout);
  self->request(handle, timeout, hello_atom::value, token)
      .receive([&](std::string& name) { out = std::move(name); },
               [&](caf::error& e) { out = std::move(e); });
  return out;
}

published_port::published_port(caf::actor_system& sys, caf::strong_actor_ptr gate,
                               std::shared_ptr<network_gate_stats> gate_stats, std::uint16_t port,
                               std::shared_ptr<const port_guard_stats> guard)
    : sys_(sys),
      gate_(std::move(gate)),
      gate_stats_(std::move(gate_stats)),
      port_(port),
      guard_(std::move(guard)) {}

published_port::~published_port() {
  close();
}

port_guard_counters published_port::counters() const {
  port_guard_counters c = guard_ ? guard_->read() : port_guard_counters{};
  c.dropped_runtime_messages = gate_stats_->dropped.load();
  return c;
}

void published_port::close() {
  if (!gate_) return;
  // Both kinds of port are the BASP broker's (port_guard.cpp), so the plain
  // middleman's unpublish closes a TLS port too.
  sys_.middleman().unpublish(caf::actor_cast<caf::actor>(gate_), port_);
  gate_ = nullptr;
}

caf::expected<std::unique_ptr<published_port>> publish_actor(
    caf::actor_system& sys, caf::strong_actor_ptr whom, std::set<std::string> sigs,
    std::uint16_t port, const std::string& host, bool tls, const port_limits& limits,
    std::shared_ptr<identity_book> identities) {
  if (!whom) return caf::make_error(caf::sec::cannot_publish_invalid_actor);
  auto gate_stats = std::make_shared<network_gate_stats>();
  auto gate = make_network_gate(sys, std::move(whom), sigs, gate_stats);
  auto guarded =
      publish_guarded(sys, gate, std::move(sigs), port, host, limits, tls, std::move(identities));
  if (!guarded) return std::move(guarded.error());
  return std::make_unique<published_port>(sys, std::move(gate), std::move(gate_stats),
                                          guarded->port, std::move(guarded->stats));
}

}  // namespace mm::actors
