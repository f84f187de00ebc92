#include "event_client.hpp"

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
// clang-format on
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

namespace mm::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

struct event_client::impl {
  asio::io_context io;
  websocket::stream<beast::tcp_stream> ws{io};
  beast::flat_buffer buffer;
  bool reading = false;  // a read is outstanding (it outlived an earlier wait)
  bool read_done = false;
  beast::error_code read_error;
  bool ended = false;
};

void parse_base_url(const std::string& url, event_connect& into) {
  std::string rest = url;
  if (rest.rfind("http://", 0) == 0) rest = rest.substr(7);
  if (rest.rfind("https://", 0) == 0)
    throw event_client_error("the events client speaks plain HTTP only, not '" + url + "'");
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) throw event_client_error("not host:port: " + url);
  const std::string port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
    throw event_client_error("not a port: '" + port + "'");
  into.host = rest.substr(0, colon);
  into.port = static_cast<std::uint16_t>(std::stoul(port));
}

event_client::event_client(const event_connect& c) : impl_(std::make_unique<impl>()) {
  auto& s = *impl_;
  tcp::resolver resolver(s.io);
  beast::error_code ec;
  const auto found = resolver.resolve(c.host, std::to_string(c.port), ec);
  if (ec) throw event_client_error("cannot resolve " + c.host + ": " + ec.message());
  beast::get_lowest_layer(s.ws).expires_after(std::chrono::seconds(10));
  beast::get_lowest_layer(s.ws).connect(found, ec);
  if (ec)
    throw event_client_error("cannot connect to " + c.host + ":" + std::to_string(c.port) + ": " +
                             ec.message());
  beast::get_lowest_layer(s.ws).socket().set_option(tcp::no_delay(true), ec);
  s.ws.set_option(websocket::stream_base::decorator([c](websocket::request_type& req) {
    if (!c.token.empty()) req.set(beast::http::field::authorization, "Bearer " + c.token);
    if (!c.origin.empty()) req.set(beast::http::field::origin, c.origin);
  }));
  std::string target = c.path;
  char sep = '?';
  if (c.after) {
    target += sep + std::string("after=") + std::to_string(*c.after);
    sep = '&';
  }
  if (!c.queues.empty()) target += sep + std::string("queues=") + c.queues;
  // Asynchronously: Beast's blocking handshake leaves the answer empty when
  // the server declines, and the status is what the caller needs then.
  websocket::response_type answer;
  bool shaken = false;
  s.ws.async_handshake(answer, c.host + ":" + std::to_string(c.port), target,
                       [&](beast::error_code e) {
                         ec = e;
                         shaken = true;
                       });
  s.io.run_for(std::chrono::seconds(10));
  if (!shaken) throw event_client_error("GET /api/events: no handshake answer within 10 s");
  if (ec) {
    event_client_error e("GET /api/events: the WebSocket handshake failed: HTTP " +
                         std::to_string(answer.result_int()) + " " + answer.body());
    e.http_status = static_cast<int>(answer.result_int());
    throw e;
  }
  beast::get_lowest_layer(s.ws).expires_never();
}

event_client::~event_client() = default;

std::optional<std::string> event_client::next(std::chrono::milliseconds wait) {
  auto& s = *impl_;
  if (s.ended) return std::nullopt;
  if (!s.reading) {
    s.reading = true;
    s.read_done = false;
    s.ws.async_read(s.buffer, [&s](beast::error_code ec, std::size_t) {
      s.read_done = true;
      s.read_error = ec;
    });
  }
  s.io.restart();
  s.io.run_for(wait);
  if (!s.read_done) return std::nullopt;
  s.reading = false;
  if (s.read_error) {
    s.ended = true;
    return std::nullopt;
  }
  std::string text = beast::buffers_to_string(s.buffer.data());
  s.buffer.consume(s.buffer.size());
  return text;
}

void event_client::send(const std::string& text) {
  beast::error_code ec;
  impl_->ws.text(true);
  impl_->ws.write(asio::buffer(text), ec);
  if (ec) throw event_client_error("cannot send: " + ec.message());
}

std::optional<std::pair<std::uint16_t, std::string>> event_client::closed() const {
  if (!impl_->ended) return std::nullopt;
  const auto& r = impl_->ws.reason();
  return std::make_pair(static_cast<std::uint16_t>(r.code), std::string(r.reason.c_str()));
}

void event_client::close() {
  auto& s = *impl_;
  if (s.ended) return;
  s.ended = true;
  beast::error_code ec;
  beast::get_lowest_layer(s.ws).socket().close(ec);
}

}  // namespace mm::client
