// Strategies over a numbered integer attribute, set up from configuration:
//  - distinct: the label is the value itself (equal or not: region, game mode);
//  - ranged: the label is floor(value / tier_width) (ordered: league tier).
// Works with any profile that exposes
//   static std::int64_t attribute(const model_type&, std::size_t index);
//   static std::int64_t attribute(const query_type&, std::size_t index);
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "mm/strategies/strategy.hpp"

namespace mm {

struct attribute_strategy_config {
  std::string name;           // stable strategy name (persisted state key)
  std::size_t attribute = 0;  // which attribute of the model / query
  label_kind kind = label_kind::distinct;
  bool hard = false;
  std::int64_t tier_width = 1;  // ranged only: values per tier
};

template <class Profile>
class attribute_strategy final : public strategy<Profile> {
 public:
  using typename strategy<Profile>::model_type;
  using typename strategy<Profile>::query_type;

  explicit attribute_strategy(attribute_strategy_config c) : c_(std::move(c)) {
    if (c_.name.empty()) throw std::invalid_argument("strategy name must not be empty");
    if (c_.kind == label_kind::ranged && c_.tier_width <= 0)
      throw std::invalid_argument("strategy '" + c_.name + "': tier_width must be >= 1");
  }

  std::string name() const override { return c_.name; }
  label_kind kind() const override { return c_.kind; }
  bool hard() const override { return c_.hard; }

  label_value label_of(const model_type& m) const override {
    return label_for(Profile::attribute(m, c_.attribute));
  }
  label_value label_of(const query_type& q) const override {
    return label_for(Profile::attribute(q, c_.attribute));
  }

  std::string describe(label_value v) const override {
    const auto s = static_cast<std::int64_t>(v);
    if (c_.kind == label_kind::distinct) return c_.name + "=" + std::to_string(s);
    return c_.name + "∈[" + std::to_string(s * c_.tier_width) + "," +
           std::to_string((s + 1) * c_.tier_width) + ")";
  }

 private:
  label_value label_for(std::int64_t value) const {
    if (c_.kind == label_kind::distinct) return static_cast<label_value>(value);
    // Floor division, so negative values form tiers of equal width too.
    std::int64_t tier = value / c_.tier_width;
    if (value % c_.tier_width != 0 && value < 0) --tier;
    return static_cast<label_value>(tier);
  }

  attribute_strategy_config c_;
};

}  // namespace mm
