#include "mm/actors/ticket_codec.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <cmath>
#include <limits>
#include <vector>

namespace mm::actors {

namespace {

// CAF's binary format cannot carry an infinity (its packing never ends) nor
// a NaN: a non-finite double is written as the largest finite one of its
// sign (NaN as 0) and read back as the infinity.
double storable(double x) {
  if (std::isnan(x)) return 0;
  if (std::isinf(x))
    return x > 0 ? std::numeric_limits<double>::max() : -std::numeric_limits<double>::max();
  return x;
}
double restored(double x) {
  if (x == std::numeric_limits<double>::max()) return std::numeric_limits<double>::infinity();
  if (x == -std::numeric_limits<double>::max()) return -std::numeric_limits<double>::infinity();
  return x;
}

template <class F>
void each_double(session_ticket& t, F f) {
  for (auto& p : t.players) {
    p.mmr = f(p.mmr);
    p.latitude = f(p.latitude);
    p.longitude = f(p.longitude);
    for (auto& n : p.numbers) n.value = f(n.value);
    for (auto& n : p.rtt_ms) n.value = f(n.value);
  }
}
template <class F>
void each_double(ticket_outcome& o, F f) {
  o.match.mmr_spread = f(o.match.mmr_spread);
  o.match.worst_rtt_ms = f(o.match.worst_rtt_ms);
}

template <class T>
std::string encode(T x) {
  each_double(x, storable);
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
  each_double(x, restored);
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
