#include "mm/actors/ticket_codec.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <vector>

namespace mm::actors {

namespace {

template <class T>
std::string encode(T x) {
  std::vector<char> buf{ticket_codec_version};
  caf::binary_serializer sink{nullptr, buf};
  if (auto err = sink(x)) return {};
  return std::string(buf.begin(), buf.end());
}

template <class T>
std::optional<T> decode(const std::string& bytes) {
  if (bytes.empty() || bytes[0] != ticket_codec_version) return std::nullopt;
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr), bytes.data() + 1,
                                  bytes.size() - 1};
  T x;
  if (auto err = source(x)) return std::nullopt;
  if (source.remaining() != 0) return std::nullopt;
  return x;
}

}  // namespace

std::string encode_ticket(const session_ticket& t) {
  return encode(t);
}
std::optional<session_ticket> decode_ticket(const std::string& bytes) {
  return decode<session_ticket>(bytes);
}
std::string encode_outcome(const ticket_outcome& o) {
  return encode(o);
}
std::optional<ticket_outcome> decode_outcome(const std::string& bytes) {
  return decode<ticket_outcome>(bytes);
}

}  // namespace mm::actors
