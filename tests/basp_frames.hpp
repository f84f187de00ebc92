// Frames of CAF 0.17's actor protocol (BASP) made with CAF's own serializer,
// for the tests of the actor port's guard: the layout the guard reads is
// checked against the one CAF writes.
#pragma once

#include <caf/binary_serializer.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/node_id.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace mm::test {

using caf::io::basp::message_type;

// A frame: the header (its payload_len set to the payload's size unless
// `claimed` is given) followed by the payload.
inline std::string basp_frame(message_type op, const std::string& payload,
                              std::uint64_t operation_data = 0, std::uint64_t source_actor = 0,
                              std::uint64_t dest_actor = 0, std::int64_t claimed = -1) {
  caf::io::basp::header hdr{op,
                            0,
                            static_cast<std::uint32_t>(claimed >= 0 ? claimed : payload.size()),
                            operation_data,
                            source_actor,
                            dest_actor};
  std::vector<char> buf;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), buf};
  if (auto err = sink(hdr)) return {};
  return std::string(buf.begin(), buf.end()) + payload;
}

// The handshake a connecting node sends: its node id.
inline std::string basp_client_handshake(caf::node_id node) {
  std::vector<char> buf;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), buf};
  if (auto err = sink(node)) return {};
  return basp_frame(message_type::client_handshake, std::string(buf.begin(), buf.end()));
}

}  // namespace mm::test
