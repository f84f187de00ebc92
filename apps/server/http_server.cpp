#include "http_server.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <boost/beast/websocket.hpp>
#include <cctype>
#include <future>
#include <limits>
#include <list>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "http_server_impl.hpp"
#include "mm/engine/log.hpp"
#include "websocket_session.hpp"

namespace mm::server {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX becomes the byte; '+' a space in a query. A '%' not followed by two hex
// digits stays as it is.
std::string percent_decoded(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2])));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

void parse_target(std::string_view target, http_request& req) {
  const auto q = target.find('?');
  req.path = percent_decoded(target.substr(0, q), false);
  if (q == std::string_view::npos) return;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (!pair.empty()) {
      const auto eq = pair.find('=');
      req.params.emplace(percent_decoded(pair.substr(0, eq), true),
                         eq == std::string_view::npos ? std::string()
                                                      : percent_decoded(pair.substr(eq + 1), true));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

bool http_request::has_header(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& h) { return same_name(h.first, name); });
}

std::string http_request::header(std::string_view name) const {
  for (const auto& h : headers)
    if (same_name(h.first, name)) return h.second;
  return {};
}

std::string http_request::param(const std::string& name) const {
  const auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

class http_session;

// What a deferred reply needs: the server (kept alive, so a reply that comes
// after stop() gave up on it finds a stopped io_context rather than freed
// memory) and its connection. Declared in this order so that the connection
// is released first, while the server it unregisters from still exists.
struct http_reply::state : http_reply::sink {
  state(std::shared_ptr<http_server::impl> s, std::shared_ptr<http_session> c)
      : srv(std::move(s)), session(std::move(c)) {
    ++srv->replies_owed;
  }
  state(const state&) = delete;
  state& operator=(const state&) = delete;
  ~state() override;
  void deliver(http_response answer) override;

  // True for the first call only: that caller answers, then calls owed_no_more().
  bool claim() { return !answered.exchange(true); }
  void owed_no_more() { --srv->replies_owed; }

  std::shared_ptr<http_server::impl> srv;
  std::shared_ptr<http_session> session;
  std::atomic<bool> answered{false};
};

class http_session : public std::enable_shared_from_this<http_session> {
 public:
  http_session(http_server::impl& srv, tcp::socket socket, std::string address)
      : srv_(srv), stream_(std::move(socket)), address_(std::move(address)) {
    at_ = srv_.all.insert(srv_.all.end(), this);
    ++srv_.per_address[address_];
    ++srv_.stats.open;
  }
  ~http_session() { close(); }

  void start() { next_request(true); }

  // Idempotent: forgets the connection in the server's bookkeeping and closes
  // the socket (pending reads and writes then end with operation_aborted).
  void close() {
    if (closed_) return;
    forget();
    beast::error_code ec;
    stream_.socket().close(ec);
  }

  const std::string& address() const { return address_; }

 private:
  friend class http_reply;
  void start_waiting() { waiting_at_ = srv_.waiting.insert(srv_.waiting.end(), this); }
  void stop_waiting() {
    if (waiting_at_) srv_.waiting.erase(*waiting_at_);
    waiting_at_.reset();
  }

  // Leaves the server's bookkeeping (the socket is closed, or taken).
  void forget() {
    closed_ = true;
    stop_waiting();
    srv_.all.erase(at_);
    if (const auto it = srv_.per_address.find(address_);
        it != srv_.per_address.end() && --it->second == 0)
      srv_.per_address.erase(it);
    --srv_.stats.open;
  }

  // Counts a timeout; every other failure of a read or write just ends the
  // connection (the peer left, or it was evicted or stopped).
  void failed(const beast::error_code& ec) {
    if (ec == beast::error::timeout) ++srv_.stats.timed_out;
    close();
  }

  void next_request(bool first) {
    if (closed_) return;
    start_waiting();
    parser_.emplace();
    parser_->header_limit(srv_.limits.max_header_bytes);
    // The body's length is checked against max_body_bytes by on_head, after
    // the caller is admitted (a 401 comes before a 413); the parser's own
    // check would come first. (Not boost::none: Beast 1.74 compares a length
    // with an empty optional as "over the limit".)
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    if (first || buffer_.size() > 0) return read_head();
    // Between requests: idle until a first byte, then the head's own limit.
    stream_.expires_after(srv_.limits.idle_timeout);
    stream_.async_read_some(buffer_.prepare(1024),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return self->failed(ec);
                              self->buffer_.commit(n);
                              self->read_head();
                            });
  }

  void read_head() {
    stream_.expires_after(srv_.limits.header_timeout);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_head(ec); });
  }

  void on_head(beast::error_code ec) {
    if (closed_) return;
    stop_waiting();
    if (ec == bhttp::error::header_limit) {
      ++srv_.stats.malformed;
      return refuse(431, "the request head is larger than " +
                             std::to_string(srv_.limits.max_header_bytes) + " bytes");
    }
    if (ec == beast::error::timeout || ec == bhttp::error::end_of_stream ||
        ec == asio::error::operation_aborted || ec == asio::error::eof ||
        ec == asio::error::connection_reset)
      return failed(ec);
    if (ec) {
      ++srv_.stats.malformed;
      return refuse(400, "not a well-formed HTTP/1.1 request (" + ec.message() + ")");
    }
    const auto& head = parser_->get();
    req_ = http_request{};
    req_.method = std::string(head.method_string());
    parse_target(std::string_view(head.target().data(), head.target().size()), req_);
    for (const auto& field : head)
      req_.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    req_.remote_address = address_;
    req_.id = request_id_of(req_);
    answering_ = {req_.id, req_.method, req_.path, std::chrono::steady_clock::now()};
    const request_scope in_request(req_.id);
    keep_alive_ = head.keep_alive() && ++served_ < srv_.limits.keep_alive_requests;

    // An answer from the head keeps the connection when no body is left unread.
    if (auto answer = srv_.handlers.admit(req_))
      return send(std::move(*answer), !parser_->is_done());
    if (srv_.handlers.upgrade && beast::websocket::is_upgrade(head)) {
      websocket_answer ws = srv_.handlers.upgrade(req_);
      if (ws.refusal) return send(std::move(*ws.refusal), true);
      if (ws.feed) return become_websocket(std::move(ws.feed));
    }
    if (parser_->chunked() || head.count(bhttp::field::transfer_encoding) != 0)
      return refuse(411,
                    "send the body with a Content-Length (chunked bodies are not accepted; "
                    "at most http.max_body_bytes)");
    const auto length = parser_->content_length();
    if (length && *length > srv_.limits.max_body_bytes)
      return refuse(413, "the body is larger than http.max_body_bytes (" +
                             std::to_string(srv_.limits.max_body_bytes) + " bytes)");
    if (parser_->is_done()) return dispatch();
    if (same_name(std::string(head[bhttp::field::expect]), "100-continue")) {
      static const std::string go_on = "HTTP/1.1 100 Continue\r\n\r\n";
      stream_.expires_after(srv_.limits.body_timeout);
      return asio::async_write(stream_, asio::buffer(go_on),
                               [self = shared_from_this()](beast::error_code e, std::size_t) {
                                 if (e) return self->failed(e);
                                 self->read_body();
                               });
    }
    read_body();
  }

  void read_body() {
    stream_.expires_after(srv_.limits.body_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (self->closed_) return;
                        if (ec == bhttp::error::body_limit)
                          return self->refuse(413, "the body is larger than http.max_body_bytes");
                        if (ec) return self->failed(ec);
                        self->req_.body = std::move(self->parser_->get().body());
                        self->dispatch();
                      });
  }

  // Hands the request to `start`, on this thread. True when it was taken (or
  // failed and was answered): its answer comes back through the reply.
  bool started(http_request& req) {
    auto st = std::make_shared<http_reply::state>(srv_.shared_from_this(), shared_from_this());
    const http_reply reply(st);
    try {
      if (srv_.handlers.start(req, reply)) return true;
    } catch (const std::exception& e) {
      reply(srv_.handlers.error(500, std::string("internal error: ") + e.what()));
      return true;
    } catch (...) {
      reply(srv_.handlers.error(500, "internal error"));
      return true;
    }
    if (st->claim()) st->owed_no_more();  // not taken: nothing is owed
    return false;
  }

  // A small request `start` takes is handed on here, on the network thread;
  // anything else goes to a handler thread (`start` for a large body, else
  // `handle`), whose answer comes back here.
  void dispatch() {
    stream_.expires_never();
    const bool inline_start =
        srv_.handlers.start && req_.body.size() <= srv_.limits.inline_body_bytes;
    if (inline_start && started(req_)) return;
    asio::post(*srv_.handler_pool,
               [self = shared_from_this(), req = std::move(req_), inline_start]() mutable {
                 const request_scope in_request(req.id);
                 if (!inline_start && self->srv_.handlers.start && self->started(req)) return;
                 http_response res;
                 try {
                   res = self->srv_.handlers.handle(req);
                 } catch (const std::exception& e) {
                   res = self->srv_.handlers.error(500, std::string("internal error: ") + e.what());
                 } catch (...) {
                   res = self->srv_.handlers.error(500, "internal error");
                 }
                 asio::post(self->srv_.io, [self, res = std::move(res)]() mutable {
                   self->send(std::move(res), false);
                 });
               });
  }

  // Hands the connection to a WebSocket session; this one ends without
  // closing the socket. (A client sends nothing before the handshake's
  // answer, so no byte is left in the buffer.)
  void become_websocket(std::shared_ptr<websocket_feed> feed) {
    if (srv_.websockets.size() >= srv_.limits.max_websockets) {
      ++srv_.stats.refused;
      feed->closed();
      return refuse(503, "too many WebSocket connections (http.max_websockets): try again later");
    }
    auto handshake = parser_->release();
    beast::tcp_stream stream = std::move(stream_);
    forget();
    if (srv_.handlers.answered) srv_.handlers.answered(101);
    log_answer(101);
    start_websocket(srv_, std::move(stream), std::move(handshake), std::move(feed));
  }

  void log_answer(int status) {
    log_http_answer(answering_, status, address_, srv_.limits.log_requests);
  }

  void refuse(int status, const std::string& message) {
    send(srv_.handlers.error(status, message), true);
  }

  // `close_after`: the request's body (if any) was not read, so the
  // connection cannot carry another request.
  void send(http_response answer, bool close_after) {
    if (closed_) return;
    const bool keep = keep_alive_ && !close_after && srv_.accepting;
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>(
        static_cast<bhttp::status>(answer.status), 11);
    res->set(bhttp::field::content_type, answer.content_type);
    if (!answering_.id.empty()) res->set("X-Request-Id", answering_.id);
    for (const auto& [name, value] : answer.headers) res->insert(name, value);
    res->body() = std::move(answer.body);
    res->keep_alive(keep);
    res->prepare_payload();
    if (srv_.handlers.answered) srv_.handlers.answered(answer.status);
    log_answer(answer.status);
    answering_ = {};
    stream_.expires_after(srv_.limits.body_timeout);
    bhttp::async_write(
        stream_, *res,
        [self = shared_from_this(), res, keep, close_after](beast::error_code ec, std::size_t) {
          if (ec) return self->failed(ec);
          if (keep) return self->next_request(false);
          self->finish(close_after);
        });
  }

  // Ends the connection after an answer. When a body may be left unread, the
  // client is given a moment to finish sending it, so that closing does not
  // reset the connection before the client has read the answer.
  void finish(bool unread_body) {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (!unread_body || ec) return close();
    discarded_ = 0;
    stream_.expires_after(std::min<std::chrono::milliseconds>(srv_.limits.body_timeout,
                                                              std::chrono::milliseconds(2000)));
    drain();
  }

  void drain() {
    stream_.async_read_some(asio::buffer(scratch_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->discarded_ += n;
                              if (ec || self->discarded_ > (1u << 20)) return self->close();
                              self->drain();
                            });
  }

  http_server::impl& srv_;
  beast::tcp_stream stream_;
  std::string address_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  http_request req_;
  answered_request answering_;  // the request being answered: its id, for header and log
  std::uint32_t served_ = 0;
  bool keep_alive_ = false;
  bool closed_ = false;
  std::list<http_session*>::iterator at_;
  std::optional<std::list<http_session*>::iterator> waiting_at_;
  std::array<char, 16 * 1024> scratch_{};
  std::size_t discarded_ = 0;
};

