#include "mm/actors/basp_frame_check.hpp"

#include <algorithm>
#include <caf/io/basp/header.hpp>

namespace mm::actors {

namespace {

static_assert(basp_frame_check::header_size == caf::io::basp::header_size,
              "the frame layout follows CAF 0.17's BASP header");

std::uint64_t big_endian(const unsigned char* p, int bytes) {
  std::uint64_t x = 0;
  for (int i = 0; i < bytes; ++i) x = (x << 8) | p[i];
  return x;
}

}  // namespace

const char* basp_frame_check::check_header() const {
  using caf::io::basp::message_type;
  const unsigned char* h = header_.data();
  caf::io::basp::header hdr{static_cast<message_type>(h[0]),
                            h[3],
                            static_cast<std::uint32_t>(big_endian(h + 4, 4)),
                            big_endian(h + 8, 8),
                            big_endian(h + 16, 8),
                            big_endian(h + 24, 8)};
  if (frames_ == 0 && hdr.operation != message_type::client_handshake)
    return "the first frame is not a client handshake";
  if (hdr.operation == message_type::server_handshake)
    return "a server handshake from a connecting peer";
  if (!caf::io::basp::valid(hdr)) return "a frame header the actor protocol does not accept";
  if (hdr.operation == message_type::client_handshake &&
      (hdr.payload_len == 0 || hdr.payload_len > max_handshake_payload))
    return "a handshake frame without a payload or with an oversized one";
  if (hdr.payload_len > max_payload_) return "a frame larger than actor.max_frame_bytes";
  return nullptr;
}

const char* basp_frame_check::feed(const unsigned char* data, std::size_t n) {
  while (n > 0 && refused_ == nullptr) {
    if (payload_left_ > 0) {
      const auto skip = static_cast<std::size_t>(std::min<std::uint64_t>(payload_left_, n));
      payload_left_ -= skip;
      data += skip;
      n -= skip;
      if (payload_left_ == 0) ++frames_;
      continue;
    }
    const std::size_t take = std::min(n, header_size - header_have_);
    std::copy(data, data + take, header_.data() + header_have_);
    header_have_ += take;
    data += take;
    n -= take;
    if (header_have_ < header_size) break;
    header_have_ = 0;
    if ((refused_ = check_header()) != nullptr) break;
    payload_left_ = big_endian(header_.data() + 4, 4);
    if (payload_left_ == 0) ++frames_;
  }
  return refused_;
}

}  // namespace mm::actors
