// The HTTP server's WebSockets, with a toy feed: capped in number, client
// messages bounded, a client that takes nothing cut off, and a stop that
// closes them all.
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "client/event_client.hpp"
#include "http_server.hpp"
#include "toy_handlers.hpp"

using namespace mm::server;
using namespace std::chrono_literals;

namespace {

// Says hello, echoes what it receives; after "flood", sends 64 KiB messages
// without end, and asks to close (4008) when woken while one is being written.
struct toy_feed : websocket_feed {
  struct wake_slot {
    std::mutex mutex;
    std::function<void()> wake;
  };
  std::atomic<int>* closed_count;
  wake_slot* slot;
  bool flooding = false;
  toy_feed(std::atomic<int>* c, wake_slot* w) : closed_count(c), slot(w) {}

  step opened(std::function<void()> wake) override {
    std::lock_guard lock(slot->mutex);
    slot->wake = std::move(wake);
    return {{"hello"}, std::nullopt};
  }
  step next(std::size_t max) override {
    step s;
    if (!flooding) return s;
    if (max == 0) {
      s.close.emplace(4008, "slow consumer");
      return s;
    }
    for (std::size_t i = 0; i < max; ++i) s.messages.emplace_back(64 * 1024, 'x');
    return s;
  }
  step received(std::string_view text) override {
    if (text == "flood") flooding = true;
    return {{"echo:" + std::string(text)}, std::nullopt};
  }
  void closed() override { ++*closed_count; }
};

struct toy_server {
  std::atomic<int> closed{0};
  toy_feed::wake_slot last;  // the last connection's wake-up

  // Calls the last connection's wake-up; false while there is none.
  bool wake() {
    std::lock_guard lock(last.mutex);
    if (!last.wake) return false;
    last.wake();
    return true;
  }
  std::unique_ptr<http_server> server;
  std::uint16_t port = 0;

  explicit toy_server(http_limits limits) {
    http_handlers h;
    h.admit = [](http_request&) -> std::optional<http_response> { return std::nullopt; };
    h.handle = [](http_request& req) {
      http_response r;
      r.body = "plain " + req.path;
      return r;
    };
    h.error = mm::test::plain_error;
    h.upgrade = [this](http_request& req) -> websocket_answer {
      if (req.path == "/refused") {
        http_response r;
        r.status = 429;
        r.body = "too many";
        return {nullptr, r};
      }
      if (req.path != "/api/events") return {};
      return {std::make_shared<toy_feed>(&closed, &last), std::nullopt};
    };
    server = std::make_unique<http_server>(limits, h);
    port = server->listen("127.0.0.1", 0);
  }

  mm::client::event_connect at() const {
    mm::client::event_connect c;
    c.port = port;
    return c;
  }
};

template <class Predicate>
bool eventually(Predicate holds, std::chrono::milliseconds within = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!holds()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);  // polling counts the network thread updates
  }
  return true;
}

}  // namespace

TEST_CASE("WebSockets past http.max_websockets get 503, and a place frees when one closes",
          "[http][websocket]") {
  http_limits limits;
  limits.max_websockets = 2;
  toy_server toy(limits);
  auto a = std::make_unique<mm::client::event_client>(toy.at());
  mm::client::event_client b(toy.at());
  CHECK(a->next(2s) == "hello");
  CHECK(b.next(2s) == "hello");
  try {
    mm::client::event_client c(toy.at());
    FAIL("a third WebSocket was accepted");
  } catch (const mm::client::event_client_error& e) {
    CHECK(e.http_status == 503);
  }
  a->close();
  a.reset();
  REQUIRE(eventually([&] { return toy.server->stats().websockets.load() == 1; }));
  mm::client::event_client d(toy.at());
  CHECK(d.next(2s) == "hello");
  d.send("ping");
  CHECK(d.next(2s) == "echo:ping");
  // A refusal from the handshake's handler is an HTTP answer.
  mm::client::event_connect refused = toy.at();
  refused.path = "/refused";
  try {
    mm::client::event_client e(refused);
    FAIL("the refused handshake was accepted");
  } catch (const mm::client::event_client_error& e) {
    CHECK(e.http_status == 429);
  }
}

TEST_CASE("a client message over the limit closes with 1009 and the server serves on",
          "[http][websocket]") {
  http_limits limits;
  limits.max_websocket_message_bytes = 4096;
  toy_server toy(limits);
  mm::client::event_client c(toy.at());
  CHECK(c.next(2s) == "hello");
  c.send(std::string(5000, 'y'));
  std::optional<std::string> got;
  REQUIRE(eventually([&] {
    got = c.next(50ms);
    return c.closed().has_value();
  }));
  CHECK(c.closed()->first == 1009);
  CHECK(eventually([&] { return toy.closed.load() == 1; }));
  mm::client::event_client again(toy.at());
  CHECK(again.next(2s) == "hello");
}

TEST_CASE("a WebSocket client that reads nothing is cut off, never held", "[http][websocket]") {
  toy_server toy(http_limits{});
  mm::client::event_client c(toy.at());
  CHECK(c.next(2s) == "hello");
  c.send("flood");  // from now on the client reads nothing: the socket's buffers fill
  // Woken while a write is stuck, the feed asks to close; the close frame
  // cannot get through either, and the connection is cut within the grace.
  REQUIRE(eventually([&] { return toy.wake(); }));
  const auto start = std::chrono::steady_clock::now();
  CHECK(eventually(
      [&] {
        toy.wake();
        std::this_thread::sleep_for(20ms);
        return toy.closed.load() == 1;
      },
      20s));
  CHECK(std::chrono::steady_clock::now() - start < 15s);
  CHECK(toy.server->stats().websockets.load() == 0);
}

TEST_CASE("stopping the server closes its WebSockets with 1001 at once", "[http][websocket]") {
  toy_server toy(http_limits{});
  mm::client::event_client a(toy.at());
  mm::client::event_client b(toy.at());
  CHECK(a.next(2s) == "hello");
  CHECK(b.next(2s) == "hello");
  std::thread reader([&] {
    while (!a.closed()) a.next(50ms);
  });
  const auto start = std::chrono::steady_clock::now();
  toy.server->stop();
  CHECK(std::chrono::steady_clock::now() - start < 4s);  // b reads nothing: cut after the grace
  reader.join();
  CHECK(a.closed()->first == 1001);
  CHECK(toy.closed.load() == 2);
}
