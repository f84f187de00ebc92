#include "mm/actors/tls_connection.hpp"

#include <caf/io/network/interfaces.hpp>

namespace mm::actors {

namespace net = caf::io::network;

tls_connection::tls_connection(net::default_multiplexer& mpx, net::native_socket fd,
                               caf::openssl::session_ptr session)
    : caf::io::scribe(net::conn_hdl_from_socket(fd)), stream_(mpx, fd, std::move(session)) {}

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
