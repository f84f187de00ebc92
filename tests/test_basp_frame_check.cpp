// The actor port guard's frame check: every rule at its edge, and a stream of
// acceptable frames passes however it is cut into reads. Frames are made with
// CAF's own serializer (basp_frames.hpp).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "basp_frames.hpp"
#include "mm/actors/basp_frame_check.hpp"
#include "mm/engine/random.hpp"

using namespace mm;
using namespace mm::test;
using mm::actors::basp_frame_check;

namespace {

constexpr std::uint32_t limit = 64 * 1024;

const char* feed(basp_frame_check& check, const std::string& bytes) {
  return check.feed(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

// What one connection's whole stream comes to: nullptr or the refusal.
const char* verdict(const std::string& stream) {
  basp_frame_check check(limit);
  return feed(check, stream);
}

// The node id a peer's handshake announces (its serialized bytes).
const std::string node = std::string(24, 'n') + "!";
const std::string hello = basp_frame(message_type::client_handshake, node);

std::string direct(std::size_t payload_bytes, std::uint64_t dest = 7) {
  return basp_frame(message_type::direct_message, std::string(payload_bytes, 'p'), 0, 0, dest);
}

}  // namespace

TEST_CASE("the frame check reads CAF's header layout: 32 bytes, payload length at byte 4",
          "[actor-port]") {
  const std::string f = direct(0x010203);
  REQUIRE(f.size() == 32 + 0x010203);
  CHECK(static_cast<unsigned char>(f[0]) == 0x02);
  CHECK(static_cast<unsigned char>(f[5]) == 0x01);
  CHECK(static_cast<unsigned char>(f[6]) == 0x02);
  CHECK(static_cast<unsigned char>(f[7]) == 0x03);
}

TEST_CASE("every kind of frame a client sends passes, however the stream is cut into reads",
          "[actor-port]") {
  std::string stream = hello;
  std::uint64_t frames = 1;
  rng r(5);
  for (int i = 0; i < 60; ++i, ++frames) {
    switch (r.below(4)) {
      case 0:
        stream += direct(1 + r.below(3000), 1 + r.below(1000));
        break;
      case 1:
        stream += basp_frame(message_type::monitor_message, node + std::string(15, 'm'), 0, 0, 9);
        break;
      case 2:
        stream += basp_frame(message_type::down_message, node + std::string(15, 'd'), 0, 9, 0);
        break;
      default:
        stream += basp_frame(message_type::heartbeat, "");
        break;
    }
  }
  stream += direct(limit);  // exactly at the limit
  ++frames;

  SECTION("in one read") {
    basp_frame_check check(limit);
    CHECK(feed(check, stream) == nullptr);
    CHECK(check.frames() == frames);
  }
  SECTION("byte by byte") {
    basp_frame_check check(limit);
    for (char c : stream) REQUIRE(feed(check, std::string(1, c)) == nullptr);
    CHECK(check.frames() == frames);
  }
  SECTION("in reads of random sizes, many times over") {
    for (int round = 0; round < 200; ++round) {
      basp_frame_check check(limit);
      std::size_t at = 0;
      while (at < stream.size()) {
        const std::size_t n = std::min<std::size_t>(stream.size() - at, 1 + r.below(700));
        REQUIRE(feed(check, stream.substr(at, n)) == nullptr);
        at += n;
      }
      CHECK(check.frames() == frames);
    }
  }
}

TEST_CASE("the frame check refuses what CAF 0.17.6 must not read", "[actor-port]") {
  SECTION("a down or monitor message naming another node than the handshake's") {
    std::string other = node;
    other[20] = 'x';
    for (const auto type : {message_type::down_message, message_type::monitor_message}) {
      // A down message names its stopped actor as the source; a monitor
      // message, the actor it watches as the destination.
      const bool down = type == message_type::down_message;
      const auto frame = [&](const std::string& payload) {
        return basp_frame(type, payload, 0, down ? 9 : 0, down ? 0 : 9);
      };
      CHECK(verdict(hello + frame(other + "rest")) != nullptr);
      CHECK(verdict(hello + frame(node.substr(0, 10))) != nullptr);  // too short
      CHECK(verdict(hello + frame(node + "rest")) == nullptr);
      // Byte by byte, the forgery is seen at its first differing byte.
      basp_frame_check check(limit);
      const std::string stream = hello + frame(other + "rest");
      std::size_t refused_at = 0;
      for (std::size_t i = 0; i < stream.size() && refused_at == 0; ++i)
        if (feed(check, stream.substr(i, 1)) != nullptr) refused_at = i;
      CHECK(refused_at == hello.size() + 32 + 20);
    }
  }
  SECTION("a later handshake naming another node") {
    std::string other = node;
    other[0] = 'x';
    CHECK(verdict(hello + basp_frame(message_type::client_handshake, other)) != nullptr);
    CHECK(verdict(hello + basp_frame(message_type::client_handshake, node + "x")) != nullptr);
    CHECK(verdict(hello + basp_frame(message_type::client_handshake, node)) == nullptr);
  }
  SECTION("a routed message, which names its own sender's node (a peer could speak as another)") {
    CHECK(verdict(hello + direct(10) +
                  basp_frame(message_type::routed_message, std::string(40, 'r'), 0, 3, 1)) !=
          nullptr);
  }
  SECTION("a handshake without a payload (CAF would dereference the missing payload)") {
    CHECK(verdict(basp_frame(message_type::client_handshake, "")) != nullptr);
    // Also when it comes again after a good one.
    CHECK(verdict(hello + basp_frame(message_type::client_handshake, "")) != nullptr);
  }
  SECTION("a handshake with a payload over 4 KiB, however large the frame limit") {
    basp_frame_check check(1u << 30);
    CHECK(feed(check, basp_frame(message_type::client_handshake, "", 0, 0, 0, 4097)) != nullptr);
    basp_frame_check at_edge(1u << 30);
    CHECK(feed(at_edge, basp_frame(message_type::client_handshake, std::string(4096, 'n'))) ==
          nullptr);
  }
  SECTION("a payload one byte over the limit, refused at its header") {
    basp_frame_check check(limit);
    REQUIRE(feed(check, hello) == nullptr);
    const std::string big = basp_frame(message_type::direct_message, "", 0, 0, 7, limit + 1);
    CHECK(feed(check, big.substr(0, 31)) == nullptr);  // not a whole header yet
    CHECK(feed(check, big.substr(31, 1)) != nullptr);
  }
  SECTION("4 GiB announced") {
    CHECK(verdict(hello + basp_frame(message_type::direct_message, "", 0, 0, 7, 0xffffffffu)) !=
          nullptr);
  }
  SECTION("a first frame that is not the client's handshake") {
    CHECK(verdict(direct(10)) != nullptr);
    CHECK(verdict(basp_frame(message_type::heartbeat, "")) != nullptr);
  }
  SECTION("a server handshake from a connecting peer") {
    CHECK(verdict(basp_frame(message_type::server_handshake, "x", 1)) != nullptr);
    CHECK(verdict(hello + basp_frame(message_type::server_handshake, "x", 1)) != nullptr);
  }
  SECTION("headers CAF's own check refuses") {
    CHECK(verdict(hello + direct(10, 0)) != nullptr);  // no receiver
    CHECK(verdict(hello + direct(0)) != nullptr);      // no payload
    CHECK(verdict(hello + basp_frame(message_type::heartbeat, "", 0, 1)) != nullptr);
    CHECK(verdict(hello + basp_frame(static_cast<message_type>(7), "x")) != nullptr);
    CHECK(verdict(hello + basp_frame(static_cast<message_type>(0xff), "x")) != nullptr);
  }
  SECTION("a refusal stays: nothing after it is checked or let through") {
    basp_frame_check check(limit);
    REQUIRE(feed(check, direct(10)) != nullptr);
    CHECK(feed(check, hello) != nullptr);
    CHECK(check.frames() == 0);
  }
}

TEST_CASE("the first frame counts as the handshake only once all of it has arrived",
          "[actor-port]") {
  basp_frame_check check(limit);
  CHECK_FALSE(check.greeted());
  REQUIRE(feed(check, hello.substr(0, hello.size() - 1)) == nullptr);
  CHECK_FALSE(check.greeted());
  REQUIRE(feed(check, hello.substr(hello.size() - 1)) == nullptr);
  CHECK(check.greeted());
}
