// The files of the actor port's mutual TLS (see remote.hpp). No CAF here, so
// configuration code can hold them.
#pragma once

#include <string>

namespace mm::actors {

// PEM files: this node's certificate (chain) and private key (unencrypted),
// and the CA certificate(s) a peer's certificate must be signed by.
struct actor_tls {
  std::string certificate;
  std::string key;
  std::string ca;

  bool enabled() const { return !certificate.empty() || !key.empty() || !ca.empty(); }
};

}  // namespace mm::actors
