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
  if (hdr.operation == message_type::routed_message)
    return "a relayed (routed) message: a peer of this port sends only its own";
  if (hdr.operation == message_type::client_handshake &&
      (hdr.payload_len == 0 || hdr.payload_len > max_handshake_payload))
    return "a handshake frame without a payload or with an oversized one";
  if (hdr.payload_len > max_payload_) return "a frame larger than actor.max_frame_bytes";
  return nullptr;
}

// Checks (or keeps) the payload's next `n` bytes, as its use says.
const char* basp_frame_check::take_payload(const unsigned char* data, std::size_t n) {
  const char* forged = "a frame naming another node than its connection's handshake";
  switch (use_) {
    case payload_use::skip:
      break;
    case payload_use::keep_node:
      node_.append(reinterpret_cast<const char*>(data), n);
      break;
    case payload_use::begins_node:
    case payload_use::is_node:
      for (std::size_t i = 0; i < n && payload_at_ + i < node_.size(); ++i)
        if (static_cast<unsigned char>(node_[payload_at_ + i]) != data[i]) return forged;
      break;
  }
  payload_at_ += n;
  return nullptr;
}

const char* basp_frame_check::feed(const unsigned char* data, std::size_t n) {
  while (n > 0 && refused_ == nullptr) {
    if (payload_left_ > 0) {
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(payload_left_, n));
      if ((refused_ = take_payload(data, take)) != nullptr) break;
      payload_left_ -= take;
      data += take;
      n -= take;
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
    payload_at_ = 0;
    using caf::io::basp::message_type;
    switch (static_cast<message_type>(header_[0])) {
      case message_type::client_handshake:
        use_ = frames_ == 0 ? payload_use::keep_node : payload_use::is_node;
        if (use_ == payload_use::is_node && payload_left_ != node_.size())
          refused_ = "a handshake naming another node than the connection's first";
        break;
      case message_type::down_message:
      case message_type::monitor_message:
        use_ = payload_use::begins_node;
        if (payload_left_ < node_.size()) refused_ = "a frame too short to name its node";
        break;
      default:
        use_ = payload_use::skip;
    }
    if (refused_ != nullptr) break;
    if (payload_left_ == 0) ++frames_;
  }
  return refused_;
}

}  // namespace mm::actors
