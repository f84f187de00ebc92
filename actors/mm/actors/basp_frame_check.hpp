// Checks the byte stream a peer sends to CAF 0.17's actor protocol (BASP)
// frame by frame, before CAF reads it. CAF's own checks of a frame header
// (caf::io::basp::valid) are kept; this adds the ones CAF 0.17.6 lacks:
// - a payload above a limit: CAF allocates what a header announces (up to
//   4 GiB) before a byte of it arrives;
// - a handshake with no payload: CAF dereferences the missing payload and
//   the whole process dies (a 32-byte frame is enough);
// - a first frame that is not the client's handshake, and a server
//   handshake from a client: neither belongs on an accepting port.
// A frame is a 32-byte header (operation, two padding bytes, flags, payload
// length, operation data, source and destination actor ids; integers in
// network order) followed by the payload whose length the header gives.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

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

  std::uint32_t max_payload_;
  std::array<unsigned char, header_size> header_{};
  std::size_t header_have_ = 0;
  std::uint64_t payload_left_ = 0;
  std::uint64_t frames_ = 0;  // frames fully received
  const char* refused_ = nullptr;
};

}  // namespace mm::actors
