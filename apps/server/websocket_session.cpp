#include "websocket_session.hpp"

#include <boost/beast/websocket.hpp>
#include <deque>
#include <optional>
#include <utility>

namespace mm::server {

namespace websocket = beast::websocket;

namespace {
constexpr std::size_t messages_per_step = 16;
constexpr std::chrono::seconds close_grace{2};
constexpr std::chrono::seconds handshake_timeout{10};
}  // namespace

// Invariants: at most one write and one read outstanding; a close frame is
// sent once every message before it has been written; once closing, the
// feed is asked for nothing more; `finish` runs once and tells the feed.
class websocket_session : public std::enable_shared_from_this<websocket_session> {
 public:
  websocket_session(http_server::impl& srv, beast::tcp_stream stream,
                    std::shared_ptr<websocket_feed> feed)
      : srv_(srv), ws_(std::move(stream)), feed_(std::move(feed)), kill_(srv.io) {
    at_ = srv_.websockets.insert(srv_.websockets.end(), this);
    ++srv_.stats.websockets;
  }
  ~websocket_session() { finish(); }

  void start(bhttp::request<bhttp::string_body> handshake) {
    beast::get_lowest_layer(ws_).expires_never();  // the WebSocket's own timeouts rule now
    websocket::stream_base::timeout t{};
    t.handshake_timeout = handshake_timeout;
    t.idle_timeout = srv_.limits.websocket_idle_timeout;
    t.keep_alive_pings = true;
    ws_.set_option(t);
    ws_.read_message_max(srv_.limits.max_websocket_message_bytes);
    ws_.async_accept(handshake, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->finish();
      self->opened();
    });
  }

  // The server stops: 1001 once what is being sent is out.
  void going_away() { close_with(websocket::close_code::going_away, "the server is stopping"); }

 private:
  void opened() {
    // The wake-up may come from any thread, even after this session ended:
    // it holds the server (so its io_context exists) and this session weakly.
    std::weak_ptr<websocket_session> weak = shared_from_this();
    std::shared_ptr<http_server::impl> srv = srv_.shared_from_this();
    apply(feed_->opened([weak, srv] {
      asio::post(srv->io, [weak] {
        if (auto self = weak.lock()) self->woken();
      });
    }));
    read();
  }

  void woken() {
    if (done_ || close_) return;
    if (writing_) {
      more_wanted_ = true;
      return apply(feed_->next(0));  // only whether it has fallen too far behind
    }
    apply(feed_->next(messages_per_step));
  }

  void apply(websocket_feed::step s) {
    if (done_ || close_) return;
    for (auto& m : s.messages) out_.push_back(std::move(m));
    if (s.close) return close_with(s.close->first, s.close->second);
    write_next();
  }

  void write_next() {
    if (done_ || writing_) return;
    if (out_.empty()) {
      if (close_) return send_close();
      if (more_wanted_) {
        more_wanted_ = false;
        apply(feed_->next(messages_per_step));
      }
      return;
    }
    writing_ = true;
    ws_.text(true);
    ws_.async_write(asio::buffer(out_.front()),
                    [self = shared_from_this()](beast::error_code ec, std::size_t) {
                      self->writing_ = false;
                      if (ec) return self->finish();
                      self->out_.pop_front();
                      if (self->out_.empty()) self->more_wanted_ = true;  // the feed may hold more
                      self->write_next();
                    });
  }

  void read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      if (ec) return self->finish();  // closed by the peer, too big (1009 sent), idle, or ours
      std::string text = beast::buffers_to_string(self->in_.data());
      self->in_.consume(n);
      if (!self->close_) self->apply(self->feed_->received(text));
      self->read();
    });
  }

  // Closes after the messages already queued; a peer that does not take them
  // and the close frame within close_grace is cut off.
  void close_with(std::uint16_t code, std::string reason) {
    if (done_ || close_) return;
    if (reason.size() > 123) reason.resize(123);
    close_.emplace(static_cast<websocket::close_code>(code), beast::string_view(reason));
    kill_.expires_after(close_grace);
    kill_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->finish();
    });
    write_next();
  }

  void send_close() {
    if (close_sent_) return;
    close_sent_ = true;
    ws_.async_close(*close_, [self = shared_from_this()](beast::error_code) { self->finish(); });
  }

  void finish() {
    if (done_) return;
    done_ = true;
    srv_.websockets.erase(at_);
    --srv_.stats.websockets;
    kill_.cancel();
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
    feed_->closed();
  }

  http_server::impl& srv_;
  websocket::stream<beast::tcp_stream> ws_;
  std::shared_ptr<websocket_feed> feed_;
  asio::steady_timer kill_;
  std::list<websocket_session*>::iterator at_;
  beast::flat_buffer in_;
  std::deque<std::string> out_;
  std::optional<websocket::close_reason> close_;
  bool writing_ = false;
  bool more_wanted_ = false;
  bool close_sent_ = false;
  bool done_ = false;
};

void start_websocket(http_server::impl& srv, beast::tcp_stream stream,
                     bhttp::request<bhttp::string_body> handshake,
                     std::shared_ptr<websocket_feed> feed) {
  std::make_shared<websocket_session>(srv, std::move(stream), std::move(feed))
      ->start(std::move(handshake));
}

void close_websockets(http_server::impl& srv) {
  const std::vector<websocket_session*> open(srv.websockets.begin(), srv.websockets.end());
  for (websocket_session* s : open) s->going_away();
}

}  // namespace mm::server
