// The snapshot payload (docs/design.md, Persistence): what an instance persists so a restart is
// warm.
//
// Layout: "MMSS" | version u32 | body length u64 | FNV-1a 64 of the body | body,
// integers little-endian, the body a cereal portable-binary archive. The
// checksum makes any truncation or corruption a decode error before cereal
// reads a byte, so a damaged payload can never be half-applied.
//
// The game's model type must be serializable by cereal (a `serialize(Archive&)`
// member or free function); the generic model is.
#pragma once

#include <algorithm>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "mm/engine/label_tuple.hpp"
#include "mm/engine/sizing.hpp"
#include "mm/engine/stable_hash.hpp"

namespace mm {

// 1: sizing, cache size, last rebalance, strategy states, players.
// 2: the same, then the bucket layout (labels, capacity, slot seed).
inline constexpr std::uint32_t snapshot_version = 2;

template <class Model>
struct engine_snapshot {
  sizing_model sizing;
  std::uint32_t player_cache_size = 0;  // when the snapshot was taken
  std::int64_t last_rebalance_unix_ms = 0;
  std::vector<std::pair<std::string, std::string>> strategy_states;  // name -> bytes
  std::vector<Model> players;          // a proportional sample of the cache
  std::vector<bucket_layout> buckets;  // empty in a version 1 snapshot
};

struct decode_error {
  std::string reason;
};

template <class Archive>
void serialize(Archive& ar, label_tuple& t) {
  ar(t.mmr_index, t.extra_count);
  if (t.extra_count > max_extra_strategies) throw std::runtime_error("too many labels in a tuple");
  for (std::uint32_t i = 0; i < t.extra_count; ++i) ar(t.extra[i]);
}

template <class Archive>
void serialize(Archive& ar, bucket_layout& b) {
  ar(b.labels, b.capacity, b.seed);
}

namespace detail {
inline void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline std::uint64_t get_u64(std::string_view in, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return v;
}
inline constexpr std::size_t header_size = 4 + 4 + 8 + 8;

// Reads lengths from a payload without trusting them: a length is checked
// against the bytes left before anything is allocated, so a crafted
// "10 million players" in a small payload is an error, not a memory spike.
// The encoding is cereal's own for vectors and strings.
class bounded_reader {
 public:
  bounded_reader(cereal::PortableBinaryInputArchive& ar, std::istream& in, std::size_t size)
      : ar_(ar), in_(in), size_(size) {}

  // A vector whose elements take at least min_bytes each when encoded.
  template <class T>
  void vector(std::vector<T>& v, std::size_t min_bytes) {
    v.resize(length(min_bytes));
    for (T& x : v) ar_(x);
  }
  void string(std::string& s) {
    s.resize(length(1));
    if (!s.empty()) ar_(cereal::binary_data(s.data(), s.size()));
  }
  void string_pairs(std::vector<std::pair<std::string, std::string>>& v) {
    v.resize(length(2 * sizeof(cereal::size_type)));
    for (auto& [a, b] : v) {
      string(a);
      string(b);
    }
  }

 private:
  std::size_t length(std::size_t min_bytes) {
    cereal::size_type n = 0;
    ar_(cereal::make_size_tag(n));
    const auto at = static_cast<std::size_t>(in_.tellg());
    const std::size_t left = at <= size_ ? size_ - at : 0;
    if (n > left / std::max<std::size_t>(min_bytes, 1))
      throw std::runtime_error("a length of " + std::to_string(n) + " does not fit in the " +
                               std::to_string(left) + " bytes left");
    return static_cast<std::size_t>(n);
  }

