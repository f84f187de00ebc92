// Checks the byte stream a peer sends to CAF 0.17's actor protocol (BASP)
// frame by frame, before CAF reads it. CAF's own checks of a frame header
// (caf::io::basp::valid) are kept; this adds the ones CAF 0.17.6 lacks:
// - a payload above a limit: CAF allocates what a header announces (up to
//   4 GiB) before a byte of it arrives;
// - a handshake with no payload: CAF dereferences the missing payload and
//   the whole process dies (a 32-byte frame is enough);
// - a first frame that is not the client's handshake, and a server
//   handshake from a client: neither belongs on an accepting port;
// - a routed message: it names its sender's node in its payload, so a peer
//   could speak as another node (identity.hpp binds identities to the node
//   of each connection). The server's peers connect to it directly;
// - a down or monitor message, or a later handshake, whose payload does not
//   begin with the bytes of the node id the first handshake announced: CAF
//   reads the sender's node from there, so a forged down message could make
//   the server believe another node's actor had stopped. (CAF serializes a
//   node id the same way each time and reads it from a payload's first
//   bytes, so equal bytes are the same node.)
// A frame is a 32-byte header (operation, two padding bytes, flags, payload
// length, operation data, source and destination actor ids; integers in
// network order) followed by the payload whose length the header gives.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace mm::actors {

class basp_frame_check {
 public:
  static constexpr std::size_t header_size = 32;
  // A client handshake carries the client's node id: a few dozen bytes.
  static constexpr std::uint32_t max_handshake_payload = 4096;

  explicit basp_frame_check(std::uint32_t max_payload) : max_payload_(max_payload) {}

  // Passes the next `n` bytes of the stream through the check. Returns why the
  // stream must be cut (a static string), or nullptr while every header
  // completed so far is acceptable. After a refusal, nothing more is checked.
  const char* feed(const unsigned char* data, std::size_t n);

  // True once the first frame (the handshake) has arrived whole.
  bool greeted() const { return frames_ > 0; }
  std::uint64_t frames() const { return frames_; }

 private:
  const char* check_header() const;

  // What the current payload's bytes are checked against.
  enum class payload_use : std::uint8_t {
    skip,         // not read
    keep_node,    // the first handshake: its bytes are the node's
    begins_node,  // must begin with the node's bytes
    is_node,      // a later handshake: must be the node's bytes exactly
  };
  const char* take_payload(const unsigned char* data, std::size_t n);

  std::uint32_t max_payload_;
  std::array<unsigned char, header_size> header_{};
  std::size_t header_have_ = 0;
  std::uint64_t payload_left_ = 0;
  payload_use use_ = payload_use::skip;
  std::size_t payload_at_ = 0;  // bytes of the current payload seen
  std::string node_;            // the first handshake's payload
  std::uint64_t frames_ = 0;    // frames fully received
  const char* refused_ = nullptr;
};

}  // namespace mm::actors
