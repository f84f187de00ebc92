// One accepted connection of the actor port over mutual TLS, as a CAF scribe:
// the bytes go through an OpenSSL session of CAF's OpenSSL module (which holds
// the deployment's certificate, key and CA, and refuses a peer without a
// certificate the CA signed). CAF 0.17.6 keeps its own TLS connection type
// private, so the port guard (port_guard.hpp) could not check the frames of a
// TLS peer; with this type it does, exactly as on the plain port.
//
// Same contract as CAF's plain scribe (caf/io/network/scribe_impl.hpp): the
// guard derives from either, and reaches the socket through `stream_`.
#pragma once

#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/native_socket.hpp>
#include <caf/io/network/stream_impl.hpp>
#include <caf/io/scribe.hpp>
#include <caf/openssl/session.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace mm::actors {

// How a TLS stream reads and writes: through its session.
class tls_stream_policy {
 public:
  explicit tls_stream_policy(caf::openssl::session_ptr session) : session_(std::move(session)) {}

  caf::io::network::rw_state read_some(std::size_t& got, caf::io::network::native_socket fd,
                                       void* buf, std::size_t len) {
    return session_->read_some(got, fd, buf, len);
  }
  caf::io::network::rw_state write_some(std::size_t& sent, caf::io::network::native_socket fd,
                                        const void* buf, std::size_t len) {
    return session_->write_some(sent, fd, buf, len);
  }
  // OpenSSL may hold decrypted bytes the socket no longer signals.
  bool must_read_more(caf::io::network::native_socket fd, std::size_t threshold) {
    return session_->must_read_more(fd, threshold);
  }

 private:
  caf::openssl::session_ptr session_;
};

class tls_connection : public caf::io::scribe {
 public:
  // `session`: made for the accepted socket `fd` (caf::openssl::make_session).
  tls_connection(caf::io::network::default_multiplexer& mpx, caf::io::network::native_socket fd,
                 caf::openssl::session_ptr session);

  void configure_read(caf::io::receive_policy::config config) override;
  void ack_writes(bool enable) override;
  std::vector<char>& wr_buf() override;
  std::vector<char>& rd_buf() override;
  void graceful_shutdown() override;
  void flush() override;
  std::string addr() const override;
  std::uint16_t port() const override;
  void add_to_loop() override;
  void remove_from_loop() override;

  // The common name (CN) of the peer's certificate, which the CA checked;
  // empty before the TLS handshake is done or without one.
  std::string peer_common_name() const;

 protected:
  caf::io::network::stream_impl<tls_stream_policy> stream_;

 private:
  tls_connection(caf::io::network::default_multiplexer& mpx, caf::io::network::native_socket fd,
                 const caf::openssl::session* raw, caf::openssl::session_ptr&& session);

  const caf::openssl::session* session_;  // owned by stream_'s policy
  void launch();
  bool launched_ = false;
};

}  // namespace mm::actors
