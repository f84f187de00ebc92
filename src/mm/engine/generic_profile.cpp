#include "mm/engine/generic_profile.hpp"

#include <limits>

#include "mm/strategies/attribute_strategy.hpp"

namespace mm {

namespace {
template <class E, std::size_t N>
std::optional<E> parse_enum(std::string_view s, const std::array<E, N>& all) {
  for (E e : all)
    if (to_string(e) == s) return e;
  return std::nullopt;
}
}  // namespace

std::string_view to_string(attribute_rule r) {
  switch (r) {
    case attribute_rule::none:
      return "none";
    case attribute_rule::hard_equal:
      return "hard_equal";
    case attribute_rule::must_differ:
      return "must_differ";
    case attribute_rule::prefer_equal:
      return "prefer_equal";
    case attribute_rule::prefer_different:
      return "prefer_different";
  }
  return "?";
}

std::optional<attribute_rule> parse_attribute_rule(std::string_view s) {
  return parse_enum(
      s, std::array{attribute_rule::none, attribute_rule::hard_equal, attribute_rule::must_differ,
                    attribute_rule::prefer_equal, attribute_rule::prefer_different});
}

std::string_view to_string(attribute_bucketing b) {
  switch (b) {
    case attribute_bucketing::none:
      return "none";
    case attribute_bucketing::distinct_hard:
      return "distinct_hard";
    case attribute_bucketing::distinct_soft:
      return "distinct_soft";
    case attribute_bucketing::ranged:
      return "ranged";
  }
  return "?";
}

std::optional<attribute_bucketing> parse_attribute_bucketing(std::string_view s) {
  return parse_enum(s, std::array{attribute_bucketing::none, attribute_bucketing::distinct_hard,
                                  attribute_bucketing::distinct_soft, attribute_bucketing::ranged});
}

generic_profile::generic_profile(generic_profile_config c) : c_(std::move(c)) {
  if (c_.attributes.size() > generic_attribute_count)
    throw config_error("the generic profile has at most " +
                       std::to_string(generic_attribute_count) + " attributes, " +
                       std::to_string(c_.attributes.size()) + " configured");
  if (!std::isfinite(c_.mmr_window) || c_.mmr_window < 0 ||
      !std::isfinite(c_.mmr_window_per_retry) || c_.mmr_window_per_retry < 0 ||
      !std::isfinite(c_.mmr_window_max) || c_.mmr_window_max < c_.mmr_window)
    throw config_error(
        "mmr_window, mmr_window_per_retry must be finite and >= 0, and mmr_window_max >= "
        "mmr_window");
  for (std::size_t i = 0; i < c_.attributes.size(); ++i) {
    const generic_attribute& a = c_.attributes[i];
    const std::string where = "attribute " + std::to_string(i) + " ('" + a.name + "')";
    if (a.name.empty()) throw config_error("attribute " + std::to_string(i) + " has no name");
    for (std::size_t j = 0; j < i; ++j)
      if (c_.attributes[j].name == a.name) throw config_error(where + " is named twice");
    if (!std::isfinite(a.weight)) throw config_error(where + ": weight must be finite");
    if (a.bucketing == attribute_bucketing::ranged && a.tier_width <= 0)
      throw config_error(where + ": tier_width must be >= 1");
    if (a.rule != attribute_rule::none)
      rules_[rule_count_++] = {static_cast<std::uint8_t>(i), a.rule, a.weight};
  }
}

std::string generic_profile::explain_rejection(const query_type& q, const model_type& m,
                                               std::uint32_t retries) const {
  const float gap = std::abs(q.mmr - m.mmr);
  if (gap > window(retries))
    return "MMR gap " + std::to_string(static_cast<long long>(std::lround(gap))) +
           " is wider than the window " +
           std::to_string(static_cast<long long>(std::lround(window(retries)))) + " at retry " +
           std::to_string(retries);
  for (std::uint8_t i = 0; i < rule_count_; ++i) {
    const compiled_rule& r = rules_[i];
    const std::uint32_t mine = q.attributes[r.index], theirs = m.attributes[r.index];
    const std::string& name = c_.attributes[r.index].name;
    if (r.rule == attribute_rule::hard_equal && mine != theirs)
      return "'" + name + "' differs (" + std::to_string(theirs) + ", the attacker's is " +
             std::to_string(mine) + ") and must be equal";
    if (r.rule == attribute_rule::must_differ && mine == theirs)
      return "same '" + name + "' (" + std::to_string(mine) + ") and it must differ";
  }
  return {};
}

row_verdict generic_profile::make_models(const player_row& row,
                                         std::vector<model_type>& out) const {
  model_type m(row.id, static_cast<float>(row.mmr));
  if (!std::isfinite(m.mmr)) return row_verdict::malformed;
  for (std::size_t i = 0; i < generic_attribute_count; ++i) {
    const std::int64_t v = row.attributes[i];
    if (v < 0 || v > std::numeric_limits<std::uint32_t>::max()) return row_verdict::malformed;
    m.attributes[i] = static_cast<std::uint32_t>(v);
  }
  out.push_back(m);
  return row_verdict::eligible;
}

std::string generic_profile::explain_malformed(const player_row& row) const {
  if (!std::isfinite(static_cast<float>(row.mmr))) return "MMR does not fit a 32-bit float";
  for (std::size_t i = 0; i < generic_attribute_count; ++i) {
    const std::int64_t v = row.attributes[i];
    if (v < 0 || v > std::numeric_limits<std::uint32_t>::max())
      return "attr" + std::to_string(i) + " is " + std::to_string(v) +
             " (the generic model holds 0 to 4294967295)";
  }
  return "the model factory rejected the row";
}

std::vector<std::unique_ptr<strategy<generic_profile>>> generic_profile::make_strategies() const {
  std::vector<std::unique_ptr<strategy<generic_profile>>> out;
  for (std::size_t i = 0; i < c_.attributes.size(); ++i) {
    const generic_attribute& a = c_.attributes[i];
    if (a.bucketing == attribute_bucketing::none) continue;
    attribute_strategy_config sc;
    sc.name = a.name;
    sc.attribute = i;
    sc.kind =
        a.bucketing == attribute_bucketing::ranged ? label_kind::ranged : label_kind::distinct;
    sc.hard = a.bucketing == attribute_bucketing::distinct_hard;
    sc.tier_width = a.tier_width;
    out.push_back(std::make_unique<attribute_strategy<generic_profile>>(sc));
  }
  return out;
}

}  // namespace mm