// A reply is owed until it is answered, not until its last copy is gone: a
// handler that keeps an answered reply must hold back neither stop() nor the
// network thread's polling (both wait for replies_owed to reach 0).
void http_reply::state::deliver(http_response answer) {
  state& st = *this;
  if (!st.claim()) return;
  asio::post(st.srv->io,
             [c = st.session, a = std::move(answer)]() mutable { c->send(std::move(a), false); });
  st.owed_no_more();
}

http_reply::state::~state() {
  if (!claim()) return;
  asio::post(srv->io,
             [c = session, a = srv->handlers.error(500, "the request was not answered")]() mutable {
               c->send(std::move(a), false);
             });
  owed_no_more();
}

// The network thread's loop. While a reply is owed it polls for the answer
// for up to `reply_spin` instead of sleeping: an answer from another thread
// then costs no wake-up of this one (on this project's test VMs a wake-up is
// 30-40 µs, more than the query itself). With nothing owed it sleeps in the
// reactor, so an idle server uses no CPU.
void http_server::impl::run_network() {
  using clock = std::chrono::steady_clock;
  while (!io.stopped()) {
    if (limits.reply_spin.count() > 0 && replies_owed.load(std::memory_order_relaxed) > 0) {
      const auto until = clock::now() + limits.reply_spin;
      std::size_t ran = 0;
      while ((ran = io.poll()) == 0 && replies_owed.load(std::memory_order_relaxed) > 0 &&
             clock::now() < until && !io.stopped()) {
      }
      if (ran > 0) continue;
    }
    io.run_one();
  }
}

