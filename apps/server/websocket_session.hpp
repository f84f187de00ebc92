// A connection that became a WebSocket (http_handlers::upgrade): the server
// sends what its websocket_feed gives, one message at a time, and hands the
// client's messages to the feed. Network thread only.
//
// Bounds: at most http_limits::max_websockets connections (a handshake past
// it is answered 503 by http_server); a client message over
// max_websocket_message_bytes closes the connection (1009); a peer silent for
// websocket_idle_timeout, pings unanswered, is closed; a close that the peer
// does not take within 2 s (it reads nothing) ends the TCP connection.
#pragma once

#include <memory>

#include "http_server_impl.hpp"

namespace mm::server {

// Takes the connection: the handshake's answer, then the feed's messages.
void start_websocket(http_server::impl& srv, beast::tcp_stream stream,
                     bhttp::request<bhttp::string_body> handshake,
                     std::shared_ptr<websocket_feed> feed);

// Closes every WebSocket with 1001 (going away): the server stops.
void close_websockets(http_server::impl& srv);

}  // namespace mm::server
