#include "mm/actors/tls_connection.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <caf/io/network/interfaces.hpp>
#include <memory>

namespace mm::actors {

namespace {

// CAF 0.17.6 keeps a session's OpenSSL handle private. An explicit
// instantiation may name a private member (C++17 [temp.explicit]), so this
// reads it without copying CAF's layout: a CAF without the member `ssl_`
// does not compile here.
struct session_ssl_tag {
  using type = SSL* caf::openssl::session::*;
};
template <class Tag, typename Tag::type Member>
struct expose {
  friend typename Tag::type member_of(Tag) { return Member; }
};
SSL* caf::openssl::session::*member_of(session_ssl_tag);
template struct expose<session_ssl_tag, &caf::openssl::session::ssl_>;

}  // namespace

namespace net = caf::io::network;

tls_connection::tls_connection(net::default_multiplexer& mpx, net::native_socket fd,
                               caf::openssl::session_ptr session)
    : tls_connection(mpx, fd, session.get(), std::move(session)) {}

tls_connection::tls_connection(net::default_multiplexer& mpx, net::native_socket fd,
                               const caf::openssl::session* raw,
                               caf::openssl::session_ptr&& session)
    : caf::io::scribe(net::conn_hdl_from_socket(fd)),
      stream_(mpx, fd, std::move(session)),
      session_(raw) {}

void tls_connection::configure_read(caf::io::receive_policy::config config) {
  stream_.configure_read(config);
  if (!launched_) launch();
}

void tls_connection::ack_writes(bool enable) {
  stream_.ack_writes(enable);
}

std::vector<char>& tls_connection::wr_buf() {
  return stream_.wr_buf();
}

std::vector<char>& tls_connection::rd_buf() {
  return stream_.rd_buf();
}

void tls_connection::graceful_shutdown() {
  stream_.graceful_shutdown();
  detach(&stream_.backend(), false);
}

void tls_connection::flush() {
  stream_.flush(this);
}

std::string tls_connection::addr() const {
  auto a = net::remote_addr_of_fd(stream_.fd());
  return a ? *a : std::string{};
}

std::uint16_t tls_connection::port() const {
  auto p = net::remote_port_of_fd(stream_.fd());
  return p ? *p : 0;
}

std::string tls_connection::peer_common_name() const {
  SSL* ssl = session_->*member_of(session_ssl_tag{});
  if (ssl == nullptr || !SSL_is_init_finished(ssl)) return {};
  std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get_peer_certificate(ssl), X509_free);
  if (!cert) return {};
  char cn[256] = {0};
  const int n =
      X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn, sizeof cn);
  return n > 0 ? std::string(cn, static_cast<std::size_t>(n)) : std::string();
}

void tls_connection::launch() {
  launched_ = true;
  stream_.start(this);
  // The TLS handshake may still want to write (its answer to the peer's
  // hello): an empty write wakes the stream for it, and the stream stops
  // watching for writes once nothing is left.
  stream_.force_empty_write(this);
}

void tls_connection::add_to_loop() {
  stream_.activate(this);
}

void tls_connection::remove_from_loop() {
  stream_.passivate();
}

}  // namespace mm::actors