void http_server::impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (!ec) {
      admit_connection(std::move(socket));
      accept();
      return;
    }
    // Out of file descriptors (EMFILE) and the like: retry a little later
    // rather than spin on the error while connections close.
    ++stats.refused;
    retry_accept.expires_after(std::chrono::milliseconds(20));
    retry_accept.async_wait([this](beast::error_code e) {
      if (!e && acceptor.is_open()) accept();
    });
  });
}

// Closes the connection that has waited longest for a request head (of
// `address` only, when given). False when there is none: all are busy.
bool http_server::impl::evict_one(const std::string* address) {
  for (http_session* s : waiting)
    if (!address || s->address() == *address) {
      ++stats.evicted;
      s->close();
      return true;
    }
  return false;
}

void http_server::impl::admit_connection(tcp::socket socket) {
  beast::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return;
  std::string address = peer.address().to_string();
  ++stats.accepted;
  const auto mine = per_address.find(address);
  const bool address_full =
      mine != per_address.end() && mine->second >= limits.max_connections_per_address;
  const bool server_full = all.size() >= limits.max_connections;
  if ((address_full && !evict_one(&address)) ||
      (!address_full && server_full && !evict_one(nullptr))) {
    ++stats.refused;
    const http_response r = handlers.error(503, "too many connections, all busy: try again");
    const std::string raw =
        "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: " + r.content_type +
        "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n\r\n" + r.body;
    socket.non_blocking(true, ec);
    asio::write(socket, asio::buffer(raw), ec);  // best effort: never waits
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
    if (handlers.answered) handlers.answered(503);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  std::make_shared<http_session>(*this, std::move(socket), std::move(address))->start();
}

http_server::http_server(http_limits limits, http_handlers handlers)
    : impl_(std::make_shared<impl>(limits, std::move(handlers))) {}

http_server::~http_server() {
  stop();
}

const http_connection_stats& http_server::stats() const {
  return impl_->stats;
}

std::uint16_t http_server::listen(const std::string& host, std::uint16_t port) {
  auto& s = *impl_;
  beast::error_code ec;
  // An address, or a name such as "localhost" (its first address).
  tcp::endpoint at;
  if (const auto address = asio::ip::make_address(host, ec); !ec) {
    at = tcp::endpoint(address, port);
  } else {
    tcp::resolver resolver(s.io);
    const auto found = resolver.resolve(host, std::to_string(port), ec);
    if (ec || found.empty())
      throw std::runtime_error("'" + host + "' is not an address of this machine");
    at = found.begin()->endpoint();
  }
  s.acceptor.open(at.protocol(), ec);
  if (!ec) s.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(at, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error("cannot serve HTTP on " + host + ":" + std::to_string(port) + ": " +
                             ec.message());
  const std::uint16_t bound = s.acceptor.local_endpoint().port();
  s.handler_pool =
      std::make_unique<asio::thread_pool>(std::max<std::uint32_t>(1, s.limits.threads));
  s.running = true;
  s.accept();
  s.network_thread = std::thread([&s] { s.run_network(); });
  return bound;
}

void http_server::stop() {
  auto& s = *impl_;
  if (!s.running) return;
  s.running = false;
  // New connections end; open ones close once their current request is answered
  // (the handlers' answers are posted to the network thread, which then closes).
  std::promise<void> closed;
  asio::post(s.io, [&s, &closed] {
    beast::error_code ec;
    s.acceptor.close(ec);
    s.retry_accept.cancel();
    s.accepting = false;
    // Connections waiting for a request have nothing in progress: close now.
    while (!s.waiting.empty()) s.waiting.front()->close();
    close_websockets(s);
    closed.set_value();
  });
  closed.get_future().wait();
  s.handler_pool->join();  // each handler's wait is bounded (query timeout)
  // The last answers are being written, or still owed by `start`'s takers;
  // each closes its connection after.
  const auto deadline =
      std::chrono::steady_clock::now() + s.limits.body_timeout + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < deadline) {
    std::promise<std::size_t> open;
    asio::post(s.io, [&s, &open] { open.set_value(s.all.size() + s.websockets.size()); });
    if (open.get_future().get() == 0 && s.replies_owed == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  s.io.stop();
  s.network_thread.join();
}

std::uint64_t raise_open_file_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
    getrlimit(RLIMIT_NOFILE, &r);
  }
  return r.rlim_cur;
}

}  // namespace mm::server
