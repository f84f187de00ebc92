// A client of the ticket events' WebSocket (GET /api/events; docs/session.md,
// "Ticket events"), blocking, for mmctl, tests and benchmarks. One thread
// uses it at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace mm::client {

struct event_client_error : std::runtime_error {
  using std::runtime_error::runtime_error;
  int http_status = 0;  // the handshake's answer when the server refused it
};

struct event_connect {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  std::string token;                   // empty: no Authorization header
  std::optional<std::uint64_t> after;  // resume after this sequence number
  std::string queues;                  // "a,b": only these queues
  std::string origin;                  // sent as Origin when not empty (as a browser does)
  std::string path = "/api/events";
};

class event_client {
 public:
  // Connects and completes the handshake; throws event_client_error.
  explicit event_client(const event_connect& c);
  ~event_client();
  event_client(const event_client&) = delete;
  event_client& operator=(const event_client&) = delete;

  // The next message, or nothing when none came within `wait` (the
  // connection stays usable) or the server closed it (see `closed`).
  std::optional<std::string> next(std::chrono::milliseconds wait);
  void send(const std::string& text);
  // The server's close code and reason, once it closed the connection.
  std::optional<std::pair<std::uint16_t, std::string>> closed() const;
  void close();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// "http://host:port" (or "host:port") as host and port; throws
// event_client_error for anything else.
void parse_base_url(const std::string& url, event_connect& into);

}  // namespace mm::client
