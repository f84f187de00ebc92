#include "query_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace mm::server {

namespace {

// A cursor over the body; every reader returns false for what it does not
// take, and the whole body is then left to the tree.
class plain_reader {
 public:
  explicit plain_reader(std::string_view text) : s_(text) {}

  void space() {
    while (at_ < s_.size() &&
           (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r'))
      ++at_;
  }
  bool take(char c) {
    space();
    if (at_ >= s_.size() || s_[at_] != c) return false;
    ++at_;
    return true;
  }
  bool peek(char c) {
    space();
    return at_ < s_.size() && s_[at_] == c;
  }
  bool done() {
    space();
    return at_ == s_.size();
  }
  // A string without escapes or control characters.
  bool key(std::string_view& out) {
    if (!take('"')) return false;
    const std::size_t from = at_;
    while (at_ < s_.size() && s_[at_] != '"') {
      const auto c = static_cast<unsigned char>(s_[at_]);
      if (c == '\\' || c < 0x20) return false;
      ++at_;
    }
    if (at_ >= s_.size()) return false;
    out = s_.substr(from, at_ - from);
    ++at_;
    return true;
  }
  // Digits only, as JSON writes a non-negative integer (no leading zero).
  bool unsigned_integer(std::uint64_t& out) {
    space();
    const std::size_t from = at_;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
    const std::size_t n = at_ - from;
    if (n == 0 || (n > 1 && s_[from] == '0') || (at_ < s_.size() && is_number_part(s_[at_])))
      return false;
    const auto [end, ec] = std::from_chars(s_.data() + from, s_.data() + at_, out);
    return ec == std::errc() && end == s_.data() + at_;
  }
  // A JSON number, read as the tree reads it (correctly rounded), finite.
  bool number(double& out) {
    space();
    const std::size_t from = at_;
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    const std::size_t int_from = at_;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
    if (at_ == int_from || (at_ - int_from > 1 && s_[int_from] == '0')) return false;
    bool integer = true;  // the tree keeps "-0" as the integer 0, so +0.0
    if (at_ < s_.size() && s_[at_] == '.') {
      integer = false;
      const std::size_t frac = ++at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      if (at_ == frac) return false;
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      integer = false;
      ++at_;
      if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      const std::size_t exp = at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      if (at_ == exp) return false;
    }
    if (at_ < s_.size() && is_number_part(s_[at_])) return false;
    const auto [end, ec] = std::from_chars(s_.data() + from, s_.data() + at_, out);
    if (integer && out == 0) out = 0.0;
    return ec == std::errc() && end == s_.data() + at_ && std::isfinite(out);
  }

 private:
  static bool is_number_part(char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  }
  std::string_view s_;
  std::size_t at_ = 0;
};

bool read_u32(plain_reader& r, std::uint32_t& out) {
  std::uint64_t x = 0;
  if (!r.unsigned_integer(x) || x > std::numeric_limits<std::uint32_t>::max()) return false;
  out = static_cast<std::uint32_t>(x);
  return true;
}

bool read_id(plain_reader& r, player_id& out) {
  std::uint64_t x = 0;
  if (!r.unsigned_integer(x) || x == 0) return false;
  out = x;
  return true;
}

template <class Array>
bool read_attributes(plain_reader& r, const generic_profile_config& p, Array& out) {
  if (r.take('[')) {
    std::size_t n = 0;
    if (r.take(']')) return true;
    do {
      if (n == out.size() || !read_u32(r, out[n])) return false;
      ++n;
    } while (r.take(','));
    return r.take(']');
  }
  if (!r.take('{')) return false;
  if (r.take('}')) return true;
  std::uint64_t seen = 0;  // bits by attribute (a profile has at most 64 attributes)
  do {
    std::string_view name;
    if (!r.key(name) || !r.take(':')) return false;
    std::size_t i = 0;
    while (i < p.attributes.size() && p.attributes[i].name != name) ++i;
    if (i == p.attributes.size() || i >= 64 || (seen >> i & 1) || !read_u32(r, out[i]))
      return false;
    seen |= std::uint64_t{1} << i;
  } while (r.take(','));
  return r.take('}');
}

// JSON's text of a number as the tree writes it (nlohmann's own shortest
// round-trip form for doubles).
void put_double(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  char buf[64];
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, end);
}

void put_unsigned(std::string& out, std::uint64_t x) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  (void)ec;
  out.append(buf, end);
}

bool plain_name(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
}

}  // namespace

std::optional<query_body> read_plain_query(std::string_view text, const generic_profile_config& p) {
  plain_reader r(text);
  query_body out;
  auto& q = out.request.query;
  bool attacker = false, mmr = false, attributes = false, retries = false, excluded = false;
  if (!r.take('{')) return std::nullopt;
  if (r.peek('}')) return std::nullopt;  // missing fields: the tree names them
  do {
    std::string_view key;
    if (!r.key(key) || !r.take(':')) return std::nullopt;
    if (key == "attacker_id" && !attacker) {
      attacker = read_id(r, q.attacker);
      if (!attacker) return std::nullopt;
    } else if (key == "mmr" && !mmr) {
      double x = 0;
      if (!r.number(x) || mmr_problem(x)) return std::nullopt;
      q.mmr = static_cast<float>(x);
      mmr = true;
    } else if (key == "attributes" && !attributes) {
      if (!read_attributes(r, p, q.attributes)) return std::nullopt;
      attributes = true;
    } else if (key == "retries" && !retries) {
      if (!read_u32(r, out.request.num_retries)) return std::nullopt;
      retries = true;
    } else if (key == "excluded_ids" && !excluded) {
      if (!r.take('[')) return std::nullopt;
      if (!r.take(']')) {
        do {
          player_id id = 0;
          if (!read_id(r, id)) return std::nullopt;
          out.request.excluded_player_ids.push_back(id);
        } while (r.take(','));
        if (!r.take(']')) return std::nullopt;
      }
      excluded = true;
    } else {
      return std::nullopt;
    }
  } while (r.take(','));
  if (!r.take('}') || !r.done() || !attacker || !mmr) return std::nullopt;
  return out;
}

std::optional<std::string> reply_text(const match_reply<generic_model>& r,
                                      const generic_profile_config& p) {
  if (!r.error.empty()) return std::nullopt;
  for (const auto& a : p.attributes)
    if (!plain_name(a.name)) return std::nullopt;
  // The tree's keys are in byte order: best_candidate_id, model,
  // players_tested, quality, result; the model's attributes, id, mmr.
  std::string out;
  out.reserve(160);
  out += "{\"best_candidate_id\":";
  put_unsigned(out, r.best_candidate_id);
  if (r.has_model) {
    std::vector<std::size_t> order(p.attributes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return p.attributes[a].name < p.attributes[b].name;
    });
    out += ",\"model\":{\"attributes\":{";
    for (std::size_t k = 0; k < order.size(); ++k) {
      if (k > 0) out += ',';
      out += '"';
      out += p.attributes[order[k]].name;
      out += "\":";
      put_unsigned(out, r.model.attributes[order[k]]);
    }
    out += "},\"id\":";
    put_unsigned(out, r.model.id());
    out += ",\"mmr\":";
    put_double(out, static_cast<double>(r.model.mmr));
    out += '}';
  }
  out += ",\"players_tested\":";
  put_unsigned(out, r.players_tested);
  out += ",\"quality\":";
  put_double(out, static_cast<double>(r.quality));
  out += ",\"result\":\"";
  out += to_string(r.type);
  out += "\"}";
  return out;
}

}  // namespace mm::server