  cereal::PortableBinaryInputArchive& ar_;
  std::istream& in_;
  std::size_t size_;
};

// The fewest bytes one encoded T can take (that of a value-initialised one:
// variable-length parts are empty there).
template <class T>
std::size_t min_encoded_size() {
  std::ostringstream out;
  {
    cereal::PortableBinaryOutputArchive ar(out);
    T x{};
    ar(x);
  }
  return out.str().size() - 1;  // less the archive's one-byte endianness header
}
}  // namespace detail

template <class Model>
std::string encode_snapshot(const engine_snapshot<Model>& s) {
  std::ostringstream body_stream;
  {
    cereal::PortableBinaryOutputArchive ar(body_stream);
    // Sorted, so the same state always encodes to the same bytes.
    std::vector<std::pair<label_tuple, double>> ratios(s.sizing.ratios.begin(),
                                                       s.sizing.ratios.end());
    std::sort(ratios.begin(), ratios.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    ar(s.sizing.mmr_low, s.sizing.mmr_high, s.sizing.player_cache_size, s.sizing.sample_count,
       s.sizing.computed_at_unix_ms, ratios);
    ar(s.player_cache_size, s.last_rebalance_unix_ms, s.strategy_states, s.players);
    ar(s.buckets);
  }
  const std::string body = body_stream.str();
  std::string out = "MMSS";
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((snapshot_version >> (8 * i)) & 0xff));
  detail::put_u64(out, body.size());
  detail::put_u64(out, fnv1a64(body));
  out += body;
  return out;
}

// The snapshot, or why the payload cannot be used. Never throws.
template <class Model, class IsValidModel>
std::variant<engine_snapshot<Model>, decode_error> decode_snapshot(std::string_view in,
                                                                   IsValidModel valid_model) {
  using detail::header_size;
  if (in.size() < header_size) return decode_error{"payload shorter than its header"};
  if (in.substr(0, 4) != "MMSS") return decode_error{"not a matchmaker snapshot (bad magic)"};
  std::uint32_t version = 0;
  for (int i = 0; i < 4; ++i)
    version |= std::uint32_t{static_cast<unsigned char>(in[4 + i])} << (8 * i);
  if (version > snapshot_version)
    return decode_error{"snapshot version " + std::to_string(version) +
                        " is newer than this build's " + std::to_string(snapshot_version)};
  if (version == 0) return decode_error{"snapshot version 0 does not exist"};
  const std::uint64_t length = detail::get_u64(in, 8);
  if (length != in.size() - header_size)
    return decode_error{"payload length " + std::to_string(in.size() - header_size) +
                        " differs from the recorded " + std::to_string(length) + " (truncated?)"};
  const std::string_view body = in.substr(header_size);
  if (fnv1a64(body) != detail::get_u64(in, 16)) return decode_error{"checksum mismatch (corrupt)"};

  engine_snapshot<Model> s;
  try {
    std::istringstream is{std::string(body)};
    cereal::PortableBinaryInputArchive ar(is);
    detail::bounded_reader read(ar, is, body.size());
    std::vector<std::pair<label_tuple, double>> ratios;
    ar(s.sizing.mmr_low, s.sizing.mmr_high, s.sizing.player_cache_size, s.sizing.sample_count,
       s.sizing.computed_at_unix_ms);
    read.vector(ratios, 2 * sizeof(std::uint32_t) + sizeof(double));
    ar(s.player_cache_size, s.last_rebalance_unix_ms);
    read.string_pairs(s.strategy_states);
    read.vector(s.players, detail::min_encoded_size<Model>());
    if (version >= 2) read.vector(s.buckets, 2 * sizeof(std::uint32_t) + 4 + 8);
    s.sizing.ratios.insert(ratios.begin(), ratios.end());
    if (is.peek() != std::char_traits<char>::eof()) return decode_error{"trailing bytes"};
  } catch (const std::exception& e) {
    return decode_error{std::string("cannot decode: ") + e.what()};
  }
  // A checksum proves the bytes are the ones written, not that the writer was
  // sane: check what the engine relies on.
  const auto& z = s.sizing;
  if (!std::isfinite(z.mmr_low) || !std::isfinite(z.mmr_high) ||
      (!z.ratios.empty() && !(z.mmr_low < z.mmr_high)))
    return decode_error{"sizing model has an invalid MMR range"};
  for (const auto& [t, share] : z.ratios)
    if (!(share >= 0 && share <= 1)) return decode_error{"sizing model has a share outside [0, 1]"};
  for (const Model& m : s.players)
    if (!valid_model(m)) return decode_error{"a cached player has id 0 or a non-finite MMR"};
  for (const bucket_layout& b : s.buckets)
    if (b.capacity == 0) return decode_error{"a bucket has capacity 0"};
  return s;
}

}  // namespace mm
