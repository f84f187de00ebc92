#include "mm/actors/ticket_codec.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <cmath>
#include <limits>
#include <type_traits>
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
template <class F>
void each_double(backfill_state& b, F f) {
  for (auto& team : b.registration.teams) {
    session_ticket as_party;
    as_party.players = std::move(team);
    each_double(as_party, f);
    team = std::move(as_party.players);
  }
  for (auto& r : b.reservations)
    for (auto& m : r.mmr) m = f(m);
}

// An outcome as version 1 wrote it: its match without backfill's fields,
// and no to_game_server.
struct v1_match {
  session_match& m;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, v1_match& x) {
  auto& m = x.m;
  return f(m.id, m.queue, m.datacenter, m.teams, m.tickets, m.mmr_spread, m.worst_rtt_ms,
           m.bot_match, m.formed_at_ms);
}
struct v1_outcome {
  ticket_outcome o;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, v1_outcome& x) {
  auto& o = x.o;
  v1_match m{o.match};
  return f(o.queue, o.ticket, o.state, m, o.credential, o.seq, o.at_unix_ms);
}

template <class T>
std::string encode(T x) {
  each_double(x, storable);
  std::vector<char> buf{ticket_codec_version};
  caf::binary_serializer sink{nullptr, buf};
  if (auto err = sink(x)) return {};
  return std::string(buf.begin(), buf.end());
}

// `As` is the layout of version `version`; its bytes are read whole or not at all.
template <class As>
std::optional<As> read_as(const std::string& bytes, char version) {
  if (bytes.empty() || bytes[0] != version) return std::nullopt;
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr), bytes.data() + 1,
                                  bytes.size() - 1};
  As x;
  if (auto err = source(x)) return std::nullopt;
  if (source.remaining() != 0) return std::nullopt;
  return x;
}

template <class T>
std::optional<T> decode(const std::string& bytes) {
  auto x = read_as<T>(bytes, ticket_codec_version);
  if constexpr (std::is_same_v<T, ticket_outcome>) {
    if (!x)
      if (auto old = read_as<v1_outcome>(bytes, 1)) x = std::move(old->o);
  } else if constexpr (std::is_same_v<T, session_ticket>) {
    if (!x) x = read_as<T>(bytes, 1);  // the same layout in both versions
  }
  if (x) each_double(*x, restored);
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
std::string encode_backfill(const backfill_state& b) {
  return encode(b);
}
std::optional<backfill_state> decode_backfill(const std::string& bytes) {
  return decode<backfill_state>(bytes);
}

}  // namespace mm::actors
